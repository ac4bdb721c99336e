package trae

import (
	"bufio"
	"bytes"
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

// The fixtures are written here to the formats the package doc names: two trae-agent
// trajectories (testdata/trajectories: an Anthropic run with cache figures, a failing command and
// an edit; an OpenAI run whose input includes its cached part, a thinking tool and a rate-limit
// error) and a TRAE CLI rollout in Codex's format (testdata/cli/sessions).
const (
	anthropicRun = "trajectory_20260609_101500"
	openaiRun    = "trajectory_20260609_120000"
	rollout      = "cli/sessions/2026/06/09/rollout-2026-06-09T11-00-00-0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
)

func readDoc(t *testing.T, name string, state []byte) ([]event.Event, []byte) {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("testdata", "trajectories", name+".json"))
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Document: true}, state)
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
	transcripttest.CheckEvents(t, evs)
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

func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		key := e.Action.ToolUseID
		if key == "" {
			key = string(e.Action.Type)
		}
		out[key] = e.Action
	}
	return out
}

func TestTrajectory_Anthropic(t *testing.T) {
	evs, _ := readDoc(t, anthropicRun, nil)
	sid := evs[0].SessionID
	if !strings.HasPrefix(sid, anthropicRun+"-") || len(sid) != len(anthropicRun)+9 {
		t.Errorf("session %q: want the file name and a short hash", sid)
	}
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sid || e.Project != "/home/dev/webapp" {
			t.Fatalf("event %+v: want client trae, one session, the project", e)
		}
	}
	s := evs[0].Session
	start := time.Date(2026, 6, 9, 10, 15, 0, 412345000, time.Local)
	if s == nil || s.State != event.SessionStarted || s.Cwd != "/home/dev/webapp" || !s.StartedAt.Equal(start) {
		t.Errorf("first event %+v: want started at start_time (local time), in the project root the prompt names", s)
	}
	usage := byKind(evs, event.KindTokenUsage)
	want := []event.Tokens{
		{Input: 1830, Output: 95, CacheCreation: 1200},
		{Input: 12, Output: 60, CacheCreation: 800, CacheRead: 3030},
		{Input: 40, Output: 210, CacheCreation: 150, CacheRead: 3830},
		{Input: 8, Output: 31, CacheRead: 3980},
	}
	if len(usage) != len(want) {
		t.Fatalf("%d usage events, want one per interaction (%d)", len(usage), len(want))
	}
	for i, u := range usage {
		if u.TokenUsage.Tokens != want[i] || u.TokenUsage.Model != "claude-sonnet-4-5-20250929" || u.TokenUsage.CostUSD <= 0 ||
			u.TokenUsage.Reliability != event.ReliabilityApproximate {
			t.Errorf("usage %d %+v, want %+v (Anthropic's input is net of the cache), priced", i, u.TokenUsage, want[i])
		}
	}
	if !usage[0].Time.Equal(time.Date(2026, 6, 9, 10, 15, 4, 100200000, time.Local)) {
		t.Errorf("usage time %v, want the interaction's", usage[0].Time)
	}
	a := actions(evs)
	if p := a[string(event.ActionUserPrompt)]; p == nil || p.Target != "the login test fails one run in ten, find out why and fix it" {
		t.Errorf("prompt %+v", p)
	}
	if r := a["toolu_01A"]; r == nil || r.Type != event.ActionReadFile || r.Target != "test/login.test.ts" || r.Success == nil || !*r.Success ||
		!strings.Contains(r.Output, "sleep(50)") {
		t.Errorf("view %+v: want read_file of the relative path, succeeded, with its output", r)
	}
	if r := a["toolu_02B"]; r == nil || r.Type != event.ActionRunCommand || r.Target != "cd /home/dev/webapp && npm test -- login" ||
		r.Success == nil || *r.Success || r.Error != "Process exited with code 1" || !strings.Contains(r.Output, "1 failing") {
		t.Errorf("bash %+v: want run_command, failed with the step's error", r)
	}
	if r := a["toolu_03C"]; r == nil || r.Type != event.ActionEditFile || r.Target != "test/login.test.ts" || r.Success == nil || !*r.Success {
		t.Errorf("str_replace %+v: want edit_file, succeeded", r)
	}
	if r := a["toolu_04D"]; r == nil || r.Type != event.ActionTaskComplete {
		t.Errorf("task_done %+v: want task_complete", r)
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\tthe login test fails one run in ten, find out why and fix it",
		"assistant\t\tI'll start by reading the test.",
		"tool_call\tstr_replace_based_edit_tool\ttest/login.test.ts",
		"tool_call\tbash\tcd /home/dev/webapp && npm test -- login",
		"assistant\t\tThe test sleeps a fixed 50 ms; await the promise instead.",
		"tool_call\tstr_replace_based_edit_tool\ttest/login.test.ts",
		"tool_call\ttask_done\t",
	)
}

func TestTrajectory_OpenAI(t *testing.T) {
	evs, _ := readDoc(t, openaiRun, nil)
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 904, Output: 700, CacheRead: 4096, Reasoning: 512}) ||
		usage[0].TokenUsage.Model != "gpt-5-2025-08-07" || usage[0].TokenUsage.CostUSD <= 0 {
		t.Fatalf("usage %+v: want OpenAI's input net of its cached part, reasoning inside output, priced", usage)
	}
	a := actions(evs)
	if r := a["call_k1"]; r == nil || r.Type != event.ActionUnknown || r.Tool != "sequentialthinking" || r.Success == nil || !*r.Success {
		t.Errorf("sequentialthinking %+v: want unknown with the raw name, succeeded", r)
	}
	if r := a[string(event.ActionAPIError)]; r == nil || !strings.Contains(r.Error, "429") || r.Success == nil || *r.Success {
		t.Errorf("api_error %+v: want the step's error", r)
	}
}

func TestTrajectory_RereadAndMalformed(t *testing.T) {
	first, state := readDoc(t, anthropicRun, nil)
	if again, _ := readDoc(t, anthropicRun, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	fresh, _ := readDoc(t, anthropicRun, nil)
	if len(fresh) != len(first) {
		t.Errorf("a read without state emitted %d events, the first %d", len(fresh), len(first))
	}
	transcripttest.SameMessageIDs(t, first, fresh)

	// A step appended (the document rewritten): only what is new or changed comes out.
	path := filepath.Join("testdata", "trajectories", openaiRun+".json")
	data, _ := os.ReadFile(path)
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Document: true}, nil)
	before, _ := p.Record(0, data)
	grown := bytes.Replace(data, []byte(`"success": false`), []byte(`"success": false, "note": 1`), 1)
	grown = bytes.Replace(grown, []byte(`"agent_steps": [`), []byte(`"agent_steps": [
    {"step_number": 0, "timestamp": "2026-06-09T12:00:05.000000", "state": "error", "tool_results": null, "error": "connection reset"},`), 1)
	after, err := p.Record(0, grown)
	if err != nil || len(after) != 1 || after[0].Action == nil || after[0].Action.Error != "connection reset" || len(before) == 0 {
		t.Errorf("grown document: %d events (%v), want only the new step's error", len(after), err)
	}

	state = p.State()
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte(`[]`), []byte("{\"task\":\"\xff\"}")} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.30q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p.State()) != string(state) {
		t.Errorf("a malformed document changed the State")
	}
}

// A TRAE CLI rollout is Codex's format: its lines give Codex's events under client "trae".
func TestCLIRollout(t *testing.T) {
	root, _ := filepath.Abs("testdata")
	path := filepath.Join(root, rollout)
	a := New([]string{filepath.Join(root, "cli")})
	p, err := a.NewParser(transcript.Source{Client: Client, Path: path, SessionID: "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []event.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		got, err := p.Record(0, sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	transcripttest.CheckEvents(t, evs)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" {
			t.Fatalf("event %+v: want client trae and the rollout's session", e)
		}
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 3000, Output: 300, CacheRead: 6000, Reasoning: 120}) ||
		usage[0].TokenUsage.CostUSD <= 0 {
		t.Errorf("usage %+v: want Codex's accounting (input net of cached)", usage)
	}
	acts := actions(evs)
	if r := acts["call_x1"]; r == nil || r.Type != event.ActionRunCommand || r.Target != "npm test -- login" || r.Success == nil || *r.Success {
		t.Errorf("exec_command %+v: want run_command, failed by its exit code", r)
	}
}

func TestDiscover(t *testing.T) {
	root, _ := filepath.Abs("testdata")
	srcs, err := New([]string{root, filepath.Join(root, "cli"), filepath.Join(t.TempDir(), "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var docs, rollouts int
	for _, s := range srcs {
		if s.Client != Client {
			t.Errorf("source %+v: want client trae", s)
		}
		switch {
		case s.Document && strings.Contains(s.Path, "trajectory_"):
			docs++
		case !s.Document && strings.HasSuffix(s.Path, rollout):
			rollouts++
		}
	}
	if len(srcs) != 3 || docs != 2 || rollouts != 1 {
		t.Errorf("Discover: %+v; want the two trajectories (in trajectories/) and the rollout (under the CLI home)", srcs)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("Discover on an absent root: %+v, %v", srcs, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvDirs, "/p/one"+string(os.PathListSeparator)+"/p/two")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/p/one" || got[1] != "/p/two" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".trae", "cli") {
		t.Errorf("DefaultRoots: %v", got)
	}
}
