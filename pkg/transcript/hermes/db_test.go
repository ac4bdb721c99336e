package hermes

import (
	"context"
	"database/sql"
	_ "embed"
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

// The fixtures (testdata/schema.sql, testdata/state.sql) are written here to Hermes's published
// schema (see the package doc): a database is built from them for each test.
var (
	//go:embed testdata/schema.sql
	schemaSQL string
	//go:embed testdata/state.sql
	stateSQL string
)

const (
	s1 = "20260210_101500_a1b2c3" // OpenRouter, per-model usage
	s2 = "20260210_103012_d4e5f6" // its continuation after a compression
	s3 = "20260211_090000_0f9e8d" // Telegram, totals only
)

// newDB creates a state.db at path from the SQL scripts, in WAL mode as Hermes keeps it, and
// returns a writer connection to it.
func newDB(tb testing.TB, path string, scripts ...string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	for _, s := range scripts {
		if _, err := db.Exec(s); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

func execT(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatal(err)
	}
}

func srcDB(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
}

func poll(tb testing.TB, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, New(nil), srcDB(path), state)
}

func fixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), DBName)
	newDB(t, path, schemaSQL, stateSQL)
	return path
}

func ofKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// actionsByCall folds a pass's action events by tool use id (prompts by their target) the way the
// writer merges them.
func actionsByCall(evs []event.Event) map[string]event.Action {
	_, merged := transcripttest.Merge(ofKind(evs, event.KindAction))
	out := map[string]event.Action{}
	for _, e := range merged {
		out[transcript.FirstNonEmpty(e.Action.ToolUseID, string(e.Action.Type)+":"+e.Action.Target)] = *e.Action
	}
	return out
}

func TestPoll_Fixture(t *testing.T) {
	path := fixture(t)
	evs, _, st := poll(t, path, nil)
	if st.Lines != 21 || st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v, want the 21 rows read, none malformed", st)
	}
	for _, e := range evs {
		wantProject := "/home/dev/uploader"
		if e.SessionID == s3 {
			wantProject = "" // a gateway session has no directory
		}
		if e.Client != Client || e.Source != Component || e.Project != wantProject {
			t.Fatalf("event %+v: want client hermes and project %q", e, wantProject)
		}
	}

	var started, titles []string
	for _, e := range ofKind(evs, event.KindSession) {
		switch {
		case e.Session.State == event.SessionStarted:
			started = append(started, e.SessionID+"@"+e.Time.Format(time.RFC3339)+"/"+e.Session.Model+"/"+e.Session.ParentSessionID)
		case e.Session.Title != "":
			titles = append(titles, e.Session.Title+map[bool]string{true: " (user)", false: ""}[e.Session.TitleByUser])
		}
	}
	if got := strings.Join(started, " "); got != s1+"@2026-02-10T10:15:00Z/anthropic/claude-sonnet-4.5/ "+
		s2+"@2026-02-10T10:30:12Z/claude-sonnet-4-5/"+s1+" "+s3+"@2026-02-11T09:00:00Z/gpt-5/" {
		t.Errorf("started %s", got)
	}
	if got := strings.Join(titles, "|"); got != "Fix the flaky upload test|Upload flush regression test (user)|Calendar for today" {
		t.Errorf("titles %s", got)
	}

	usage := map[string]*event.TokenUsage{}
	for _, e := range ofKind(evs, event.KindTokenUsage) {
		usage[e.SessionID+" "+e.TokenUsage.Model] = e.TokenUsage
		if e.SessionID == s1 && e.TokenUsage.Model == "anthropic/claude-sonnet-4.5" && !e.Time.Equal(time.Date(2026, 2, 10, 10, 15, 8, 200e6, time.UTC)) {
			t.Errorf("usage at %v, want the row's first_seen", e.Time)
		}
	}
	if len(usage) != 5 {
		t.Fatalf("usage %v, want one per session_model_usage row and the gateway session's totals (5)", usage)
	}
	want := map[string]event.Tokens{
		s1 + " anthropic/claude-sonnet-4.5": {Input: 3000, Output: 1200, CacheRead: 41000, CacheCreation: 6100, Reasoning: 300},
		s1 + " google/gemini-2.5-flash":     {Input: 400, Output: 50},
		s2 + " claude-sonnet-4-5":           {Input: 900, Output: 600, CacheRead: 12000},
		s3 + " gpt-5":                       {Input: 5000, Output: 700, CacheRead: 2000, Reasoning: 200},
		s3 + " gpt-5-mini":                  {Input: 180, Output: 12},
	}
	for k, tok := range want {
		u := usage[k]
		if u == nil || u.Tokens != tok || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.Origin != "transcript" {
			t.Errorf("usage %s: %+v, want %+v, priced, approximate", k, u, tok)
		}
	}
	if u := usage[s3+" gpt-5"]; u != nil && u.CostUSD != 0.0123 {
		t.Errorf("totals usage cost %v, want Hermes's actual cost 0.0123", u.CostUSD)
	}

	acts := actionsByCall(evs)
	check := func(key string, typ event.ActionType, target string, ok bool, errPart string) {
		t.Helper()
		a, found := acts[key]
		switch {
		case !found:
			t.Errorf("no action %s (have %v)", key, acts)
		case a.Type != typ || a.Target != target || a.Success == nil || *a.Success != ok || !strings.Contains(a.Error, errPart):
			t.Errorf("action %s: %+v, want %s %q success %v error with %q", key, a, typ, target, ok, errPart)
		}
	}
	check("call_01", event.ActionReadFile, "tests/test_upload.py", true, "")
	check("call_02", event.ActionSearchText, "sleep( in src", true, "")
	check("call_03", event.ActionRunCommand, "pytest tests/test_upload.py -x -q", false, "exit code 1")
	check("call_04", event.ActionEditFile, "src/uploader/upload.py", true, "")
	check("call_05", event.ActionMCPCall, "github_search_issues", false, "not connected")
	check("call_06", event.ActionSpawnSubagent, "Write a regression test that fails if upload returns before the flush", true, "")
	check("call_07", event.ActionRunCommand, "gcalcli agenda today tomorrow", false, "exit code 127")
	if a := acts["call_03"]; !strings.Contains(a.Output, "file not flushed") || a.DurationMs != 1300 || a.Tool != "terminal" {
		t.Errorf("test run %+v: want the output field, the time from call to result, the raw name", a)
	}
	if a := acts["call_01"]; !strings.Contains(a.Output, "from uploader import upload") {
		t.Errorf("read %+v: want the content field as output", a)
	}
	var prompts []string
	compacted := 0
	for _, a := range acts {
		switch a.Type {
		case event.ActionUserPrompt:
			prompts = append(prompts, a.Target)
		case event.ActionContextCompacted:
			compacted++
		}
	}
	if len(prompts) != 3 || compacted != 1 {
		t.Errorf("prompts %q (the hidden note and the summary are none), %d compactions", prompts, compacted)
	}

	convs := transcripttest.Conversations(evs)
	if got := strings.Join(transcripttest.ConversationLines(convs[s1]), "\n"); got != strings.Join([]string{
		"user\t\tthe upload test fails about one run in five; find out why",
		"thinking\t\tA one-in-five failure smells like a race between the upload ",
		"tool_call\tread_file\ttests/test_upload.py",
		"tool_call\tsearch_files\tsleep( in src",
		"assistant\t\tThe upload waits a fixed 50 ms for the flush. Let me run the",
		"tool_call\tterminal\tpytest tests/test_upload.py -x -q",
		"tool_call\tpatch\tsrc/uploader/upload.py",
		"tool_call\tmcp_github_search_issues\tgithub_search_issues",
		"assistant\t\tReplaced the fixed sleep with an explicit flush wait; the ra",
	}, "\n") {
		t.Errorf("conversation of %s:\n%s", s1, got)
	}
	if got := transcripttest.ConversationLines(convs[s2]); len(got) != 4 || !strings.HasPrefix(got[0], "summary\t\t[CONTEXT COMPACTION]") {
		t.Errorf("conversation of %s: %q", s2, got)
	}
	for _, e := range transcripttest.Messages(evs) {
		if e.Message.Role == event.RoleAssistant && e.SessionID == s1 && e.Message.Model != "anthropic/claude-sonnet-4.5" {
			t.Errorf("assistant message %+v: want the session's model", e.Message)
		}
	}
}

// A pass from the state emits nothing again; a fresh pass emits the same ids; Hermes adding to a
// session's figures and a message emits only those, the usage under the same id.
func TestPoll_Incremental(t *testing.T) {
	path := fixture(t)
	first, state, _ := poll(t, path, nil)
	if again, _, st := poll(t, path, state); len(again) != 0 || st.Lines != 0 {
		t.Errorf("a pass from the state emitted %d events, read %d rows", len(again), st.Lines)
	}
	fresh, _, _ := poll(t, path, nil)
	transcripttest.SameEvents(t, first, fresh)

	db := newDB(t, path)
	execT(t, db, `UPDATE session_model_usage SET input_tokens = input_tokens + 700, output_tokens = output_tokens + 90,
		cache_read_tokens = cache_read_tokens + 12500, last_seen = 1770719500.0 WHERE session_id = ? AND task = ''`, s2)
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'thanks, commit it', 1770719490.0)`, s2)
	evs, _, _ := poll(t, path, state)
	kinds := map[event.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if len(evs) != 3 || kinds[event.KindTokenUsage] != 1 || kinds[event.KindAction] != 1 || kinds[event.KindMessage] != 1 {
		t.Fatalf("after Hermes wrote: %v, want the grown usage, the prompt and its message", kinds)
	}
	u := ofKind(evs, event.KindTokenUsage)[0]
	var before event.Event
	for _, e := range first {
		if e.ID == u.ID {
			before = e
		}
	}
	if before.TokenUsage == nil || u.TokenUsage.Tokens != (event.Tokens{Input: 1600, Output: 690, CacheRead: 24500}) || !u.Time.Equal(before.Time) {
		t.Errorf("grown usage %+v at %v (before %+v at %v): want the same id and time, the new totals", u.TokenUsage, u.Time, before.TokenUsage, before.Time)
	}
}

// A database from a build before session_model_usage (and before cwd, reasoning_content,
// display_kind and _compressed_summary) is read from its totals.
func TestPoll_OldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path, `CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
		system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
		tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0);
	CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
		content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT);`)
	execT(t, db, `INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) VALUES ('20251201_080000_aa11bb', 'cli', 'claude-opus-4-6', 1764576000, 25000, 1800)`)
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20251201_080000_aa11bb', 'user', 'hello', 1764576001)`)
	execT(t, db, `INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('20251201_080000_aa11bb', 'assistant', '', '[{"id":"c1","function":{"name":"web_extract","arguments":{"urls":["https://example.com/a"]}}}]', 1764576002)`)
	evs, _, st := poll(t, path, nil)
	if st.Malformed != 0 || st.Lines != 2 {
		t.Errorf("stats %+v", st)
	}
	u := ofKind(evs, event.KindTokenUsage)
	if len(u) != 1 || u[0].TokenUsage.Tokens != (event.Tokens{Input: 25000, Output: 1800}) || u[0].TokenUsage.CostUSD <= 0 ||
		u[0].ID != event.ID(Client, "usage", "20251201_080000_aa11bb") {
		t.Errorf("usage %+v: want the session's totals, priced", u)
	}
	if a := actionsByCall(evs)["c1"]; a.Type != event.ActionWebFetch || a.Target != "https://example.com/a" || a.Success != nil {
		t.Errorf("call %+v: want a web_fetch of the first url, no outcome yet (arguments as an object)", a)
	}
}

func TestPoll_MalformedRow(t *testing.T) {
	path := fixture(t)
	db := newDB(t, path)
	execT(t, db, `INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, 'assistant', 'checking', '[{"id": "x", "function": ', 1770800410.0)`, s3)
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('no-such-session', 'user', 'orphan', 0)`)
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'developer', 'odd', 1770800411.0)`, s3)
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'still read', 1770800412.0)`, s3)
	evs, _, st := poll(t, path, nil)
	if st.Malformed != 2 || st.Unknown["role developer"] != 1 {
		t.Errorf("stats %+v, want the broken tool_calls and the orphan without a time counted", st)
	}
	var texts []string
	for _, e := range transcripttest.Messages(evs) {
		texts = append(texts, e.Message.Text)
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "|checking|") || !strings.HasSuffix(got, "still read") {
		t.Errorf("messages %s: want the row's text kept and the rows after it read", got)
	}
}

func TestPoll_NotADatabase(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	newDB(t, empty, `CREATE TABLE other (x)`)
	for _, path := range []string{empty, filepath.Join(dir, "absent.db")} {
		p, _ := New(nil).NewParser(srcDB(path), nil)
		if evs, err := p.(transcript.Poller).Poll(context.Background()); err == nil || len(evs) != 0 {
			t.Errorf("%s: %d events, err %v; want an error", path, len(evs), err)
		}
		if string(p.State()) != `{"msg":0}` {
			t.Errorf("state after a failed pass: %s", p.State())
		}
	}
	p, _ := New(nil).NewParser(srcDB(empty), nil)
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record on a database: %v", err)
	}
}

func TestDiscover(t *testing.T) {
	home := t.TempDir()
	for _, dir := range []string{home, filepath.Join(home, "profiles", "work"), filepath.Join(home, "profiles", "empty"), filepath.Join(home, "sessions")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(home, DBName), filepath.Join(home, "profiles", "work", DBName), filepath.Join(home, "sessions", "session_x.json")} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srcs, err := New([]string{home, filepath.Join(home, "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Path != filepath.Join(home, "profiles", "work", DBName) || srcs[1].Path != filepath.Join(home, DBName) ||
		!srcs[0].Database || srcs[0].Client != Client {
		t.Errorf("Discover %+v: want the home's state.db and the work profile's, as databases", srcs)
	}
	dirs := strings.Join(New([]string{home}).WatchDirs(), ",")
	if want := strings.Join([]string{home, filepath.Join(home, "profiles"), filepath.Join(home, "profiles", "empty"), filepath.Join(home, "profiles", "work")}, ","); dirs != want {
		t.Errorf("WatchDirs %s, want %s", dirs, want)
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvHome, "")
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".hermes") {
		t.Errorf("DefaultRoots %v, want ~/.hermes (the same on macOS)", got)
	}
	t.Setenv(EnvHome, "/srv/hermes/profiles/work")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/srv/hermes/profiles/work" {
		t.Errorf("DefaultRoots with %s: %v", EnvHome, got)
	}
}

func TestDecodeContent(t *testing.T) {
	for in, want := range map[string]string{
		"plain text": "plain text",
		"\x00json:" + `[{"type": "text", "text": "what is in this screenshot?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]`: "what is in this screenshot?\n[image]",
		"\x00json:" + `[{"type": "text", "text": "cut short"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO`:                               "cut short\n[image]",
		"\x00json:" + `"a string"`:                                      "a string",
		"\x00json:" + `{"text": {"text": "nested"}, "other": ["text"]}`: "nested",
		"\x00json:": "",
	} {
		if got := decodeContent(in); got != want {
			t.Errorf("decodeContent(%q) = %q, want %q", in, got, want)
		}
	}
}
