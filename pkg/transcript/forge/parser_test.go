package forge

import (
	"bytes"
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

//go:embed testdata/schema.sql
var schemaSQL string

// The fixtures (testdata/conversations) are contexts written here to Forge's source (see the
// package doc): a current conversation (system prompt with the working directory, a typed
// prompt and a dropped-in file, reasoning, read, shell failing, patch, an MCP call, a task whose
// result is a subagent's answer, usage with cache reads, a cost, and a last usage Forge only
// estimated) and an older row without the message wrapper.
const (
	mainID  = "0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
	oldID   = "7c6b5a4f-3e2d-4c1b-9a0f-8e7d6c5b4a39"
	created = "2026-03-10 16:42:07.513209"
	updated = "2026-03-10 16:49:52.104877"
)

var (
	createdAt = time.Date(2026, 3, 10, 16, 42, 7, 513209000, time.UTC)
	updatedAt = time.Date(2026, 3, 10, 16, 49, 52, 104877000, time.UTC)
)

// fixture returns a context as Forge stores it: compact JSON.
func fixture(tb testing.TB, id string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conversations", id+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// firstMessages returns the main context with its first n messages.
func firstMessages(tb testing.TB, n int) string {
	tb.Helper()
	var d struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(fixture(tb, mainID)), &d); err != nil {
		tb.Fatal(err)
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = string(d.Messages[i]) // each message as Forge wrote it (json.Marshal would escape <)
	}
	return `{"conversation_id":"` + mainID + `","messages":[` + strings.Join(parts, ",") + `]}`
}

func newDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schemaSQL); err != nil {
		tb.Fatal(err)
	}
	return db
}

// upsert is Forge's upsert_conversation: the row rewritten whole, created_at kept.
func upsert(tb testing.TB, db *sql.DB, id, title, ctx, createdAt, updatedAt string) {
	tb.Helper()
	_, err := db.Exec(`INSERT INTO conversations (conversation_id, title, workspace_id, context, created_at, updated_at)
		VALUES (?, ?, 7135546719238765822, ?, ?, ?) ON CONFLICT(conversation_id) DO UPDATE SET title = excluded.title,
		context = excluded.context, updated_at = excluded.updated_at`, id, title, ctx, createdAt, updatedAt)
	if err != nil {
		tb.Fatal(err)
	}
}

func writeFixtures(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db := newDB(tb, path)
	upsert(tb, db, mainID, "Fix invoice rounding", fixture(tb, mainID), created, updated)
	upsert(tb, db, oldID, "", fixture(tb, oldID), "2025-11-02 08:00:00", "2025-11-02 08:03:10.5")
	return db
}

func poll(tb testing.TB, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, New(nil), transcript.Source{Client: Client, Path: path, Database: true}, state)
}

func filter(evs []event.Event, keep func(*event.Event) bool) []event.Event {
	var out []event.Event
	for i := range evs {
		if keep(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}

func ofSession(evs []event.Event, id string) []event.Event {
	return filter(evs, func(e *event.Event) bool { return e.SessionID == id })
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	return filter(evs, func(e *event.Event) bool { return e.Kind == k })
}

func TestPoll_Conversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	writeFixtures(t, path)
	evs, _, st := poll(t, path, nil)
	if st.Lines != 2 || st.Malformed != 0 {
		t.Errorf("stats %+v, want 2 conversations read", st)
	}
	main := ofSession(evs, mainID)
	for _, e := range main {
		if e.Client != Client || e.Project != "/home/dev/billing" {
			t.Fatalf("event %+v: want client forge and the project the system prompt names", e)
		}
	}
	sess := byKind(main, event.KindSession)
	if len(sess) < 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(createdAt) ||
		sess[0].Session.Cwd != "/home/dev/billing" || sess[0].Session.Model != "claude-sonnet-4-5-20250929" ||
		sess[0].Session.TranscriptPath != path || sess[1].Session.Title != "Fix invoice rounding" {
		t.Fatalf("session events %+v: want started (created_at, cwd, model), then the title", sess)
	}
	usage := byKind(main, event.KindTokenUsage)
	if len(usage) != 3 {
		t.Fatalf("%d usage events, want 3: one per entry with the provider's counts, none for Forge's estimate", len(usage))
	}
	if u := usage[1].TokenUsage; u.Tokens != (event.Tokens{Input: 710, CacheRead: 24700, Output: 64}) ||
		u.Model != "claude-sonnet-4-5-20250929" || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate {
		t.Errorf("second usage %+v: want the prompt net of the cache read, priced", u)
	}
	if u := usage[0].TokenUsage; u.Tokens != (event.Tokens{Input: 24810, Output: 182}) {
		t.Errorf("first usage %+v", u)
	}
	acts := map[event.ActionType]*event.Action{}
	for _, a := range transcripttest.ActionsOf(main) {
		acts[a.Type] = a
	}
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "src/invoice.rs" || a.Tool != "read" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "pub fn total") {
		t.Errorf("read_file %+v", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "cargo test invoice" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "expected 10.01") {
		t.Errorf("run_command %+v: want cargo test, failed with its output as the error", a)
	}
	if a := acts[event.ActionEditFile]; a == nil || a.Tool != "patch" || a.Target != "src/invoice.rs" || a.Success == nil || !*a.Success {
		t.Errorf("edit_file %+v", a)
	}
	if a := acts[event.ActionMCPCall]; a == nil || a.Target != "sentry/resolve_issue" || a.Success == nil || !*a.Success {
		t.Errorf("mcp_call %+v", a)
	}
	if a := acts[event.ActionSpawnSubagent]; a == nil || a.Target != "sage" || a.Output != "No other float money math found." {
		t.Errorf("spawn_subagent %+v: want the agent (arguments kept as a string) and the subagent's answer", a)
	}
	var prompts []string
	for _, e := range byKind(main, event.KindAction) {
		if e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if len(prompts) != 1 || prompts[0] != "the invoice totals are off by one cent, fix the rounding" {
		t.Errorf("prompts %q: want what the user typed (raw_content), not the template nor the dropped-in file", prompts)
	}
	var roles []string
	for _, e := range transcripttest.Conversation(main) {
		roles = append(roles, e.Message.Role)
	}
	want := "user,thinking,assistant,tool_call,tool_call,assistant,tool_call,tool_call,tool_call,assistant"
	if got := strings.Join(roles, ","); got != want {
		t.Errorf("conversation %s, want %s", got, want)
	}
	conv := transcripttest.Conversation(main)
	if !conv[0].Time.Equal(createdAt) || !conv[len(conv)-1].Time.Equal(updatedAt) {
		t.Errorf("first message at %v, last at %v: want created_at, then updated_at", conv[0].Time, conv[len(conv)-1].Time)
	}

	older := ofSession(evs, oldID)
	u := byKind(older, event.KindTokenUsage)
	if len(u) != 1 || u[0].TokenUsage.Tokens != (event.Tokens{Input: 2176, CacheRead: 1024, Output: 250}) ||
		u[0].TokenUsage.Model != "gpt-5" || u[0].TokenUsage.CostUSD <= 0 || older[0].Project != "/home/dev/notes" {
		t.Errorf("older row's usage %+v", u)
	}
}

// A second pass emits nothing; a conversation saved again with more messages emits only them,
// and a call reported without its result comes again with it, at the call's time.
func TestPoll_Incremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path)
	early := "2026-03-10 16:44:30"
	upsert(t, db, mainID, "Fix invoice rounding", firstMessages(t, 6), created, early) // through the shell call
	head, state, _ := poll(t, path, nil)
	if again, st, _ := poll(t, path, state); len(again) != 0 || string(st) != string(state) {
		t.Errorf("an unchanged database: %d events", len(again))
	}
	upsert(t, db, mainID, "Fix invoice rounding", fixture(t, mainID), created, updated)
	tail, state, _ := poll(t, path, state)

	whole := filepath.Join(t.TempDir(), DBName)
	writeFixtures(t, whole)
	all, _, _ := poll(t, whole, nil)
	ids := map[string]bool{}
	for _, e := range ofSession(all, mainID) {
		ids[e.ID] = true
	}
	got := map[string]bool{}
	for _, e := range append(head, tail...) {
		if !ids[e.ID] {
			t.Errorf("the grown conversation made a new id %s (%s)", e.ID, e.Kind)
		}
		got[e.ID] = true
	}
	if len(got) != len(ids) {
		t.Errorf("read in two passes: %d ids, in one %d", len(got), len(ids))
	}
	earlyAt := time.Date(2026, 3, 10, 16, 44, 30, 0, time.UTC)
	var shell *event.Event
	for i, e := range tail {
		if e.Kind == event.KindSession && e.Session.State == event.SessionStarted {
			t.Errorf("started again")
		}
		if e.Message != nil && e.Message.Seq < 6*64 {
			t.Errorf("message %d emitted again", e.Message.Seq/64)
		}
		if e.Action != nil && e.Action.ToolUseID == "toolu_02Shell" {
			shell = &tail[i]
		}
	}
	if shell == nil || shell.Action.Success == nil || *shell.Action.Success || !shell.Time.Equal(earlyAt) {
		t.Errorf("shell's outcome %+v: want failed, at the time the call was given (%v)", shell, earlyAt)
	}

	// A deleted conversation leaves the state.
	if _, err := db.Exec(`DELETE FROM conversations WHERE conversation_id = ?`, mainID); err != nil {
		t.Fatal(err)
	}
	_, state, _ = poll(t, path, state)
	if strings.Contains(string(state), mainID) {
		t.Errorf("state %s keeps a deleted conversation", state)
	}
}

// A row whose context does not decode is counted, costs nothing else, and is read again only
// when it changes.
func TestPoll_Malformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeFixtures(t, path)
	upsert(t, db, "bad-0001", "", `{"messages":[{"message":`, created, updated)
	evs, state, st := poll(t, path, nil)
	if st.Malformed != 1 || st.Lines != 3 || len(ofSession(evs, mainID)) == 0 {
		t.Errorf("stats %+v: want the bad row counted and the others read", st)
	}
	if evs, _, st := poll(t, path, state); len(evs) != 0 || st.Lines != 0 {
		t.Errorf("an unchanged bad row read again: %+v", st)
	}
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Database: true}, nil)
	if _, err := p.Record(0, []byte("x")); err == nil {
		t.Errorf("Record on a database: want an error")
	}
	empty := filepath.Join(t.TempDir(), DBName)
	edb, _ := sql.Open("sqlite3", "file:"+empty)
	edb.Exec(`CREATE TABLE other (x)`)
	edb.Close()
	q, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: empty, Database: true}, nil)
	if _, err := q.(transcript.Poller).Poll(context.Background()); err == nil {
		t.Errorf("a database without the conversations table: want an error")
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	writeFixtures(t, filepath.Join(dir, DBName))
	srcs, err := New([]string{dir, filepath.Join(dir, "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != filepath.Join(dir, DBName) || !srcs[0].Database || srcs[0].Client != Client {
		t.Errorf("Discover: %+v, want the database as a Database source (not its -wal)", srcs)
	}
	if srcs, err := New([]string{filepath.Join(dir, "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

// Two roots that are one directory through a symbolic link (~/forge linked to ~/.forge) list its
// database once, under the first root's path.
func TestDiscover_LinkedRoots(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, ".forge")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFixtures(t, filepath.Join(target, DBName))
	link := filepath.Join(dir, "forge")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	srcs, err := New([]string{link, target}).Discover()
	if err != nil || len(srcs) != 1 || srcs[0].Path != filepath.Join(link, DBName) {
		t.Errorf("Discover: %+v, %v; want the database once, at %s", srcs, err, filepath.Join(link, DBName))
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv("FORGE_CONFIG", "")
	if got := DefaultRoots(); len(got) != 2 || got[0] != filepath.Join(home, "forge") || got[1] != filepath.Join(home, ".forge") {
		t.Errorf("DefaultRoots: %v (Linux and macOS alike)", got)
	}
	t.Setenv("FORGE_CONFIG", "/tmp/forge-base")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/forge-base" {
		t.Errorf("DefaultRoots with FORGE_CONFIG: %v", got)
	}
}
