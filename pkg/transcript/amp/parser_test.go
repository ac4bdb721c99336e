package amp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// The fixtures (testdata/threads) are written here to the format the published readers of other
// tools describe (see the package doc): a current thread (usage on the messages, an info insert,
// a gpt-* model's folded input, Read, Bash failing by exit code, an MCP call the user rejected)
// and an older one (usage in the ledger only, an edit that failed).
const (
	current = "T-019a2f3c-5d6e-7f80-9a1b-2c3d4e5f6a7b"
	older   = "T-0b7e2c1a-4f3d-4e2b-8a9c-1d2e3f4a5b6c"
)

func read(t *testing.T, id string, state []byte) ([]event.Event, []byte) {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("testdata", "threads", id+".json"))
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, SessionID: id, Document: true}, state)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		t.Fatal(err)
	}
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

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "threads"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != current || srcs[1].SessionID != older || !srcs[0].Document {
		t.Fatalf("Discover: %+v, want the two T-*.json threads as documents (not settings.json)", srcs)
	}
}

func TestCurrentThread(t *testing.T) {
	evs, _ := read(t, current, nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != current || e.ID == "" || e.Time.IsZero() {
			t.Fatalf("event %+v: want client amp, the thread's session, an id and a time", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) < 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(time.UnixMilli(1770000000000)) ||
		sess[0].Session.Cwd != "/home/dev/webapp" || sess[1].Session.Title != "Fix the flaky login test" {
		t.Fatalf("session events %+v: want started at created in /home/dev/webapp, then the title", sess)
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 2 {
		t.Fatalf("%d usage events, want one per assistant usage (2)", len(usage))
	}
	if u := usage[0].TokenUsage; u.Tokens != (event.Tokens{Input: 12, Output: 310, CacheCreation: 5210, CacheRead: 18044}) ||
		u.Model != "claude-sonnet-4-5-20250929" || !usage[0].Time.Equal(time.Date(2026, 2, 2, 2, 40, 12, 500e6, time.UTC)) {
		t.Errorf("first usage %+v at %v: want Amp's buckets as they are (input net of cache), at the usage's timestamp", u, usage[0].Time)
	}
	if u := usage[1].TokenUsage; u.Tokens != (event.Tokens{Input: 2300, Output: 41, CacheRead: 21000}) || u.Model != "gpt-5" {
		t.Errorf("gpt-5 usage %+v: want the uncached prompt Amp put in cacheCreationInputTokens read back as input", u)
	}
	acts := map[event.ActionType]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		acts[e.Action.Type] = e.Action
	}
	if a := acts[event.ActionUserPrompt]; a == nil || a.Target != "the login test fails one run in ten, find out why" {
		t.Errorf("prompt %+v (the info insert is no prompt)", a)
	}
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "test/login.test.ts" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "sleep(50)") {
		t.Errorf("read_file %+v: want the path relative to the project, succeeded, the file's content as output", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "npm test -- login" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "1 failing") {
		t.Errorf("run_command %+v: want npm test, failed by its exit code, its output as the error", a)
	}
	if a := acts[event.ActionMCPCall]; a == nil || a.Target != "github/search_issues" || a.Success == nil || *a.Success ||
		a.Error != "rejected by user" {
		t.Errorf("mcp_call %+v: want github/search_issues, rejected by the user", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,tool_call,tool_call,assistant" {
		t.Errorf("message roles %s", got)
	}
}

// An older thread keeps its usage in the ledger only: read from there, once.
func TestOlderThread_Ledger(t *testing.T) {
	evs, _ := read(t, older, nil)
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 1800, Output: 95}) ||
		usage[0].TokenUsage.Model != "claude-sonnet-4-20250514" {
		t.Fatalf("usage %+v, want the ledger's one event", usage)
	}
	var edit *event.Action
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionEditFile {
			edit = e.Action
		}
	}
	if edit == nil || edit.Target != "main.go" || edit.Success == nil || *edit.Success || edit.Error != "old_str not found in main.go" {
		t.Errorf("edit %+v: want main.go, failed with the run's error", edit)
	}
}

// A thread whose messages carry usage is not read from its ledger too (that would count twice).
func TestLedgerIgnoredWithMessageUsage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "threads", current+".json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), `"messages":[`, `"usageLedger":{"events":[{"id":"e1","timestamp":"2026-02-02T02:40:12Z","model":"claude-sonnet-4-5-20250929","tokens":{"input":23266,"output":310}}]},"messages":[`, 1)
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: "x/" + current + ".json", SessionID: current, Document: true}, nil)
	evs, err := p.Record(0, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(byKind(evs, event.KindTokenUsage)); n != 2 {
		t.Errorf("%d usage events with both sources, want the messages' 2", n)
	}
}

func TestReread_AndMalformed(t *testing.T) {
	first, state := read(t, current, nil)
	if again, _ := read(t, current, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	fresh, _ := read(t, current, nil)
	if len(fresh) != len(first) {
		t.Errorf("a read without state emitted %d events, the first %d", len(fresh), len(first))
	}
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: "T-x.json", SessionID: "T-x", Document: true}, nil)
	for _, bad := range [][]byte{[]byte(`{"messages":[{"role":`), nil, []byte(`[]`), []byte("{\"id\":\"\xff\"}")} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/xdg/amp/threads" {
		t.Errorf("DefaultRoots with XDG_DATA_HOME: %v", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".local", "share", "amp", "threads") {
		t.Errorf("DefaultRoots: %v", got)
	}
}
