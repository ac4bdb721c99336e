package clientconfig

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies a unified diff to a, checking every context and removed line.
func applyUnified(tb testing.TB, a []byte, diff string) []byte {
	tb.Helper()
	if diff == "" {
		return a
	}
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		tb.Fatalf("no diff header:\n%s", diff)
	}
	src := splitLines(a)
	var out []string
	pos := 0 // next line of src to copy
	var last *string
	for _, l := range lines[2:] {
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ -"):
			// -s,n: n old lines from line s; an empty range (n = 0) sits after line s.
			r := strings.Split(strings.Fields(l)[1][1:], ",")
			start, _ := strconv.Atoi(r[0])
			if len(r) == 1 || r[1] != "0" {
				start--
			}
			if start < pos || start > len(src) {
				tb.Fatalf("hunk %q out of order", l)
			}
			out = append(out, src[pos:start]...)
			pos = start
		case l == "\\ No newline at end of file\n":
			if last == nil {
				tb.Fatal("no-newline marker without a line")
			}
			*last = strings.TrimSuffix(*last, "\n")
		case l[0] == ' ' || l[0] == '-':
			if pos >= len(src) || strings.TrimSuffix(src[pos], "\n") != strings.TrimSuffix(l[1:], "\n") {
				tb.Fatalf("line %d: diff says %q, file has %q", pos+1, l, src[min(pos, len(src)-1)])
			}
			if l[0] == ' ' {
				out = append(out, src[pos])
				last = &out[len(out)-1]
			} else {
				last = new(string)
			}
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
			last = &out[len(out)-1]
		default:
			tb.Fatalf("bad diff line %q", l)
		}
	}
	out = append(out, src[pos:]...)
	return []byte(strings.Join(out, ""))
}

func TestUnified_Simple(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n"
	want := `--- old
+++ new
@@ -2,9 +2,10 @@
 b
 c
 d
-e
+E
 f
 g
 h
 i
 j
+k
`
	if got := Unified("old", "new", []byte(a), []byte(b)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := Unified("old", "new", []byte(a), []byte(a)); got != "" {
		t.Errorf("equal texts give %q", got)
	}
}

func TestUnified_NoNewlineAndEmpty(t *testing.T) {
	for _, c := range [][2]string{{"", "x\n"}, {"x\n", ""}, {"a\nb", "a\nb\n"}, {"a\nb\n", "a\nc"}, {"{}", "{\n  \"a\": 1\n}\n"}} {
		d := Unified("a", "b", []byte(c[0]), []byte(c[1]))
		if got := applyUnified(t, []byte(c[0]), d); string(got) != c[1] {
			t.Errorf("%q -> %q: diff gives %q\n%s", c[0], c[1], got, d)
		}
	}
}

// TestUnified_RoundTrip checks on random edits that the diff turns the old text into the new
// one, and agrees with GNU diff on what changed where GNU diff is installed.
func TestUnified_RoundTrip(t *testing.T) {
	gnu, _ := exec.LookPath("diff")
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var a []string
		for range r.IntN(40) {
			a = append(a, fmt.Sprintf("line %d\n", r.IntN(12)))
		}
		b := append([]string(nil), a...)
		for range r.IntN(6) + 1 {
			switch k := r.IntN(3); {
			case k == 0 || len(b) == 0:
				at := r.IntN(len(b) + 1)
				b = append(b[:at], append([]string{fmt.Sprintf("new %d\n", r.IntN(5))}, b[at:]...)...)
			case k == 1:
				at := r.IntN(len(b))
				b = append(b[:at], b[at+1:]...)
			default:
				b[r.IntN(len(b))] = fmt.Sprintf("changed %d\n", r.IntN(5))
			}
		}
		as, bs := []byte(strings.Join(a, "")), []byte(strings.Join(b, ""))
		if r.IntN(4) == 0 && len(bs) > 0 {
			bs = bs[:len(bs)-1]
		}
		d := Unified("a", "b", as, bs)
		if got := applyUnified(t, as, d); !bytes.Equal(got, bs) {
			t.Fatalf("case %d: diff gives\n%q\nwant\n%q\n%s", i, got, bs, d)
		}
		if gnu != "" && i < 40 {
			dir := t.TempDir()
			pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeFile(t, pa, as, 0o600)
			writeFile(t, pb, bs, 0o600)
			out, _ := exec.Command(gnu, "-u", pa, pb).Output()
			if (len(out) == 0) != (d == "") {
				t.Fatalf("case %d: GNU diff and Unified disagree on whether the texts differ", i)
			}
			if removedAdded(string(out)) != removedAdded(d) && countChanged(string(out)) < countChanged(d) {
				t.Errorf("case %d: Unified changes more lines than GNU diff:\n%s\nGNU:\n%s", i, d, out)
			}
		}
	}
}

func removedAdded(d string) string {
	var b strings.Builder
	for _, l := range strings.Split(d, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func countChanged(d string) int { return strings.Count(removedAdded(d), "\n") }

func TestUnified_LargeFileSmallEdit(t *testing.T) {
	var a strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&a, "  \"key%d\": %d,\n", i, i)
	}
	old := []byte(a.String())
	neu := bytes.Replace(old, []byte("\"key100000\": 100000,\n"), []byte("\"key100000\": 100000,\n  \"observer\": 1,\n"), 1)
	d := Unified("a", "b", old, neu)
	if !strings.Contains(d, "@@ -99999,6 +99999,7 @@") || countChanged(d) != 1 {
		t.Errorf("diff:\n%s", d)
	}
}
