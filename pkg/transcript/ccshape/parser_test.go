package ccshape

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape/ccshapetest"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// rec is a test client's record: the common fields and one of each kind a client adds.
type rec struct {
	Record
	SessionID string `json:"sessionId"`
	Status    string `json:"status"`
	Model     string `json:"model"`
	Name      string `json:"name"`
}

// hooks is a test client whose hooks count their calls and say what they were given.
type hooks struct {
	tools, results, others, sessions int
	alone                            []bool
	statuses                         []string
}

func (h *hooks) config() *Config[*rec] {
	return &Config[*rec]{
		Client: "test-client",
		Tool: func(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
			h.tools++
			if name == "open" {
				return event.ActionReadFile, rel(transcript.Arg(in, "path"))
			}
			return event.ActionUnknown, ""
		},
		Result: func(b *Block, r *rec, alone bool) Outcome {
			h.results++
			h.alone = append(h.alone, alone)
			h.statuses = append(h.statuses, r.Status)
			o := Outcome{Output: "out:" + resultText(b.Content), Failed: r.Status == "bad", Error: "status " + r.Status}
			if r.Name != "" {
				o.Tool, o.Type = r.Name, event.ActionWebFetch
			}
			return o
		},
		Other: func(r *rec) (Meta, bool) {
			h.others++
			switch r.Type {
			case "model":
				return Meta{Model: r.Model}, true
			case "title":
				return Meta{Title: r.Name, TitleByUser: r.Status == "user"}, true
			case "noise":
				return Meta{}, true
			}
			return Meta{}, false
		},
		Session: func(r *rec) string {
			h.sessions++
			return r.SessionID
		},
	}
}

// adapter is the transcript.Adapter of a config, for the shared test helpers.
type adapter struct{ cfg *Config[*rec] }

func (a adapter) Client() string                         { return a.cfg.Client }
func (a adapter) Discover() ([]transcript.Source, error) { return nil, nil }
func (a adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return New(a.cfg, src, state, pricing.Source(nil, nil))
}

var src = transcript.Source{Client: "test-client", Path: "/t/-w/own.jsonl", SessionID: "own"}

func lines(ls ...string) [][]byte {
	var out [][]byte
	for _, l := range ls {
		out = append(out, []byte(l))
	}
	return out
}

const (
	callLine = `{"type":"assistant","uuid":"a1","cwd":"/w","timestamp":"2026-03-02T09:00:00Z","message":{"id":"m1","model":"mod-a","content":[{"type":"tool_use","id":"c1","name":"open","input":{"path":"/w/src/a.go"}},{"type":"tool_use","id":"c2","name":"other","input":{}}]}}`
	userLine = `{"type":"user","uuid":"u1","cwd":"/w","timestamp":"2026-03-02T08:59:59Z","message":{"content":"fix it"}}`
)

// The tool hook maps every call, with a rel that makes paths relative to the project.
func TestToolHook(t *testing.T) {
	h := &hooks{}
	evs, _ := ccshapetest.Read(t, adapter{h.config()}, src, lines(callLine), nil)
	if h.tools != 2 {
		t.Fatalf("tool hook called %d times, want once a call", h.tools)
	}
	acts := ccshapetest.ActionsByType(evs)
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "src/a.go" || a.Tool != "open" || a.ToolUseID != "c1" || a.Model != "mod-a" {
		t.Errorf("read_file %+v: want the hook's type and target", a)
	}
	if a := acts[event.ActionUnknown]; a == nil || a.Tool != "other" {
		t.Errorf("unknown %+v", a)
	}
}

// The result hook reads every tool_result with its record, told whether it is the record's only
// one; its outcome is the action's.
func TestResultHook(t *testing.T) {
	h := &hooks{}
	evs, _ := ccshapetest.Read(t, adapter{h.config()}, src, lines(callLine,
		`{"type":"user","uuid":"u2","status":"bad","timestamp":"2026-03-02T09:00:02Z","message":{"content":[{"type":"tool_result","tool_use_id":"c1","content":"text"}]}}`,
		`{"type":"user","uuid":"u3","status":"fine","timestamp":"2026-03-02T09:00:03Z","message":{"content":[{"type":"tool_result","tool_use_id":"c2","content":"x"},{"type":"tool_result","tool_use_id":"c9","content":"y"}]}}`,
		`{"type":"user","uuid":"u4","name":"fetch","timestamp":"2026-03-02T09:00:04Z","message":{"content":[{"type":"tool_result","tool_use_id":"c7","content":"z"}]}}`,
	), nil)
	if h.results != 4 || !slices.Equal(h.alone, []bool{true, false, false, true}) || !slices.Equal(h.statuses, []string{"bad", "fine", "fine", ""}) {
		t.Fatalf("result hook: %d calls, alone %v, statuses %q; want 4, each with its record", h.results, h.alone, h.statuses)
	}
	byID := map[string]*event.Action{}
	for _, a := range transcripttest.ActionsOf(evs) {
		byID[a.ToolUseID] = a
	}
	if a := byID["c1"]; a == nil || a.Success == nil || *a.Success || a.Error != "status bad" || a.Output != "out:text" ||
		a.Type != event.ActionReadFile || a.DurationMs != 2000 {
		t.Errorf("c1 %+v: want failed with the hook's error and output, the call's type, 2 s", a)
	}
	if a := byID["c2"]; a == nil || a.Success == nil || !*a.Success || a.Error != "" || a.Output != "out:x" {
		t.Errorf("c2 %+v: want succeeded", a)
	}
	if a := byID["c7"]; a == nil || a.Tool != "fetch" || a.Type != event.ActionWebFetch {
		t.Errorf("c7 %+v: a result without its call takes the hook's tool and type", a)
	}
	if a := byID["c1"]; a != nil && a.Tool != "open" {
		t.Errorf("c1 tool %q: a call's own tool stays", a.Tool)
	}
}

// Without a result hook, the content is Claude Code's: a string or text blocks, failed when
// is_error, its text the error.
func TestResultDefault(t *testing.T) {
	cfg := (&hooks{}).config()
	cfg.Result = nil
	evs, _ := ccshapetest.Read(t, adapter{cfg}, src, lines(callLine,
		`{"type":"user","uuid":"u2","timestamp":"2026-03-02T09:00:02Z","message":{"content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"no such file"},{"type":"image"}],"is_error":true}]}}`,
		`{"type":"user","uuid":"u3","timestamp":"2026-03-02T09:00:03Z","message":{"content":[{"type":"tool_result","tool_use_id":"c2","content":"","is_error":true}]}}`,
	), nil)
	byID := map[string]*event.Action{}
	for _, a := range transcripttest.ActionsOf(evs) {
		byID[a.ToolUseID] = a
	}
	if a := byID["c1"]; a == nil || a.Success == nil || *a.Success || a.Output != "no such file\n[image]" || a.Error != "no such file\n[image]" {
		t.Errorf("c1 %+v: want failed, the blocks' text as output and error", a)
	}
	if a := byID["c2"]; a == nil || a.Success == nil || *a.Success || a.Error != "tool failed" {
		t.Errorf("c2 %+v: want failed, a generic error", a)
	}
}

// The other hook reads the client's own record types: a model, titles, a type known to say
// nothing; one it does not know is counted, as is one of a client without the hook.
func TestOtherHook(t *testing.T) {
	h := &hooks{}
	in := lines(
		`{"type":"model","model":"mod-0","timestamp":1772442000000}`,
		userLine,
		`{"type":"title","name":"Made up","timestamp":"2026-03-02T09:00:01Z"}`,
		`{"type":"title","name":"Mine","status":"user","timestamp":"2026-03-02T09:00:02Z"}`,
		`{"type":"model","model":"mod-1","timestamp":"2026-03-02T09:00:03Z"}`,
		`{"type":"noise","timestamp":"2026-03-02T09:00:04Z"}`,
		`{"type":"summary","timestamp":"2026-03-02T09:00:05Z"}`,
		`{"type":"strange","timestamp":"2026-03-02T09:00:06Z"}`,
	)
	p, err := New(h.config(), src, nil, pricing.Source(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i, l := range in {
		got, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	transcripttest.CheckEvents(t, evs)
	if h.others != 7 {
		t.Errorf("other hook called %d times, want once a record of another type (summary too)", h.others)
	}
	var got []string
	for _, e := range ccshapetest.ByKind(evs, event.KindSession) {
		s := e.Session
		got = append(got, strings.Join([]string{string(s.State), s.Model, s.Title, map[bool]string{true: "by user"}[s.TitleByUser]}, "|"))
	}
	want := "started|mod-0||;||Made up|;||Mine|by user;active|mod-1||"
	if strings.Join(got, ";") != want {
		t.Errorf("session events %q, want %q", strings.Join(got, ";"), want)
	}
	if st := p.Stats(); len(st.Unknown) != 1 || st.Unknown["strange"] != 1 {
		t.Errorf("unknown %v: want only the type no one knows", st.Unknown)
	}

	cfg := h.config()
	cfg.Other = nil
	p, _ = New(cfg, src, nil, pricing.Source(nil, nil))
	for i, l := range in {
		if _, err := p.Record(int64(i), l); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); len(st.Unknown) != 4 || st.Unknown["model"] != 2 || st.Unknown["summary"] != 0 {
		t.Errorf("unknown without the hook %v: want every type but user and summary", st.Unknown)
	}
}

// With the session hook, a file whose records name another session is a subagent's in it; without
// it, the Source says the agent.
func TestSessionHook(t *testing.T) {
	h := &hooks{}
	sub := lines(
		`{"type":"user","uuid":"s1","sessionId":"parent","cwd":"/w","timestamp":"2026-03-02T09:00:00Z","message":{"content":"look at a.go"}}`,
		`{"type":"assistant","uuid":"s2","sessionId":"parent","timestamp":"2026-03-02T09:00:01Z","message":{"id":"m","model":"mod","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":5,"output_tokens":2}}}`,
	)
	evs, state := ccshapetest.Read(t, adapter{h.config()}, src, sub, nil)
	if h.sessions != 2 {
		t.Errorf("session hook called %d times, want once a line", h.sessions)
	}
	if n := len(ccshapetest.ByKind(evs, event.KindSession)); n != 0 || len(evs) == 0 {
		t.Errorf("%d session events of %d: a subagent's file has none", n, len(evs))
	}
	for _, e := range evs {
		if e.SessionID != "parent" || (e.Message != nil && e.Message.AgentID != "own") || (e.TokenUsage != nil && e.TokenUsage.AgentID != "own") ||
			(e.Action != nil && e.Action.Type == event.ActionUserPrompt) {
			t.Errorf("event %+v: want the parent's session, the file's id as agent, no prompt", e)
		}
	}
	var st map[string]any
	if err := json.Unmarshal(state, &st); err != nil || st["agent"] != "own" || st["known"] != true || st["session"] != "parent" {
		t.Errorf("state %s", state)
	}

	cfg := h.config()
	cfg.Session = nil
	agentSrc := src
	agentSrc.AgentID = "ag"
	evs, _ = ccshapetest.Read(t, adapter{cfg}, agentSrc, sub, nil)
	for _, e := range evs {
		if e.SessionID != "own" || (e.Message != nil && e.Message.AgentID != "ag") {
			t.Errorf("event %+v: want the Source's session and agent", e)
		}
	}
	evs, _ = ccshapetest.Read(t, adapter{cfg}, src, sub, nil)
	if len(ccshapetest.ByKind(evs, event.KindSession)) == 0 {
		t.Error("a session's own file has session events")
	}
}

// A state saved by the readers before they shared this package loads: the same field names,
// a pending call's target written as text.
func TestOldState(t *testing.T) {
	old := `{"session":"parent","agent":"own","known":true,"lines":7,"started":true,"cwd":"/w","project":"/w",` +
		`"models":["mod-a"],"title":"` + transcript.TextHash("Mine") + `","first_t":1772442000000000000,"last_t":1772442001000000000,` +
		`"pending":[{"id":"c1","type":"run_command","tool":"Bash","target":"go test","msg":"m1","model":"mod-a","t":1772442001000000000}]}`
	h := &hooks{}
	evs, state := ccshapetest.Read(t, adapter{h.config()}, src, lines(
		`{"type":"user","uuid":"u9","sessionId":"parent","timestamp":"2026-03-02T09:00:02Z","message":{"content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}}`,
	), []byte(old))
	acts := transcripttest.ActionsOf(evs)
	if len(acts) != 1 || acts[0].Type != event.ActionRunCommand || acts[0].Target != "go test" || acts[0].Tool != "Bash" ||
		acts[0].AgentID != "own" || acts[0].MessageID != "m1" || evs[0].SessionID != "parent" || acts[0].DurationMs != 1000 {
		t.Fatalf("result after an old state %+v: want the pending call's", acts)
	}
	var st map[string]any
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session", "agent", "known", "lines", "started", "cwd", "project", "models", "title", "first_t", "last_t"} {
		if _, ok := st[k]; !ok {
			t.Errorf("state %s lost %q", state, k)
		}
	}
	if _, ok := st["pending"]; ok {
		t.Errorf("state %s keeps a call that had its result", state)
	}
	if _, err := New(h.config(), src, []byte(`{"lines":"x"}`), pricing.Source(nil, nil)); err == nil {
		t.Error("a state that does not decode loads")
	}
}

func TestMalformed(t *testing.T) {
	p, _ := New((&hooks{}).config(), src, nil, pricing.Source(nil, nil))
	// A client's own field of the wrong type spoils the line, as a common one does.
	for _, bad := range []string{"\xff{}", "[1]", `{"type":`, `{"cwd":5}`, `{"sessionId":5}`, `{"message":{"id":5}}`} {
		if evs, err := p.Record(0, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 ||
			!strings.Contains(err.Error(), "test-client") {
			t.Errorf("%q: %d events, %v; want ErrMalformed naming the client", bad, len(evs), err)
		}
	}
	if evs, err := p.Record(0, []byte(`{"type":"user"}`)); err != nil || len(evs) != 0 {
		t.Errorf("no time: %v, %v", evs, err)
	}
	if st := p.Stats(); st.Malformed != 6 || st.Lines != 7 || st.Unknown["(no timestamp)"] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// FuzzRecord feeds arbitrary lines to a parser with every hook: it must never panic, its events
// must validate, and its state must load again.
func FuzzRecord(f *testing.F) {
	for _, s := range []string{callLine, userLine,
		`{"type":"user","uuid":"u2","status":"bad","name":"x","sessionId":"p","timestamp":"2026-03-02T09:00:02Z","message":{"content":[{"type":"image"},{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":7}]}]}}`,
		`{"type":"title","name":"t","timestamp":1772442000000}`, `{"type":"model","model":"m"}`, `{"type":"noise"}`,
		`{"type":"user","isCompactSummary":true,"message":{"content":"summary"}}`, `{"message":null}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		transcripttest.FuzzLines(t, adapter{(&hooks{}).config()}, src, data, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
		})
	})
}
