package clientconfig

import (
	"bytes"
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxLCSCells bounds the line-matching table; a larger changed region is shown as all removed,
// then all added (config edits are a few lines; only a rewrite would come near it).
const maxLCSCells = 4 << 20

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
}

// Unified returns a unified diff of a and b (empty when they are equal), with the file names
// oldName and newName in its header. The common head and tail are matched first, so a small edit
// to a large file costs a line comparison, not a table over the whole file.
func Unified(oldName, newName string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	s := 0
	for s < len(al)-p && s < len(bl)-p && al[len(al)-1-s] == bl[len(bl)-1-s] {
		s++
	}
	var ops []diffOp
	for _, l := range al[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, middle(al[p:len(al)-s], bl[p:len(bl)-s])...)
	for _, l := range al[len(al)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(&out, ops)
	return out.String()
}

// splitLines splits after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// middle matches two line lists by longest common subsequence.
func middle(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxLCSCells {
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the length of the common subsequence of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	return ops
}

// writeHunks groups the changes with diffContext lines around them; changes closer than twice
// that share a hunk.
func writeHunks(out *strings.Builder, ops []diffOp) {
	for start := 0; start < len(ops); {
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			return
		}
		from := max(first-diffContext, 0)
		end := first
		for last := first; last < len(ops); {
			if ops[last].kind != ' ' {
				end = last + 1
				last++
				continue
			}
			run := last
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-last > 2*diffContext {
				break
			}
			last = run
		}
		to := min(end+diffContext, len(ops))
		aLine, bLine := 1, 1
		for _, op := range ops[:from] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		var aN, bN int
		for _, op := range ops[from:to] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aLine, aN), hunkRange(bLine, bN))
		for _, op := range ops[from:to] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = to
	}
}

// hunkRange writes a hunk's start,count; an empty range names the line before it, as diff does.
func hunkRange(line, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", line-1)
	case 1:
		return fmt.Sprint(line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}
