package auggie

import (
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

// The fixtures (testdata/sessions) are written here to the format of Auggie 0.36.0's own code
// (see the package doc): a session of three exchanges (thinking, a read, a failing command, an
// edit, an MCP call that failed, a usage node repeated) and the session of a sub-agent it ran,
// beside a backup and a temporary file that are not sessions.
const (
	mainID = "b6f2a9e4-3c1d-4e5f-8a7b-9c0d1e2f3a4b"
	subID  = "e0c4d2b1-7a6f-4e3d-b2c1-0f9e8d7c6b5a"
)

func path(id string) string {
	p, _ := filepath.Abs(filepath.Join("testdata", "sessions", id+".json"))
	return p
}

func read(t *testing.T, id string, data []byte, state []byte) ([]event.Event, []byte, error) {
	t.Helper()
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path(id), SessionID: id, Document: true}, state)
	if err != nil {
		t.Fatal(err)
	}
	if data == nil {
		if data, err = os.ReadFile(path(id)); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := p.Record(0, data)
	return evs, p.State(), err
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
	srcs, err := New([]string{filepath.Join("testdata", "sessions"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != mainID || srcs[1].SessionID != subID || !srcs[0].Document || srcs[0].Client != Client {
		t.Fatalf("Discover: %+v, want the two sessions as documents (not the backup, not the .tmp)", srcs)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "none")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestSession(t *testing.T) {
	evs, _, err := read(t, mainID, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckEvents(t, evs)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != mainID || e.Time.IsZero() || e.Project != "/home/dev/svc" {
			t.Fatalf("event %+v: want client auggie, the session, a time and the project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 3 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/svc" ||
		!sess[0].Time.Equal(time.Date(2026, 4, 2, 10, 15, 20, 4e6, time.UTC)) || sess[1].Session.Title != "HTTP client retry" ||
		sess[1].Session.TitleByUser || sess[2].Session.Model != "claude-sonnet-4-6" {
		t.Fatalf("session events %+v: want started at created in the workspace folder, the title, the model", sess)
	}
	usage := byKind(evs, event.KindTokenUsage)
	want := []event.Tokens{
		{Input: 8, Output: 412, CacheRead: 14210, CacheCreation: 3120},
		{Input: 1502, Output: 388, CacheRead: 17330},
		{Input: 640, Output: 95, CacheRead: 19002, CacheCreation: 410},
	}
	if len(usage) != len(want) {
		t.Fatalf("%d usage events, want one per exchange (the repeated usage node counted once)", len(usage))
	}
	for i, u := range usage {
		if u.TokenUsage.Tokens != want[i] || u.TokenUsage.Model != "claude-sonnet-4-6" || u.TokenUsage.CostUSD <= 0 ||
			u.TokenUsage.Reliability != event.ReliabilityApproximate || u.TokenUsage.RequestID == "" {
			t.Errorf("usage %d: %+v, want %+v as the disjoint buckets they are, priced, approximate", i, u.TokenUsage, want[i])
		}
	}
	if !usage[0].Time.Equal(time.Date(2026, 4, 2, 10, 15, 42, 318e6, time.UTC)) {
		t.Errorf("usage at %v, want the exchange's finishedAt", usage[0].Time)
	}
	acts := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		acts[transcript.FirstNonEmpty(e.Action.Tool, string(e.Action.Type))] = e.Action
	}
	if len(acts) != 5 {
		t.Errorf("%d actions: %v", len(acts), acts)
	}
	if a := acts[string(event.ActionUserPrompt)]; a == nil || a.Target != "Add a retry to the HTTP client in pkg/net/client.go" {
		t.Errorf("prompt %+v (a tool-result exchange is no prompt)", a)
	}
	if a := acts["view"]; a == nil || a.Type != event.ActionReadFile || a.Target != "pkg/net/client.go" || a.Success == nil || !*a.Success ||
		a.DurationMs != 12 || !strings.Contains(a.Output, "package net") {
		t.Errorf("view %+v: want read_file, succeeded in 12 ms, its content as output", a)
	}
	if a := acts["launch-process"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "go test ./pkg/net/..." || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "want 3") {
		t.Errorf("launch-process %+v: want run_command, failed, the output as error", a)
	}
	if a := acts["str-replace-editor"]; a == nil || a.Type != event.ActionEditFile || a.Target != "pkg/net/client.go" || a.Success == nil || !*a.Success {
		t.Errorf("str-replace-editor %+v", a)
	}
	if a := acts["search_issues_github"]; a == nil || a.Type != event.ActionMCPCall || a.Target != "github/search_issues" || a.Success == nil || *a.Success ||
		a.Error != "MCP server github: 401 Unauthorized" {
		t.Errorf("mcp %+v: want github/search_issues, failed", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,tool_call,assistant,tool_call,tool_call,assistant" {
		t.Errorf("message roles %s", got)
	}
}

// A sub-agent's session belongs to its parent: the parent's session id, its own as AgentID.
func TestSubAgent(t *testing.T) {
	evs, _, err := read(t, subID, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckEvents(t, evs)
	if n := len(byKind(evs, event.KindSession)); n != 0 {
		t.Errorf("%d session events: a sub-agent starts no session of its own", n)
	}
	for _, e := range evs {
		if e.SessionID != mainID {
			t.Fatalf("event %+v: want the parent's session", e)
		}
		switch {
		case e.Action != nil && (e.Action.AgentID != subID || !e.Action.Sidechain):
			t.Errorf("action %+v: want the sub-agent's id, sidechain", e.Action)
		case e.Message != nil && (e.Message.AgentID != subID || !e.Message.Sidechain):
			t.Errorf("message %+v: want the sub-agent's id, sidechain", e.Message)
		}
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 2200, Output: 61, CacheCreation: 1800}) ||
		usage[0].TokenUsage.AgentID != subID || usage[0].TokenUsage.Model != "claude-haiku-4-5" || usage[0].TokenUsage.CostUSD <= 0 {
		t.Errorf("usage %+v", usage)
	}
	var grep *event.Action
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionSearchText {
			grep = e.Action
		}
	}
	if grep == nil || grep.Target != `\.Get\( in /home/dev/svc/cmd` || grep.Success != nil {
		t.Errorf("grep %+v: want the query in its directory, no outcome (no result recorded)", grep)
	}
}

func TestReread_Changed_Malformed(t *testing.T) {
	data, err := os.ReadFile(path(mainID))
	if err != nil {
		t.Fatal(err)
	}
	first, state, _ := read(t, mainID, data, nil)
	if again, _, _ := read(t, mainID, data, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	fresh, _, _ := read(t, mainID, data, nil)
	transcripttest.SameEvents(t, first, fresh)

	// A new exchange: only its events are new.
	grown := strings.Replace(string(data), "\n  ],\n  \"agentState\"", `,
    {"exchange": {"request_message": "Also log each retry", "response_text": "", "request_id": "7d2c1e90-4b3a-4f5e-9d8c-1a2b3c4d5e04",
      "request_nodes": [], "response_nodes": [{"id": 0, "type": 10, "token_usage": {"input_tokens": 30, "output_tokens": 10, "cache_read_input_tokens": 19500, "cache_creation_input_tokens": 0}}],
      "model_id": "claude-sonnet-4-6"}, "completed": false, "sequenceId": 4, "finishedAt": "2026-04-02T10:17:00Z"}
  ],
  "agentState"`, 1)
	evs, _, err := read(t, mainID, []byte(grown), state)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || len(byKind(evs, event.KindTokenUsage)) != 1 || byKind(evs, event.KindTokenUsage)[0].TokenUsage.Input != 30 {
		t.Errorf("grown session emitted %+v, want only the new prompt, its message and its usage", evs)
	}
	for _, bad := range [][]byte{data[:len(data)/3], {}, []byte(`[]`), []byte("{\"sessionId\":\"\xff\"}")} {
		evs, after, err := read(t, mainID, bad, state)
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 || string(after) != string(state) {
			t.Errorf("%.20q: %d events, err %v; want ErrMalformed, nothing, the state kept", bad, len(evs), err)
		}
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvDirs, "/tmp/a"+string(os.PathListSeparator)+"/tmp/b/sessions")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/tmp/a/sessions" || got[1] != "/tmp/b/sessions" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".augment", "sessions") {
		t.Errorf("DefaultRoots (Linux and macOS alike): %v", got)
	}
}
