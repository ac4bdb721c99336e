package devin

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/*.sql) are written here to the format the published readers describe
// (see the package doc): first.sql a session's first part, second.sql what Devin added later.
const session = "quiet-harbor-7f3a"

// newRoot makes a Devin data directory whose cli/sessions.db holds the schema and the given
// fixture files, closed (checkpointed) as Devin leaves it, and returns the root and the database.
func newRoot(tb testing.TB, files ...string) (string, string) {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "devin")
	path := filepath.Join(root, "cli", DBName)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	load(tb, path, append([]string{"schema.sql"}, files...)...)
	return root, path
}

// load runs the fixture files against the database at path and closes it.
func load(tb testing.TB, path string, files ...string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, f := range files {
		q, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := db.Exec(string(q)); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
	}
}

func src(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// usageByNode returns the token usage events by node id (their MessageID).
func usageByNode(evs []event.Event) map[string]*event.TokenUsage {
	out := map[string]*event.TokenUsage{}
	for _, e := range byKind(evs, event.KindTokenUsage) {
		out[e.TokenUsage.MessageID] = e.TokenUsage
	}
	return out
}

func actionsByType(evs []event.Event) map[event.ActionType][]*event.Action {
	out := map[event.ActionType][]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		out[e.Action.Type] = append(out[e.Action.Type], e.Action)
	}
	return out
}

func TestPoll_Session(t *testing.T) {
	_, path := newRoot(t, "first.sql", "second.sql")
	evs, state, stats := transcripttest.Poll(t, New(nil), src(path), nil)
	if string(state) != `{"row":13}` {
		t.Errorf("state %s, want the last row read", state)
	}
	if stats.Malformed != 1 || stats.Lines != 13 {
		t.Errorf("stats %+v: want 13 rows read, the cut one malformed", stats)
	}
	for _, e := range evs {
		if e.Client != Client || e.SessionID != session || e.Project != "/home/dev/webapp" {
			t.Fatalf("event %+v: want client devin, the session and its project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/webapp" ||
		!sess[0].Time.Equal(time.Unix(1781000000, 0)) || sess[1].Session.Title != "Fix the flaky login test" {
		t.Fatalf("session events %+v: want started at created_at in the working directory, then the title", sess)
	}

	u := usageByNode(evs)
	if len(u) != 5 {
		t.Fatalf("%d usage events, want one per assistant node with metrics (5, the cut node none)", len(u))
	}
	want := map[string]event.Tokens{
		"3":  {Input: 12, Output: 310, CacheRead: 18044, CacheCreation: 5210},
		"6":  {Input: 40, Output: 55, CacheRead: 23254},
		"10": {Input: 900, Output: 20},
		"11": {Input: 5, Output: 7},
		"12": {Input: 30, Output: 120, CacheRead: 24000, CacheCreation: 300},
	}
	for node, tok := range want {
		if got := u[node]; got == nil || got.Tokens != tok {
			t.Errorf("node %s usage %+v, want %+v (each bucket as Devin records it, input net of cache)", node, got, tok)
		}
	}
	if a := u["3"]; a.Model != "claude-sonnet-4-5-20250929" || a.CostUSD <= 0 || a.Reliability != event.ReliabilityApproximate {
		t.Errorf("node 3 usage %+v: want the generation model, priced, approximate", a)
	}
	if a := u["10"]; a.Model != "gpt-5" || a.AgentID != "agent-8" || a.CostUSD <= 0 {
		t.Errorf("subagent usage %+v: want gpt-5, the subagent's id, priced", a)
	}
	if a := u["11"]; a.Model != "adaptive" || a.CostUSD != 0 || a.Reliability != event.ReliabilityUnknown {
		t.Errorf("retry usage %+v: want the session's routing mode as model, unknown at cost 0 (the retry counted)", a)
	}

	acts := actionsByType(evs)
	if p := acts[event.ActionUserPrompt]; len(p) != 1 || p[0].Target != "the login test fails one run in ten, find out why" {
		t.Errorf("prompts %+v: want the user's one (the subagent's instruction is none)", p)
	}
	reads := acts[event.ActionReadFile]
	if len(reads) != 2 || reads[0].Target != "test/login.test.ts" || reads[0].Tool != "read_file" || reads[0].ToolUseID != "call_read_1" ||
		!strings.Contains(reads[1].Output, "sleep(50)") || reads[1].Target != "test/login.test.ts" || reads[1].Success != nil {
		t.Errorf("read_file %+v: want the call (path relative to the project) then its result with the output, no outcome", reads)
	}
	runs := acts[event.ActionRunCommand]
	if len(runs) != 2 || runs[0].Target != "npm test -- login" || !strings.Contains(runs[1].Output, "1 failing") {
		t.Errorf("run_command %+v: want npm test and its failing output", runs)
	}
	mcp := acts[event.ActionMCPCall]
	if len(mcp) != 2 || mcp[0].Target != "github/search_issues" || mcp[1].Output != "2 open issues mention a flaky login" {
		t.Errorf("mcp_call %+v: want github/search_issues and its text result", mcp)
	}
	grep := acts[event.ActionSearchText]
	if len(grep) != 1 || grep[0].Target != `sleep\( in test` || grep[0].AgentID != "agent-8" || !grep[0].Sidechain {
		t.Errorf("search_text %+v: want the subagent's grep, pattern in a relative directory", grep)
	}

	transcripttest.CheckConversation(t, evs,
		"user\t\tthe login test fails one run in ten, find out why",
		"thinking\t\tLook at the test first, then run it.",
		"assistant\t\tI'll read the test and run it.",
		"tool_call\tread_file\ttest/login.test.ts",
		"tool_call\tshell_command\tnpm test -- login",
		"tool_call\tmcp__github__search_issues\tgithub/search_issues",
		"[agent-8] user\t\tFind every sleep() call under test/",
		"[agent-8] assistant\t\tFound one, in test/login.test.ts.",
		`[agent-8] tool_call	grep	sleep\\( in test`,
		"assistant\t\tRetrying.",
		"assistant\t\tThe test waits a fixed 50 ms for the login to settle; replac",
	)
}

// A second pass reads only the nodes added since the first, places them in the trees the first
// pass read, and gives every event the id a single pass gives it; a pass with nothing new emits
// nothing.
func TestPoll_Incremental(t *testing.T) {
	_, whole := newRoot(t, "first.sql", "second.sql")
	all, _, _ := transcripttest.Poll(t, New(nil), src(whole), nil)
	ids := map[string]event.Event{}
	for _, e := range all {
		ids[e.ID] = e
	}

	_, path := newRoot(t, "first.sql")
	first, state, _ := transcripttest.Poll(t, New(nil), src(path), nil)
	if len(usageByNode(first)) != 2 {
		t.Fatalf("first pass: %d usage events, want 2", len(usageByNode(first)))
	}
	load(t, path, "second.sql")
	second, state2, stats := transcripttest.Poll(t, New(nil), src(path), state)
	if stats.Lines != 5 {
		t.Errorf("second pass read %d rows, want the 5 new ones", stats.Lines)
	}
	u := usageByNode(second)
	if len(u) != 3 || u["10"].AgentID != "agent-8" || u["3"] != nil {
		t.Errorf("second pass usage %+v: want nodes 10 (the subagent's, placed from the first pass's root), 11 and 12 only", u)
	}
	for _, e := range append(first, second...) {
		if _, ok := ids[e.ID]; !ok {
			t.Errorf("event %s (%s) is not one a single pass emits", e.ID, e.Kind)
		}
	}
	if again, _, _ := transcripttest.Poll(t, New(nil), src(path), state2); len(again) != 0 {
		t.Errorf("a pass with nothing new emitted %d events", len(again))
	}
	// Without a state the database is read again whole, under the same ids.
	fresh, _, _ := transcripttest.Poll(t, New(nil), src(path), nil)
	transcripttest.SameMessageIDs(t, all, fresh)
	if len(fresh) != len(all) {
		t.Errorf("a read without state emitted %d events, the first %d", len(fresh), len(all))
	}
}

func TestPoll_NotDevin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cli", DBName)
	os.MkdirAll(filepath.Dir(path), 0o700)
	db, _ := sql.Open("sqlite3", path)
	db.Exec("CREATE TABLE other (x)")
	db.Close()
	p, _ := New(nil).NewParser(src(path), []byte(`{"row":4}`))
	if evs, err := p.(transcript.Poller).Poll(context.Background()); err == nil || len(evs) != 0 {
		t.Fatalf("poll of a database without Devin's tables: %d events, err %v; want an error", len(evs), err)
	}
	if string(p.State()) != `{"row":4}` {
		t.Errorf("state after a failed pass %s, want it kept", p.State())
	}
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record: %v, want ErrMalformed (a database is polled)", err)
	}
}

func TestDiscover(t *testing.T) {
	root, path := newRoot(t, "first.sql")
	srcs, err := New([]string{root, filepath.Join(t.TempDir(), "absent")}).Discover()
	if err != nil || len(srcs) != 1 || srcs[0].Path != path || !srcs[0].Database || srcs[0].Client != Client {
		t.Fatalf("Discover: %+v, %v; want the one database", srcs, err)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("Discover on an absent root: %+v, %v", srcs, err)
	}
	if got := New([]string{root}).WatchDirs(); len(got) != 1 || got[0] != filepath.Join(root, "cli") {
		t.Errorf("WatchDirs %v", got)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvDirs, "/a/devin"+string(os.PathListSeparator)+"/b/devin")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/a/devin" || got[1] != "/b/devin" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if got := defaultRoots("linux"); len(got) != 2 || got[0] != "/tmp/xdg/devin" || got[1] != filepath.Join(home, ".local", "share", "devin") {
		t.Errorf("linux roots %v", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	if got := defaultRoots("darwin"); len(got) != 2 || got[0] != filepath.Join(home, "Library", "Application Support", "devin") {
		t.Errorf("macOS roots %v", got)
	}
}
