//go:build ignore

// testsummary runs `go test -json` with the arguments it is given and prints what a plain
// `go test` prints (one line per package, the output of the tests that fail, build errors), then
// the tests that were skipped, grouped by the reason they gave, and the totals. It exits with go
// test's exit code. `make test` runs it:
//
//	go run scripts/testsummary.go -race -tags sqlite_fts5 -count=1 ./...
//
// A skip is otherwise silent: a fresh clone without ../shared/corpus, a machine without Chromium
// or the real AI clients, all pass while testing less. $GO names the go command (default go).
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output
}

type key struct{ pkg, test string }

// skipped is one skipped test.
type skipped struct {
	pkg, test, reason string
}

func main() {
	goCmd := cmp.Or(os.Getenv("GO"), "go")
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	// Ctrl-C reaches go test through the terminal's process group: wait for it to stop and report.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)

	s := newSummary(os.Stdout)
	s.read(out)
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fatal(err)
		}
		code = ee.ExitCode()
		if code < 0 {
			code = 1
		}
	}
	s.print()
	os.Exit(code)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testsummary:", err)
	os.Exit(1)
}

type summary struct {
	w                    io.Writer
	buf                  map[key][]string
	skips                []skipped
	passed, failed, runs int
}

func newSummary(w io.Writer) *summary { return &summary{w: w, buf: map[key][]string{}} }

// read prints the stream as go test would without -json, and notes the skips.
func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.w, "%s\n", line) // not an event: go test's own words
			continue
		}
		s.event(e)
	}
}

func (s *summary) event(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		io.WriteString(s.w, e.Output)
	case "output":
		if e.Test == "" {
			if e.Output != "PASS\n" {
				io.WriteString(s.w, e.Output)
			}
			return
		}
		s.buf[k] = append(s.buf[k], e.Output)
	case "pass":
		if e.Test != "" {
			s.passed++
		}
		delete(s.buf, k)
	case "fail":
		if e.Test != "" {
			s.failed++
			for _, l := range s.buf[k] {
				io.WriteString(s.w, l)
			}
		}
		delete(s.buf, k)
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, skipped{e.Package, e.Test, skipReason(s.buf[k])})
		}
		delete(s.buf, k)
	}
}

// logLine is a t.Log or t.Skip line: "    file_test.go:12: message".
var logLine = regexp.MustCompile(`^\s*[\w.\-]+\.go:\d+: (.*)$`)

// skipReason is the message of the test's last log line (t.Skip's), "" when it gave none.
func skipReason(lines []string) string {
	reason := ""
	for _, l := range lines {
		if m := logLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			reason = m[1]
		}
	}
	return strings.TrimPrefix(strings.TrimSpace(reason), "SKIPPED: ")
}

var (
	// pathLike is a word naming a file or directory, or a file name: what differs between the
	// tests skipped for one reason.
	pathLike = regexp.MustCompile(`[^\s()]*(?:/|\\)[^\s():,;]*|\b[\w.\-]+\.(?:jsonl|json|db|toml|sql|txt|log)\b`)
	digits   = regexp.MustCompile(`\b\d+\b`)
)

// group is the reason without what differs from test to test (paths, file names, counts).
func group(reason string) string {
	if reason == "" {
		return "(no reason given)"
	}
	g := pathLike.ReplaceAllStringFunc(reason, func(p string) string {
		// The shared corpus is worth naming: it is what most skips in a fresh clone miss.
		if i := strings.Index(p, "shared/corpus"); i >= 0 {
			if strings.TrimRight(p[i+len("shared/corpus"):], "/") == "" {
				return "../shared/corpus"
			}
			return "../shared/corpus/…"
		}
		return "…"
	})
	g = digits.ReplaceAllString(g, "N")
	if len(g) > 150 {
		g = g[:150] + "…"
	}
	return g
}

func (s *summary) print() {
	if len(s.skips) > 0 {
		type grp struct {
			reason string
			tests  []skipped
		}
		var groups []*grp
		for _, sk := range s.skips {
			r := group(sk.reason)
			i := slices.IndexFunc(groups, func(g *grp) bool { return g.reason == r })
			if i < 0 {
				groups = append(groups, &grp{reason: r})
				i = len(groups) - 1
			}
			groups[i].tests = append(groups[i].tests, sk)
		}
		slices.SortStableFunc(groups, func(a, b *grp) int { return len(b.tests) - len(a.tests) })
		fmt.Fprintf(s.w, "\n%d test(s) skipped, by reason (set what they need to run them):\n", len(s.skips))
		for _, g := range groups {
			var eg []string
			for _, t := range g.tests[:min(3, len(g.tests))] {
				eg = append(eg, t.test+" ("+short(t.pkg)+")")
			}
			more := ""
			if len(g.tests) > 3 {
				more = ", ..."
			}
			fmt.Fprintf(s.w, "  %s (%d): %s%s\n", g.reason, len(g.tests), strings.Join(eg, ", "), more)
		}
		if slices.ContainsFunc(s.skips, func(sk skipped) bool { return strings.Contains(sk.reason, "corpus") }) {
			fmt.Fprintln(s.w, "  The corpus tests read real transcripts from ../shared/corpus beside the checkout, or from $OBSERVER_CORPUS (README: Development).")
		}
	}
	fmt.Fprintf(s.w, "\ntests: %d passed, %d failed, %d skipped\n", s.passed, s.failed, len(s.skips))
}

// short is a package path without the module's.
func short(pkg string) string {
	if i := strings.Index(pkg, "/observer/"); i >= 0 {
		return pkg[i+len("/observer/"):]
	}
	return pkg
}
