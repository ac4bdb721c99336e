package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// analysisHome makes an observer home whose store holds three Claude Code sessions of project
// proj (edits of x.go and x_test.go then go test, each time; s0 also re-reads a file and repeats
// a command) and one Codex session on x.go, analysed unless pending is set.
func analysisHome(t *testing.T, proj string, pending bool) string {
	t.Helper()
	home := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now().Add(-2 * time.Hour)
	var evs []event.Event
	add := func(client, sid, typ, target string, ok bool) {
		e := event.New(event.KindAction, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = fmt.Sprintf("a%d", len(evs)), client, sid, proj, start.Add(time.Duration(len(evs))*time.Second)
		e.Action = &event.Action{Type: event.ActionType(typ), Target: target, Tool: "T", Success: &ok}
		evs = append(evs, e)
	}
	for i := 0; i < 3; i++ {
		sid := fmt.Sprintf("s%d", i)
		add("claude-code", sid, "edit_file", "x.go", true)
		add("claude-code", sid, "edit_file", "x_test.go", true)
		add("claude-code", sid, "run_command", "go test ./x", i != 1)
	}
	add("claude-code", "s0", "read_file", "x.go", true)
	add("claude-code", "s0", "read_file", "x.go", true)
	add("claude-code", "s0", "run_command", "go test ./x", true)
	add("codex", "k1", "read_file", "x.go", true)
	title := event.New(event.KindSession, "test")
	title.ID, title.Client, title.SessionID, title.Project, title.Time = "t0", "claude-code", "s0", proj, start
	title.Session = &event.Session{Title: "fix the x tests", TitleByUser: true}
	evs = append(evs, title)
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if !pending {
		if _, err := (&analysis.Analyzer{DB: st.DB}).Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestDiscover_OutputAndErrors(t *testing.T) {
	proj := t.TempDir()
	home := analysisHome(t, proj, false)
	code, out, errOut := runCtl(t, "--home", home, "discover", "--json", "--since", "all")
	if code != 0 {
		t.Fatalf("discover --json: exit %d: %s", code, errOut)
	}
	var d query.Discovery
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := query.DiscoveryTots{Sessions: 4, UnclassifiedRereads: 1, RepeatedCommands: 1, SharedFiles: 1}
	if d.Totals != want || len(d.Rereads) != 1 || d.Rereads[0].Target != "x.go" || d.Rereads[0].Title != "fix the x tests" || len(d.Repeats) != 1 ||
		d.Repeats[0].Title != "fix the x tests" ||
		d.Repeats[0].Command != "go test ./x" || len(d.Shared) != 1 || strings.Join(d.Shared[0].Clients, ",") != "claude-code,codex" {
		t.Errorf("discover: %+v", d)
	}
	code, out, _ = runCtl(t, "--home", home, "discover")
	if code != 0 || !strings.Contains(out, "4 sessions: 0 stale re-reads, 1 unclassified re-reads") ||
		!strings.Contains(out, "Repeated commands") || !strings.Contains(out, "claude-code,codex") {
		t.Errorf("discover (human): exit %d\n%s", code, out)
	}
	code, out, _ = runCtl(t, "--home", home, "discover", "--client", "nobody")
	if code != 0 || !strings.HasPrefix(out, "0 sessions") {
		t.Errorf("discover --client nobody: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--since", "yesterday"}, {"--limit", "0"}, {"--bogus"}} {
		if code, _, errOut := runCtl(t, append([]string{"--home", home, "discover"}, args...)...); code != ExitUsage {
			t.Errorf("discover %v: exit %d, want %d: %s", args, code, ExitUsage, errOut)
		}
	}
	if code, _, errOut := runCtl(t, "--home", t.TempDir(), "discover"); code != ExitUnavailable || !strings.Contains(errOut, "no store") {
		t.Errorf("discover without a store: exit %d: %s", code, errOut)
	}
	// Not analysed yet: the figures are empty and the note says why.
	pend := analysisHome(t, proj, true)
	code, _, errOut = runCtl(t, "--home", pend, "discover")
	if code != 0 || !strings.Contains(errOut, "4 session(s) are waiting for the writer's analysis") {
		t.Errorf("discover before the analysis: exit %d: %s", code, errOut)
	}
}

func TestPatternsAndScore(t *testing.T) {
	proj := t.TempDir()
	home := analysisHome(t, proj, false)
	code, out, errOut := runCtl(t, "--home", home, "patterns", "--json", "--kind", "co_edit")
	if code != 0 {
		t.Fatalf("patterns: exit %d: %s", code, errOut)
	}
	var ps query.PatternSet
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps.Patterns) != 1 || ps.Patterns[0].Key != "x.go + x_test.go" || ps.Patterns[0].Support != 3 || ps.Patterns[0].Ratio != 1 {
		t.Errorf("co_edit patterns: %+v", ps.Patterns)
	}
	code, out, _ = runCtl(t, "--home", home, "patterns")
	if code != 0 || !strings.Contains(out, "edit_then_test") || !strings.Contains(out, "hot_file") {
		t.Errorf("patterns (human): exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--kind", "nope"}, {"--min-confidence", "2"}} {
		if code, _, _ := runCtl(t, append([]string{"--home", home, "patterns"}, args...)...); code != ExitUsage {
			t.Errorf("patterns %v: exit %d, want %d", args, code, ExitUsage)
		}
	}

	code, out, errOut = runCtl(t, "--home", home, "score", "--json")
	if code != 0 {
		t.Fatalf("score: exit %d: %s", code, errOut)
	}
	var ss []query.SessionScore
	if err := json.Unmarshal([]byte(out), &ss); err != nil {
		t.Fatal(err)
	}
	// s1: its test failed (1 of 3 actions); s0 re-read x.go once and repeated go test once (2 of its 2 reads + 2 commands).
	if len(ss) != 4 || ss[0].SessionID != "s0" || ss[0].Score != 50 || ss[0].Title != "fix the x tests" || ss[1].SessionID != "s1" || ss[1].Score != 67 {
		t.Errorf("scores: %+v", ss)
	}
	code, out, _ = runCtl(t, "--home", home, "score", "s1")
	if code != 0 || !strings.Contains(out, "1 failed") || !strings.Contains(out, "67") {
		t.Errorf("score s1: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCtl(t, "--home", home, "score", "nope"); code != ExitFailure || !strings.Contains(errOut, "no stored session") {
		t.Errorf("score of an unknown session: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCtl(t, "--home", home, "score", "s"); code != ExitFailure || !strings.Contains(errOut, "ambiguous") || !strings.Contains(errOut, "s1") {
		t.Errorf("score of an ambiguous prefix: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCtl(t, "--home", home, "score", "a", "b"); code != ExitUsage {
		t.Errorf("score with two ids: exit %d", code)
	}
}

// TestSuggest writes the block into an existing CLAUDE.md, replaces it on a second run, removes it
// leaving the file as it was, and writes nothing on a dry run.
func TestSuggest(t *testing.T) {
	proj := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	home := analysisHome(t, proj, false)
	path := filepath.Join(proj, "CLAUDE.md")
	orig := "# Project rules\r\n\r\nUse tabs.\r\n" // CRLF, kept as it is
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run") || !strings.Contains(out, "`x.go` and `x_test.go` are usually edited together") {
		t.Fatalf("suggest --dry-run: exit %d: %s\n%s", code, errOut, out)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("dry run wrote the file")
	}
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj); code != 0 {
		t.Fatalf("suggest: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(path)
	s := string(b)
	if !strings.HasPrefix(s, orig+"\n"+suggestBegin) || !strings.HasSuffix(s, suggestEnd+"\n") || strings.Count(s, suggestBegin) != 1 ||
		!strings.Contains(s, "After editing, run the tests") {
		t.Errorf("CLAUDE.md after suggest:\n%s", s)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	// A second run with a stricter threshold replaces the block, once.
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--max", "1"); code != 0 {
		t.Fatalf("suggest --max 1: exit %d: %s", code, errOut)
	}
	b, _ = os.ReadFile(path)
	if strings.Count(string(b), suggestBegin) != 1 || strings.Count(string(b), "\n- ") != 1 {
		t.Errorf("after --max 1:\n%s", b)
	}
	code, _, errOut = runCtl(t, "--home", home, "suggest", "--dir", proj, "--max", "1")
	if code != 0 || !strings.Contains(errOut, "unchanged") {
		t.Errorf("same suggestion twice: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--remove"); code != 0 {
		t.Fatalf("suggest --remove: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("after --remove:\n%q\nwant\n%q", b, orig)
	}
	// The JSON says what happened to each file and which patterns were written.
	code, out, errOut = runCtl(t, "--home", home, "suggest", "--dir", proj, "--max", "2", "--json", "--dry-run")
	var rep suggestReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Patterns) != 2 || len(rep.Files) != 1 ||
		rep.Files[0].Action != "would write" || !strings.HasPrefix(rep.Files[0].Content, orig+"\n"+suggestBegin) {
		t.Errorf("suggest --json --dry-run: exit %d: %s\n%s", code, errOut, out)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("suggest --json --dry-run wrote the file")
	}
	// AGENTS.md and .cursorrules on request; none reach an impossible threshold.
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--file", "agents,cursor"); code != 0 {
		t.Fatalf("suggest --file agents,cursor: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"AGENTS.md", ".cursorrules"} {
		if b, err := os.ReadFile(filepath.Join(proj, f)); err != nil || !strings.HasPrefix(string(b), suggestBegin) {
			t.Errorf("%s: %v\n%s", f, err, b)
		}
	}
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--min-support", "50"); code != ExitFailure || !strings.Contains(errOut, "no pattern") {
		t.Errorf("suggest with support 50: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{"--file", "vim"}, {"--min-confidence", "-1"}, {"--dir", filepath.Join(proj, "missing")}} {
		if code, _, _ := runCtl(t, append([]string{"--home", home, "suggest", "--dir", proj}, args...)...); code != ExitUsage {
			t.Errorf("suggest %v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	// A block whose end marker was deleted by hand is refused, the file left alone.
	broken := "x\n" + suggestBegin + "\n- y\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCtl(t, "--home", home, "suggest", "--dir", proj, "--file", "claude"); code != ExitFailure || !strings.Contains(errOut, "no end marker") {
		t.Errorf("suggest on a broken block: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != broken {
		t.Errorf("broken block rewritten")
	}
}
