package openhands

import (
	"context"
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

// The fixture (testdata/conversations) is a conversation written here to the SDK's format (see
// the package doc): a prompt with the context the SDK adds, a test run failing by its exit code,
// two parallel calls of one response (a file view and a grep), an edit that failed then one that
// worked, an MCP call the user rejected, the finish tool; base_state.json with the usage of the
// six responses (cache reads and writes inside prompt_tokens, reasoning inside completion_tokens)
// and a condenser's response that produced no event.
const convID = "3f8a2c71d4e94b1a9c0e5f6a7b8c9d01"

func init() {
	// The fixture's naive timestamps are read in a zone one hour east of UTC, as on a machine there.
	localZone = time.FixedZone("UTC+1", 3600)
}

func fixtureDir(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "conversations", convID))
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// copyConv copies the fixture conversation to a temporary root and returns the copy's directory;
// keep limits the event files copied to the first keep (all when negative).
func copyConv(tb testing.TB, keep int) string {
	tb.Helper()
	src := fixtureDir(tb)
	dst := filepath.Join(tb.TempDir(), "conversations", convID)
	if err := os.MkdirAll(filepath.Join(dst, EventsDirName), 0o755); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, BaseStateName))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, BaseStateName), data, 0o644); err != nil {
		tb.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(src, EventsDirName))
	if err != nil {
		tb.Fatal(err)
	}
	for i, e := range ents {
		if keep >= 0 && i >= keep {
			break
		}
		copyEvent(tb, dst, e.Name())
	}
	return dst
}

func copyEvent(tb testing.TB, dst, name string) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir(tb), EventsDirName, name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, EventsDirName, name), data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func eventsSrc(conv string) transcript.Source {
	return transcript.Source{Client: Client, Path: filepath.Join(conv, EventsDirName), SessionID: convID, Database: true}
}

func stateSrc(conv string) transcript.Source {
	return transcript.Source{Client: Client, Path: filepath.Join(conv, BaseStateName), SessionID: convID, Document: true}
}

func pollEvents(tb testing.TB, conv string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, New(nil), eventsSrc(conv), state)
}

func readState(tb testing.TB, conv string, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := New(nil).NewParser(stateSrc(conv), state)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(conv, BaseStateName))
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		tb.Fatal(err)
	}
	transcripttest.CheckEvents(tb, evs)
	return evs, p.State()
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

// at is the fixture's event i time: its naive timestamp 10:15:<2i>.<101234+1111i> read at UTC+1.
func at(i int) time.Time {
	return time.Date(2026, 3, 4, 9, 15, 2*i, (101234+1111*i)*1000, time.UTC)
}

func TestDiscover(t *testing.T) {
	root := filepath.Join("testdata", "conversations")
	srcs, err := New([]string{root, filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != convID || !srcs[0].Document || filepath.Base(srcs[0].Path) != BaseStateName ||
		!srcs[1].Database || filepath.Base(srcs[1].Path) != EventsDirName || !filepath.IsAbs(srcs[1].Path) {
		t.Fatalf("Discover: %+v, want base_state.json as a document and events/ as a database source", srcs)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
	dirs := New([]string{root}).WatchDirs()
	if len(dirs) != 2 || dirs[1] != filepath.Join(root, convID, EventsDirName) {
		t.Errorf("WatchDirs: %v, want the root and the conversation's events directory", dirs)
	}
}

func TestPoll_Events(t *testing.T) {
	evs, _, st := pollEvents(t, fixtureDir(t), nil)
	if st.Lines != 16 || st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v, want 16 event files, none malformed or unknown", st)
	}
	for _, e := range evs {
		if e.Client != Client || e.SessionID != convID || e.Project != "/nonexistent-observer/api" {
			t.Fatalf("event %+v: want client openhands, the conversation, the project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 1 || !sess[0].Time.Equal(at(0)) || sess[0].Session.Cwd != "/nonexistent-observer/api" ||
		sess[0].Session.Model != "anthropic/claude-sonnet-4-5-20250929" || sess[0].Session.State != event.SessionStarted {
		t.Fatalf("session %+v: want started at the first event (naive time read in the local zone), cwd and model from base_state.json", sess)
	}
	// Each call's action comes twice under one id: the call, then its result.
	final := map[string]*event.Action{}
	var order []string
	for _, e := range byKind(evs, event.KindAction) {
		if _, seen := final[e.ID]; !seen {
			order = append(order, e.ID)
			final[e.ID] = &event.Action{}
		}
		merge(final[e.ID], e.Action)
	}
	var got []string
	for _, id := range order {
		a := final[id]
		s := string(a.Type) + " " + a.Target
		if a.Success != nil && !*a.Success {
			s += " FAILED: " + a.Error
		}
		got = append(got, s)
	}
	want := []string{
		"user_prompt The /health endpoint returns 500 since the last deploy. Fix it.",
		"run_command pytest tests/test_health.py -q FAILED: F\n1 failed in 0.31s",
		"read_file app/health.py",
		"search_text db.ping in app",
		"edit_file app/health.py FAILED: No replacement was performed, old_str `    await db.ping()\n    return` did not appear verbatim in /nonexistent-observer/api/app/health.py.",
		"mcp_call fetch FAILED: User rejected the action",
		"edit_file app/health.py",
		"task_complete Fixed: /health now returns ok=false instead of a 500 when the database is down.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, id := range order[1:] {
		if final[id].Success == nil {
			t.Errorf("action %+v has no outcome", final[id])
		}
	}
	if a := final[event.ID(Client, "action", convID, "toolu_01Kd8mPz2R")]; a == nil || !strings.Contains(a.Output, "await db.ping()") || a.Tool != "file_editor" {
		t.Errorf("view %+v: want the file's content as output", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Message.Role == event.RoleUser && strings.Contains(e.Message.Text, "REPOSITORY_INFO") {
			t.Errorf("the context the SDK adds is no part of the prompt: %q", e.Message.Text)
		}
	}
	if s := strings.Join(roles, ","); s != "user,thinking,assistant,tool_call,assistant,tool_call,tool_call,tool_call,assistant,tool_call,tool_call,tool_call" {
		t.Errorf("message roles %s", s)
	}
}

// merge folds a later event of an action into what the store keeps (pkg/store: the first
// non-empty target and type, the latest outcome).
func merge(dst, src *event.Action) {
	if dst.Type == "" || dst.Type == event.ActionUnknown {
		dst.Type = src.Type
	}
	if dst.Target == "" {
		dst.Target = src.Target
	}
	if dst.Tool == "" {
		dst.Tool = src.Tool
	}
	if src.Success != nil {
		dst.Success = src.Success
	}
	if src.Error != "" {
		dst.Error = src.Error
	}
	if src.Output != "" {
		dst.Output = src.Output
	}
}

func TestPoll_RereadAndAppend(t *testing.T) {
	conv := copyConv(t, 8)
	first, state, _ := pollEvents(t, conv, nil)
	if again, _, _ := pollEvents(t, conv, state); len(again) != 0 {
		t.Errorf("a pass with nothing new emitted %d events", len(again))
	}
	// The SDK is writing event 8: caught half-written, it is left for the next pass.
	name := "event-00008-0f1e2d3c-4b5a-4968-8776-000000000009.json"
	full, err := os.ReadFile(filepath.Join(fixtureDir(t), EventsDirName, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conv, EventsDirName, name), full[:len(full)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	evs, state2, st := pollEvents(t, conv, state)
	if len(evs) != 0 || st.Malformed != 0 || string(state2) != string(state) {
		t.Errorf("a half-written newest file: %d events, %+v, state %s; want it left for the next pass", len(evs), st, state2)
	}
	copyEvent(t, conv, name)
	copyEvent(t, conv, "event-00009-0f1e2d3c-4b5a-4968-8776-000000000010.json")
	evs, _, st = pollEvents(t, conv, state)
	if st.Lines != 2 || len(byKind(evs, event.KindAction)) != 2 || len(byKind(evs, event.KindSession)) != 0 {
		t.Errorf("after two new files: %+v, %d events; want the two files' actions only", st, len(evs))
	}
	fresh, _, _ := pollEvents(t, conv, nil)
	ids := map[string]bool{}
	for _, e := range append(first, evs...) {
		ids[e.ID] = true
	}
	for _, e := range fresh {
		if !ids[e.ID] {
			t.Errorf("a read without state gave a new id for %+v", e)
		}
	}
}

func TestPoll_MalformedFile(t *testing.T) {
	conv := copyConv(t, -1)
	bad := filepath.Join(conv, EventsDirName, "event-00005-0f1e2d3c-4b5a-4968-8776-000000000006.json")
	if err := os.WriteFile(bad, []byte(`{"id": "x", "kind": `), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, _, st := pollEvents(t, conv, nil)
	if st.Lines != 16 || st.Malformed != 1 {
		t.Errorf("stats %+v, want 16 files read, the damaged one malformed", st)
	}
	if n := len(byKind(evs, event.KindAction)); n != 14 {
		t.Errorf("%d action events, want all but the damaged call's (grep: its result alone)", n)
	}
	p, _ := New(nil).NewParser(eventsSrc(conv), nil)
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record on an events directory: %v", err)
	}
	gone, _ := New(nil).NewParser(eventsSrc(filepath.Join(t.TempDir(), "gone")), nil)
	if evs, err := gone.(transcript.Poller).Poll(context.Background()); err != nil || len(evs) != 0 {
		t.Errorf("a conversation deleted meanwhile: %v, %v", evs, err)
	}
}

func TestStateParser_Usage(t *testing.T) {
	conv := copyConv(t, -1)
	evs, state := readState(t, conv, nil)
	if len(evs) != 7 {
		t.Fatalf("%d usage events, want one per response (6 of the agent, 1 of the condenser)", len(evs))
	}
	byResp := map[string]event.Event{}
	for _, e := range evs {
		byResp[e.TokenUsage.MessageID] = e
		if e.Kind != event.KindTokenUsage || e.SessionID != convID || e.Project != "/nonexistent-observer/api" {
			t.Fatalf("event %+v", e)
		}
	}
	r2 := byResp["chatcmpl-r2"]
	if u := r2.TokenUsage; u.Tokens != (event.Tokens{Input: 130, Output: 188, CacheRead: 8300, CacheCreation: 880, Reasoning: 40}) ||
		u.Model != "anthropic/claude-sonnet-4-5-20250929" || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate ||
		!r2.Time.Equal(at(4)) || r2.ID != event.ID(Client, "usage", convID, "agent", "chatcmpl-r2") {
		t.Errorf("r2 %+v at %v: want the prompt net of both cache figures, reasoning inside output, at its first action", u, r2.Time)
	}
	if u := byResp["chatcmpl-r1"].TokenUsage; u.Tokens != (event.Tokens{Input: 120, Output: 96, CacheCreation: 8300}) {
		t.Errorf("r1 %+v", u.Tokens)
	}
	var total event.Tokens
	for _, e := range evs {
		if e.TokenUsage.Model != "openai/gpt-5-mini" {
			total.Input += e.TokenUsage.Input
			total.Output += e.TokenUsage.Output
			total.CacheRead += e.TokenUsage.CacheRead
			total.CacheCreation += e.TokenUsage.CacheCreation
		}
	}
	// accumulated_token_usage: prompt 62840 (cache 50320 read, 11650 written), completion 886.
	if total.Input+total.CacheRead+total.CacheCreation != 62840 || total.Output != 886 || total.Input != 870 {
		t.Errorf("agent totals %+v: each response once, summing to accumulated_token_usage", total)
	}
	c := byResp["resp_0c4e1d2a9b"]
	if u := c.TokenUsage; u.Tokens != (event.Tokens{Input: 5200, Output: 410, Reasoning: 256}) || u.CostUSD <= 0 || !c.Time.Equal(at(0)) {
		t.Errorf("condenser %+v at %v: want its figures, at the first event (its response produced none)", u, c.Time)
	}
	if again, _ := readState(t, conv, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	// A seventh response of the agent: only it is new.
	path := filepath.Join(conv, BaseStateName)
	data, _ := os.ReadFile(path)
	doc := strings.Replace(string(data), `"per_turn_token":11908,"response_id":"chatcmpl-r6"}]`,
		`"per_turn_token":11908,"response_id":"chatcmpl-r6"},{"model":"anthropic/claude-sonnet-4-5-20250929","prompt_tokens":12000,"completion_tokens":50,"cache_read_tokens":11650,"cache_write_tokens":0,"reasoning_tokens":0,"response_id":"chatcmpl-r7"}]`, 1)
	if doc == string(data) {
		t.Fatal("fixture edit did not apply")
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, state2 := readState(t, conv, state)
	if len(evs) != 1 || evs[0].TokenUsage.MessageID != "chatcmpl-r7" || evs[0].TokenUsage.Input != 350 || !evs[0].Time.Equal(at(14)) {
		t.Errorf("after a new response: %+v; want it alone, at the previous response's time (no event of its own yet)", evs)
	}
	p, _ := New(nil).NewParser(stateSrc(conv), state2)
	for _, bad := range []string{`{"stats": {"usage_to_metrics": {"agent": {"token_usages": [`, "", `[]`} {
		if evs, err := p.Record(0, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p.State()) != string(state2) {
		t.Errorf("a malformed read changed the state: %s", p.State())
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv("OPENHANDS_CONVERSATIONS_DIR", "/tmp/oh/convs")
	t.Setenv("OPENHANDS_PERSISTENCE_DIR", "/tmp/oh/persist")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/oh/convs" {
		t.Errorf("with OPENHANDS_CONVERSATIONS_DIR: %v", got)
	}
	t.Setenv("OPENHANDS_CONVERSATIONS_DIR", "")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/oh/persist/conversations" {
		t.Errorf("with OPENHANDS_PERSISTENCE_DIR: %v", got)
	}
	t.Setenv("OPENHANDS_PERSISTENCE_DIR", "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".openhands", "conversations") {
		t.Errorf("default (Linux and macOS): %v", got)
	}
}

// A missing event file with later ones written is waited for a while, then passed over: the
// conversation does not stall at it.
func TestPoll_Gap(t *testing.T) {
	conv := copyConv(t, -1)
	name := "event-00005-0f1e2d3c-4b5a-4968-8776-000000000006.json"
	if err := os.Remove(filepath.Join(conv, EventsDirName, name)); err != nil {
		t.Fatal(err)
	}
	evs, state, st := pollEvents(t, conv, nil)
	if st.Lines != 5 || len(st.Unknown) != 0 {
		t.Errorf("a gap just made: %+v; want the 5 files before it read, the gap waited for", st)
	}
	old := time.Now().Add(-2 * gapWait)
	ents, err := os.ReadDir(filepath.Join(conv, EventsDirName))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.Chtimes(filepath.Join(conv, EventsDirName, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	more, state, st := pollEvents(t, conv, state)
	if st.Lines != 10 || st.Unknown["event files missing"] != 1 || len(byKind(more, event.KindAction)) == 0 {
		t.Errorf("a gap older than %v: %+v, %d events; want the 10 files after it read", gapWait, st, len(more))
	}
	if again, _, _ := pollEvents(t, conv, state); len(again) != 0 {
		t.Errorf("a pass after the gap was passed: %d events", len(again))
	}
	if len(evs)+len(more) == 0 {
		t.Error("no events")
	}
}

// A usage parser made for a later change of base_state.json (one per change) reads only the event
// files added since the last one, not the conversation's every file again.
func TestStateParser_ReadsNewEventFiles(t *testing.T) {
	conv := copyConv(t, -1)
	a := New(nil)
	read := func(state []byte) ([]event.Event, []byte) {
		t.Helper()
		p, err := a.NewParser(stateSrc(conv), state)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(conv, BaseStateName))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := p.Record(0, data)
		if err != nil {
			t.Fatal(err)
		}
		return evs, p.State()
	}
	_, state := read(nil)
	// The files read are gone (a parser reading them again would find no time at all), and a
	// new one holds the seventh response's event.
	ents, _ := os.ReadDir(filepath.Join(conv, EventsDirName))
	for _, e := range ents {
		if err := os.Remove(filepath.Join(conv, EventsDirName, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	ev := `{"id":"0f1e2d3c-4b5a-4968-8776-000000000017","timestamp":"2026-03-04T10:16:00.000001","source":"agent","llm_message":{"role":"assistant","content":[{"type":"text","text":"Done."}]},"llm_response_id":"chatcmpl-r7","kind":"MessageEvent"}`
	if err := os.WriteFile(filepath.Join(conv, EventsDirName, "event-00016-0f1e2d3c-4b5a-4968-8776-000000000017.json"), []byte(ev), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(conv, BaseStateName)
	data, _ := os.ReadFile(path)
	doc := strings.Replace(string(data), `"per_turn_token":11908,"response_id":"chatcmpl-r6"}]`,
		`"per_turn_token":11908,"response_id":"chatcmpl-r6"},{"model":"anthropic/claude-sonnet-4-5-20250929","prompt_tokens":12000,"completion_tokens":50,"cache_read_tokens":11650,"cache_write_tokens":0,"reasoning_tokens":0,"response_id":"chatcmpl-r7"}]`, 1)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, _ := read(state)
	want := time.Date(2026, 3, 4, 9, 16, 0, 1000, time.UTC)
	if len(evs) != 1 || evs[0].TokenUsage.MessageID != "chatcmpl-r7" || !evs[0].Time.Equal(want) {
		t.Errorf("the seventh response: %+v; want it at its event's time, read from the new file alone", evs)
	}
}
