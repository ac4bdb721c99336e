package compress

import (
	"strconv"
	"strings"
)

// Diff compression keeps every header line (diff --git, index, ---, +++, @@ with its line numbers
// untouched, apply_patch's *** lines, and whatever else lies outside the hunks, such as a commit
// message) and every added and removed line. Of each run of context lines it keeps the one after
// the change before it and the one before the change after it; the others become one line
// " … N unchanged lines".
//
// Hunks whose header gives line counts ("@@ -12,7 +12,9 @@") end when the counts run out, so a
// removed line that reads "-- x" is not mistaken for a header. Hunks without counts (apply_patch's
// "@@" and "*** Update File:") end at the next line that starts with "@@", "*** " or "diff ".
// A line the scanner cannot place is kept: only context is ever dropped.
func compressDiff(lines []line) []line {
	out := make([]line, 0, len(lines))
	var ctx []line // the context lines since the last change
	afterChange := false
	inHunk, counted := false, false
	oldLeft, newLeft := 0, 0

	// flush writes the pending context run; beforeChange says a change follows it.
	flush := func(beforeChange bool) {
		n := len(ctx)
		head, tail := 0, 0
		if afterChange {
			head = 1
		}
		if beforeChange {
			tail = 1
		}
		if n-head-tail >= 2 {
			out = append(out, ctx[:head]...)
			out = append(out, line{text: " … " + strconv.Itoa(n-head-tail) + " unchanged lines"})
			out = append(out, ctx[n-tail:]...)
		} else {
			out = append(out, ctx...)
		}
		ctx = ctx[:0]
	}
	endHunk := func() {
		flush(false)
		inHunk, afterChange = false, false
	}

	for _, l := range lines {
		t := l.text
		if inHunk {
			switch {
			case counted && oldLeft <= 0 && newLeft <= 0:
				endHunk()
			case !counted && (strings.HasPrefix(t, "@@") || strings.HasPrefix(t, "*** ") || strings.HasPrefix(t, "diff ")):
				endHunk()
			}
		}
		if inHunk {
			c := byte(' ')
			if t != "" {
				c = t[0]
			}
			switch c {
			case '+', '-':
				flush(true)
				out = append(out, l)
				afterChange = true
				if c == '+' {
					newLeft--
				} else {
					oldLeft--
				}
				continue
			case ' ': // an empty line is context whose space an editor trimmed
				ctx = append(ctx, l)
				oldLeft--
				newLeft--
				continue
			case '\\': // "\ No newline at end of file", about the line before
				flush(true)
				out = append(out, l)
				continue
			}
			endHunk()
		}
		out = append(out, l)
		switch {
		case strings.HasPrefix(t, "@@"):
			inHunk = true
			oldLeft, newLeft, counted = hunkCounts(t)
		case strings.HasPrefix(t, "*** Update File:"), strings.HasPrefix(t, "*** Add File:"),
			strings.HasPrefix(t, "*** Move to:"):
			inHunk, counted = true, false
		}
	}
	if inHunk {
		endHunk()
	}
	return out
}

// hunkCounts parses the line counts of a unified hunk header "@@ -a,b +c,d @@" (a count left out
// is 1). ok is false for a header without them, such as apply_patch's "@@ func main()".
func hunkCounts(h string) (oldN, newN int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 3 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	count := func(r string) (int, bool) {
		_, n, found := strings.Cut(r[1:], ",")
		if !found {
			return 1, true
		}
		v, err := strconv.Atoi(n)
		return v, err == nil && v >= 0
	}
	oldN, ok1 := count(f[1])
	newN, ok2 := count(f[2])
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return oldN, newN, true
}
