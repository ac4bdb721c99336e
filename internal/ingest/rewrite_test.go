package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// idLines are lines {"id":"<prefix><i>"} for i in [from, to], each of the same length.
func idLines(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, `{"id":"%s%04d"}`+"\n", prefix, i)
	}
	return b.String()
}

func ids(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%04d", prefix, i))
	}
	return out
}

// setMTime gives path a modification time of its own, as a later write would.
func setMTime(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// A transcript rewritten in place between two passes is read again from its start, whether it
// came back longer (truncated, then written again) or at the same size, and the scan names it; one
// that only grew is read on from its cursor.
func TestScan_RewrittenInPlace(t *testing.T) {
	t.Run("TruncatedAndRewrittenLonger", func(t *testing.T) {
		dir := t.TempDir()
		a := filepath.Join(dir, "a.jsonl")
		write(t, a, idLines("old", 1, 100), false)
		pub := &collect{}
		scan(t, dir, pub, nil)
		// Truncated and written again with 150 new calls before the next pass.
		write(t, a, idLines("new", 1, 150), false)
		sum := scan(t, dir, pub, nil)
		if got, want := strings.Join(pub.ids[100:], ","), strings.Join(ids("new", 1, 150), ","); got != want {
			t.Fatalf("after the rewrite published %d ids: %s", len(pub.ids)-100, got)
		}
		if sum.Rewritten[a] == "" {
			t.Errorf("the rewrite was not reported: %+v", sum.Rewritten)
		}
	})

	t.Run("SameSize", func(t *testing.T) {
		dir := t.TempDir()
		a := filepath.Join(dir, "a.jsonl")
		write(t, a, idLines("old", 1, 400), false)
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		setMTime(t, a, base)
		pub := &collect{}
		scan(t, dir, pub, nil)
		write(t, a, idLines("new", 1, 400), false)
		setMTime(t, a, base.Add(time.Second))
		sum := scan(t, dir, pub, nil)
		if got, want := strings.Join(pub.ids[400:], ","), strings.Join(ids("new", 1, 400), ","); got != want {
			t.Fatalf("after the same-size rewrite published %d ids", len(pub.ids)-400)
		}
		if sum.Rewritten[a] == "" {
			t.Errorf("the rewrite was not reported: %+v", sum.Rewritten)
		}
	})

	t.Run("SameHeadRewrittenLonger", func(t *testing.T) {
		// The first line (a session header longer than the head fingerprint) is the same; what
		// follows is new: the bytes before the cursor tell.
		dir := t.TempDir()
		a := filepath.Join(dir, "a.jsonl")
		header := `{"id":"header","pad":"` + strings.Repeat("h", 2*fingerprintBytes) + `"}` + "\n"
		write(t, a, header+idLines("old", 1, 50), false)
		pub := &collect{}
		scan(t, dir, pub, nil)
		write(t, a, header+idLines("new", 1, 80), false)
		sum := scan(t, dir, pub, nil)
		if got, want := strings.Join(pub.ids[51:], ","), "header,"+strings.Join(ids("new", 1, 80), ","); got != want {
			t.Fatalf("after the rewrite published %s", got)
		}
		if !strings.Contains(sum.Rewritten[a], "before offset") {
			t.Errorf("the rewrite was not reported by the bytes before the cursor: %+v", sum.Rewritten)
		}
	})

	t.Run("AppendedIsNotReadAgain", func(t *testing.T) {
		dir := t.TempDir()
		a := filepath.Join(dir, "a.jsonl")
		pub := &collect{}
		var want []string
		check := func(step string, sum Summary) {
			t.Helper()
			if got := strings.Join(pub.ids, ","); got != strings.Join(want, ",") {
				t.Fatalf("%s: published %d ids, want %d:\n%s", step, len(pub.ids), len(want), got)
			}
			if sum.Rewritten != nil {
				t.Fatalf("%s: reported as rewritten: %+v", step, sum.Rewritten)
			}
		}
		// Small appends, one pass each, across the head fingerprint's length.
		for i := 1; i <= 2*fingerprintBytes/len(idLines("a", 1, 1))+5; i++ {
			write(t, a, idLines("a", i, i), true)
			want = append(want, ids("a", i, i)...)
			check(fmt.Sprintf("append %d", i), scan(t, dir, pub, nil))
		}
		// A line cut by the end of the file, then completed.
		write(t, a, `{"id":"cut`, true)
		check("cut line", scan(t, dir, pub, nil))
		write(t, a, `"}`+"\n", true)
		want = append(want, "cut")
		check("completed line", scan(t, dir, pub, nil))
		// A line longer than the read buffer, one longer than the line limit, then small ones.
		big := `{"id":"big` + strings.Repeat("x", 3<<20) + `"}` + "\n"
		write(t, a, big+idLines("b", 1, 3), true)
		want = append(want, "big"+strings.Repeat("x", 3<<20))
		want = append(want, ids("b", 1, 3)...)
		check("long line", scan(t, dir, pub, nil))
		write(t, a, `{"id":"`+strings.Repeat("y", 3<<20)+`"}`+"\n"+idLines("c", 1, 2), true)
		want = append(want, ids("c", 1, 2)...)
		check("line over the limit", scan(t, dir, pub, func(s *Scanner) { s.MaxLine = 2 << 20 }))
		write(t, a, idLines("d", 1, 1), true)
		want = append(want, ids("d", 1, 1)...)
		check("after the long lines", scan(t, dir, pub, nil))
		// Touched, not changed: read on from the cursor, which has nothing new.
		fi, err := os.Stat(a)
		if err != nil {
			t.Fatal(err)
		}
		setMTime(t, a, fi.ModTime().Add(time.Hour))
		check("touched", scan(t, dir, pub, nil))
	})
}
