package openclaw

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/pi"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The sessions of fixDB, by the session key they were run with (see testdata/README.md).
const (
	sessChat      = "55768d44-a932-447f-8094-ba4520692a5e" // openai-completions, exec ls, then a second turn
	sessResponses = "5c09743f-a972-45a9-a45a-94da6a9c2966" // openai-responses, exec ls
	sessAnthropic = "bd30c62d-d914-45e8-b775-c47f34b31203" // anthropic-messages, apply_patch {} refused
	sessSpawn     = "6b4b63e9-5324-42ba-a6cc-a80952b35fc6" // tool_call -> sessions_spawn, a zstd row
	sessLegacy    = "92614f30-4fb9-4803-9aad-8d86b7ea54c4"
)

// The real database, read in one pass, against its golden summary.
func TestParser_GoldenDatabase(t *testing.T) {
	evs, p := poll(t, New(nil), dbSrc(t, fixDB), nil)
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 || st.Lines != 45 || st.Events != int64(len(evs)) {
		t.Errorf("stats %+v", st)
	}
	sum := summarize(evs)
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "database.golden.json"), sum, *update)
	if got := transcripttest.SortedKeys(sum); !slices.Equal(got, []string{sessChat, sessResponses, sessSpawn, sessAnthropic}) {
		t.Errorf("sessions %q", got)
	}
}

// A legacy session file, against its golden summary.
func TestParser_GoldenLegacyFile(t *testing.T) {
	evs, p := parseFile(t, New(nil), fileSrc(t, fixLegacy))
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 || st.Lines != 9 {
		t.Errorf("stats %+v", st)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "legacy.golden.json"), summarize(evs), *update)
}

// The figures the real client wrote, checked one by one (the golden files hold them too).
func TestParser_Usage(t *testing.T) {
	evs, _ := poll(t, New(nil), dbSrc(t, fixDB), nil)
	byMsg := map[string]*event.TokenUsage{}
	for _, e := range evs {
		if u := e.TokenUsage; u != nil {
			if byMsg[u.MessageID] != nil {
				t.Errorf("message %s counted twice", u.MessageID)
			}
			byMsg[u.MessageID] = u
		}
	}
	if len(byMsg) != 9 {
		t.Errorf("%d usage events, want one per assistant message (9)", len(byMsg))
	}
	// observer-fakeapi answered prompt_tokens 1120 (1000 cached), completion_tokens 45 (10
	// reasoning); Anthropic input 120, cache read 1000, writes 200 (5m) + 100 (1h), output 45.
	chat := byMsg["chatcmpl-fake-7"]
	if chat == nil || chat.Tokens != (event.Tokens{Input: 120, Output: 45, CacheRead: 1000, Reasoning: 10}) ||
		chat.Model != "gpt-5.2" || chat.Reliability != event.ReliabilityApproximate || chat.CostUSD <= 0 {
		t.Errorf("chat usage %+v", chat)
	}
	resp := byMsg["resp_fake_11"]
	if resp == nil || resp.Tokens != (event.Tokens{Input: 120, Output: 45, CacheRead: 1000, Reasoning: 10}) {
		t.Errorf("responses usage %+v", resp)
	}
	ant := byMsg["msg_fake_17"]
	if ant == nil || ant.Tokens != (event.Tokens{Input: 120, Output: 45, CacheRead: 1000, CacheCreation: 300, CacheCreation1h: 100}) ||
		ant.Model != "claude-sonnet-4-6" {
		t.Errorf("anthropic usage %+v", ant)
	}
	// 120×3 + 45×15 + 1000×0.3 + 200×3.75 + 100×6 dollars per million tokens.
	if want := 0.002685; ant == nil || ant.CostUSD < want-1e-9 || ant.CostUSD > want+1e-9 {
		t.Errorf("anthropic cost %+v, want %v", ant, want)
	}
}

// The tool calls the real client made, with their results.
func TestParser_Actions(t *testing.T) {
	evs, _ := poll(t, New(nil), dbSrc(t, fixDB), nil)
	acts := map[string]*event.Action{}
	for _, a := range transcripttest.ActionsOf(evs) {
		acts[a.ToolUseID] = a
	}
	exec := acts["call_fake_8"]
	if exec == nil || exec.Type != event.ActionRunCommand || exec.Tool != "exec" || exec.Target != "ls" ||
		exec.Success == nil || !*exec.Success || !strings.Contains(exec.Output, "README.md") || exec.DurationMs <= 0 ||
		exec.MessageID != "chatcmpl-fake-7" || exec.Model != "gpt-5.2" || exec.InputHash == "" {
		t.Errorf("exec %+v", exec)
	}
	if r := acts["call_fake_13|fc_fake_12"]; r == nil || r.Type != event.ActionRunCommand || r.Success == nil || !*r.Success {
		t.Errorf("responses exec %+v", r)
	}
	if ap := acts["toolu_fake_18"]; ap == nil || ap.Type != event.ActionEditFile || ap.Success == nil || *ap.Success ||
		!strings.Contains(ap.Error, "Validation failed") {
		t.Errorf("apply_patch %+v", ap)
	}
	// tool_call {id: sessions_spawn, args: {task}} is the spawn; its nested-tool record and its
	// (compressed) result complete the same action.
	sp := acts["call_fake_5"]
	if sp == nil || sp.Type != event.ActionSpawnSubagent || sp.Tool != "sessions_spawn" || sp.Target != "list the files" ||
		sp.Success == nil || *sp.Success || !strings.Contains(sp.Error, "published reply runtime missing") || sp.DurationMs <= 0 {
		t.Errorf("spawn %+v", sp)
	}
	if len(acts) != 4 {
		t.Errorf("%d tool actions: %v", len(acts), transcripttest.SortedKeys(acts))
	}
	for _, e := range evs {
		if a := e.Action; a != nil && a.Transcript != abs(t, fixDB) {
			t.Errorf("transcript %q", a.Transcript)
		}
	}
}

// Doctor imports a session file verbatim: the file and its import yield the same events, so a
// session read both ways is stored once.
func TestParser_LegacyFileMatchesImport(t *testing.T) {
	a := New(nil)
	fileEvs, _ := parseFile(t, a, fileSrc(t, fixLegacy))
	dbEvs, p := poll(t, a, dbSrc(t, fixMigrated), nil)
	if p.Stats().Malformed != 0 {
		t.Errorf("stats %+v", p.Stats())
	}
	norm := func(evs []event.Event) map[string]event.Event {
		_, byID := transcripttest.Merge(evs)
		for id, e := range byID {
			if e.Action != nil {
				e.Action.Transcript = ""
			}
			if e.Session != nil {
				s := *e.Session
				s.TranscriptPath = ""
				e.Session = &s
			}
			byID[id] = e
		}
		return byID
	}
	f, d := norm(fileEvs), norm(dbEvs)
	if len(f) == 0 || !slices.Equal(transcripttest.SortedKeys(f), transcripttest.SortedKeys(d)) {
		t.Fatalf("ids differ:\nfile %q\ndb   %q", transcripttest.SortedKeys(f), transcripttest.SortedKeys(d))
	}
	for id, fe := range f {
		if got, want := string(transcripttest.MustJSON(t, d[id])), string(transcripttest.MustJSON(t, fe)); got != want {
			t.Errorf("event %s differs:\nimport %s\nfile   %s", id, got, want)
		}
	}
	for _, e := range fileEvs {
		if e.SessionID != sessLegacy {
			t.Errorf("session %q", e.SessionID)
		}
	}
}

// Half-written and damaged lines of a session file are reported and skipped, never fatal; the
// lines after them are read.
func TestParser_MalformedLines(t *testing.T) {
	lines := transcripttest.ReadLines(t, fixLegacy)
	var in []string
	for i, l := range lines {
		in = append(in, string(l))
		if i == 4 {
			in = append(in, string(l[:len(l)/2]), "\xff\xfe", "[]", `{"type":"message","message":[]}`)
		}
	}
	in = append(in, `{"type":"brand_new_entry","timestamp":"2026-12-01T22:57:17.000Z"}`, `{"id":"x"}`,
		`{"type":"message","timestamp":"2026-12-01T22:57:17.000Z","message":{"role":"robot","content":"x"}}`)
	evs, p := parseLines(t, fileSrc(t, fixLegacy), in...)
	st := p.Stats()
	if st.Malformed != 4 || st.Lines != int64(len(in)) {
		t.Errorf("stats %+v", st)
	}
	if st.Unknown["brand_new_entry"] != 1 || st.Unknown["(no type)"] != 1 || st.Unknown["message/robot"] != 1 {
		t.Errorf("unknown %v", st.Unknown)
	}
	clean, _ := parseFile(t, New(nil), fileSrc(t, fixLegacy))
	if got, want := ids(evs), ids(clean); !slices.Equal(got, want) {
		t.Errorf("ids with damaged lines %q, want %q", got, want)
	}
	_, err := p.Record(0, []byte("{"))
	if !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("err %v", err)
	}
}

// A database is read by Poll: Record refuses its lines; a session file is read by Record.
func TestParser_WrongMode(t *testing.T) {
	p, err := New(nil).NewParser(dbSrc(t, fixDB), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record on a database: %v", err)
	}
	fp, _ := New(nil).newParser(fileSrc(t, fixLegacy), nil)
	if _, err := fp.Poll(t.Context()); err == nil {
		t.Error("Poll on a session file")
	}
}

// A parser resumed from its State after every line yields what one parser yields.
func TestParser_ResumeLines(t *testing.T) {
	a := New(nil)
	src := fileSrc(t, fixLegacy)
	want, _ := parseFile(t, a, src)
	got, err := transcripttest.Resumed(t, a, src)
	if err != nil {
		t.Fatal(err)
	}
	if string(transcripttest.MustJSON(t, got)) != string(transcripttest.MustJSON(t, want)) {
		t.Error("resumed events differ")
	}
}

func ids(evs []event.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func TestToolType(t *testing.T) {
	cases := map[string]event.ActionType{
		"exec": event.ActionRunCommand, "Bash": event.ActionRunCommand, "read": event.ActionReadFile,
		"write": event.ActionWriteFile, "apply_patch": event.ActionEditFile, "ls": event.ActionSearchFiles,
		"sessions_spawn": event.ActionSpawnSubagent, "web_fetch": event.ActionWebFetch, "x_search": event.ActionWebSearch,
		"progress_card": event.ActionTodoUpdate, "ask_user": event.ActionAskUser, "mcp_github_issue": event.ActionMCPCall,
		"tool_search": event.ActionUnknown, "process": event.ActionUnknown, "": event.ActionUnknown,
	}
	for name, want := range cases {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParser_Targets(t *testing.T) {
	p, _ := New(nil).newParser(fileSrc(t, fixLegacy), nil)
	s := &pi.Session{Cwd: "/nonexistent-openclaw/work"}
	cases := []struct{ tool, args, want string }{
		{"read", `{"path":"src/a.go"}`, "src/a.go"},
		{"read", `{"path":"/etc/hosts"}`, "/etc/hosts"},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Update File: b.go\n@@\n-x\n+y\n*** End Patch"}`, "b.go"},
		{"exec", `{"command":"go test ./...","workdir":"x"}`, "go test ./..."},
		{"exec", `{"code":"await read({path:'a'})"}`, "await read({path:'a'})"},
		{"ls", `{}`, "."},
		{"sessions_spawn", `{"task":"review","agentId":"ops"}`, "ops: review"},
		{"ask_user", `{"questions":[{"question":"which?"}]}`, "which?"},
		{"web_fetch", `{"url":"https://x.test/a"}`, "https://x.test/a"},
		{"browser", `{"action":"open"}`, "open"},
	}
	for _, c := range cases {
		if got := p.r.Target(s, c.tool, []byte(c.args)); got != c.want {
			t.Errorf("target(%s, %s) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	if tool, args := unwrap("tool_call", []byte(`{"id":"search:3:web_fetch","args":{"url":"u"}}`)); tool != "web_fetch" || string(args) != `{"url":"u"}` {
		t.Errorf("unwrap %q %s", tool, args)
	}
}
