package compress

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// runLogs runs the log compressor on s without Content's size checks.
func runLogs(s string) string {
	d := parseDoc(s)
	return d.with(compressLogs(d.lines))
}

func TestContent_LogsFold(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"Identical", "start\nwaiting for db\nwaiting for db\nwaiting for db\nready\n",
			"start\nwaiting for db [×3]\nready\n"},
		{"DigitsDiffer", "GET /health 200 3ms\nGET /health 200 12ms\nGET /health 503 1ms\nPOST /v1/messages 200 812ms\n",
			"GET /health 200 3ms [×3 similar]\nPOST /v1/messages 200 812ms\n"},
		{"Timestamps", "2025-03-14T10:22:01.003Z INFO tick\n2025-03-14T10:22:02.117Z INFO tick\n2025-03-14T10:22:03.230Z WARN slow tick\n",
			"2025-03-14T10:22:01.003Z INFO tick [×2 similar]\n2025-03-14T10:22:03.230Z WARN slow tick\n"},
		{"IdenticalInsideSimilar", "retry 1\nretry 1\nretry 2\n", "retry 1 [×3 similar]\n"},
		{"NotAdjacent", "a\nb\na\nb\n", "a\nb\na\nb\n"},
		{"BlankRuns", "compiling\n\n\n\ndone\n", "compiling\n\ndone\n"},
		{"NoTrailingNewline", "x\nx", "x [×2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runLogs(tc.in); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

var foldCount = regexp.MustCompile(` \[×(\d+)(?: similar)?\]$`)

// countLogLines returns the number of input lines a compressed log stands for: a folded line
// counts its repeats, an omission marker its omitted lines.
func countLogLines(tb testing.TB, out string) int {
	tb.Helper()
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(l, "… "); ok {
			k, err := strconv.Atoi(strings.Fields(rest)[0])
			if err != nil {
				tb.Fatalf("bad marker %q", l)
			}
			n += k
			continue
		}
		if m := foldCount.FindStringSubmatch(l); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
			continue
		}
		n++
	}
	return n
}

func TestContent_LogsTestRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string // lines the output holds
	}{
		{"GoTest", sampleGoTestLog(), []string{
			"=== RUN   TestStore_Put/case_001", "--- PASS: TestStore_Put/case_020 (0.20s)",
			"[line 122] --- FAIL: TestStore_Put/case_060_locked (1.20s)",
			"    bus_test.go:41: waiting for the server [×30]",
			"2025-03-14T10:22:00.000Z retrying connection to nats://127.0.0.1:4222 (attempt 1) [×25 similar]",
			"ok  \tgithub.com/observerhq/observer/pkg/mod01\t0.101s [×70 similar]",
			"FAIL\tgithub.com/observerhq/observer/pkg/store\t3.412s", "FAIL",
		}},
		{"Npm", sampleNpmLog(), []string{
			"npm WARN deprecated inflight@1.0.0: This module is not supported, and leaks memory. [×12 similar]",
			"PASS src/components/widget1.test.tsx (1.013 s) [×50 similar]", "FAIL src/api/client.test.ts",
			"    Received: 1", "Tests:       1 failed, 612 passed, 613 total",
		}},
		{"Pytest", samplePytestLog(), []string{
			"tests/test_invoice.py::test_rate_1 PASSED [  0%] [×23 similar]", "tests/test_invoice.py::test_rate_117 FAILED [ 48%]",
			"E       AssertionError: assert Decimal('0.0030') == Decimal('0.003')",
			"========================= 1 failed, 239 passed in 2.31s =========================",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := Content(KindLogs, tc.in)
			if !ok {
				t.Fatal("not compressed")
			}
			for _, w := range tc.want {
				if !strings.Contains("\n"+out+"\n", "\n"+w+"\n") {
					t.Errorf("lost %q; output:\n%s", w, out)
				}
			}
			if in, got := strings.Count(tc.in, "\n"), countLogLines(t, out); got != in {
				t.Errorf("output stands for %d lines, input has %d:\n%s", got, in, out)
			}
			t.Logf("%s: %d → %d bytes", tc.name, len(tc.in), len(out))
		})
	}
}

// word spells i in letters, so that lines built from it do not fold as similar.
func word(i int) string {
	s := ""
	for {
		s = string(rune('a'+i%26)) + s
		i /= 26
		if i == 0 {
			return s
		}
	}
}

func TestContent_LogsHeadTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		switch {
		case i%10 == 0:
			fmt.Fprintf(&b, "ERROR step %s failed: connection reset\n", word(i))
		case i == 505:
			b.WriteString("panic: runtime error: index out of range [5] with length 3\n")
		default:
			fmt.Fprintf(&b, "step %s done\n", word(i))
		}
	}
	in := b.String()
	out, ok := Content(KindLogs, in)
	if !ok {
		t.Fatal("not compressed")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	inLines := strings.Split(in, "\n")
	if got, want := strings.Join(lines[:logsHeadLines], "\n"), strings.Join(inLines[:logsHeadLines], "\n"); got != want {
		t.Errorf("head:\n%s\nwant:\n%s", got, want)
	}
	if got, want := strings.Join(lines[len(lines)-logsTailLines:], "\n"), strings.Join(inLines[1000-logsTailLines:1000], "\n"); got != want {
		t.Errorf("tail:\n%s\nwant:\n%s", got, want)
	}
	// The middle is lines 41..940: 90 error lines and the panic, of which the first 40 stay.
	mid := lines[logsHeadLines : len(lines)-logsTailLines]
	if want := "… 809 lines omitted …"; mid[0] != want {
		t.Errorf("marker %q, want %q", mid[0], want)
	}
	if want := "[line 50] ERROR step by failed: connection reset"; mid[1] != want {
		t.Errorf("first kept %q, want %q", mid[1], want)
	}
	if len(mid) != 1+logsMaxKept+1 || mid[len(mid)-1] != "… 51 more error and warning lines omitted …" {
		t.Errorf("middle:\n%s", strings.Join(mid, "\n"))
	}
	for _, l := range mid[1 : 1+logsMaxKept] {
		num, text, _ := strings.Cut(strings.TrimPrefix(l, "[line "), "] ")
		n, err := strconv.Atoi(num)
		if err != nil || inLines[n-1] != text {
			t.Errorf("%q is not line %s of the input", l, num)
		}
	}
	if got := countLogLines(t, out); got != 1000 {
		t.Errorf("output stands for %d lines, want 1000", got)
	}
}

// A log file read with Claude Code's Read tool folds on the text after the line numbers and
// keeps the number of the first line of each run.
func TestContent_LogsReadPrefixes(t *testing.T) {
	in := withReadPrefixes(samplePytestLog(), "\t")
	out, ok := Content(KindLogs, in)
	if !ok {
		t.Fatal("not compressed")
	}
	for _, want := range []string{
		"     6\ttests/test_invoice.py::test_rate_1 PASSED [  0%] [×23 similar]",
		"   122\ttests/test_invoice.py::test_rate_117 FAILED [ 48%]",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("lost %q:\n%s", want, out)
		}
	}
}
