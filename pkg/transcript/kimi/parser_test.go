package kimi

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// The fixtures (testdata/share, a share directory) are written here to the format of Kimi CLI's
// own source (see the package doc): kimi.json naming the work directory, a config.toml whose
// default model the pricing table prices, and one session in /home/dev/webapp whose wire holds a
// turn with thinking, a ReadFile, a Shell that fails, an MCP tool, an Agent whose subagent's
// messages are relayed (SubagentEvent), then a turn compacted and interrupted; the subagent's
// own wire beside it.
const (
	session  = "3f0c2a6e-8d41-4b7a-9c15-2e6f1d0b7a93"
	agent    = "a1b2c3d4"
	hashDir  = "c4cb87f347809193df45a28061551a36"
	workDir  = "/home/dev/webapp"
	theModel = "kimi-k2-turbo-preview"
)

func sessionsRoot() string { return filepath.Join("testdata", "share", "sessions") }

func mainWire() string { return filepath.Join(sessionsRoot(), hashDir, session, "wire.jsonl") }

func subWire() string {
	return filepath.Join(sessionsRoot(), hashDir, session, "subagents", agent, "wire.jsonl")
}

// lines splits data into its newline-terminated lines with their offsets, as the caller hands
// them to Record.
func lines(data []byte) (offs []int64, out [][]byte) {
	var off int64
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		offs = append(offs, off)
		out = append(out, data[:i])
		off += int64(i + 1)
		data = data[i+1:]
	}
	return offs, out
}

func newTestParser(tb testing.TB, path string, state []byte) *Parser {
	tb.Helper()
	abs, _ := filepath.Abs(path)
	a := New([]string{sessionsRoot()})
	p, err := a.NewParser(transcript.Source{Client: Client, Path: abs}, state)
	if err != nil {
		tb.Fatal(err)
	}
	return p.(*Parser)
}

// readLines feeds a parser lines [from, to) of a file.
func readLines(tb testing.TB, p *Parser, path string, from, to int) []event.Event {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	offs, ls := lines(data)
	if to < 0 || to > len(ls) {
		to = len(ls)
	}
	var evs []event.Event
	for i := from; i < to; i++ {
		got, err := p.Record(offs[i], ls[i])
		if err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
		evs = append(evs, got...)
	}
	return evs
}

func readAll(tb testing.TB, path string) ([]event.Event, *Parser) {
	tb.Helper()
	p := newTestParser(tb, path, nil)
	return readLines(tb, p, path, 0, -1), p
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

func TestAdapter_Discover(t *testing.T) {
	srcs, err := New([]string{sessionsRoot(), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 {
		t.Fatalf("Discover: %+v, want the session's wire and its subagent's", srcs)
	}
	if srcs[0].SessionID != session || srcs[0].AgentID != "" || !strings.HasSuffix(srcs[0].Path, filepath.Join(session, "wire.jsonl")) ||
		srcs[0].Document || srcs[0].Client != Client {
		t.Errorf("first source %+v: want the session's own wire, a line source", srcs[0])
	}
	if srcs[1].SessionID != session || srcs[1].AgentID != agent {
		t.Errorf("second source %+v: want the subagent's wire, of the parent session", srcs[1])
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("an absent root: %v, %v; want nothing and no error", srcs, err)
	}
}

func TestParser_Session(t *testing.T) {
	evs, p := readAll(t, mainWire())
	for _, e := range evs {
		if e.Client != Client || e.SessionID != session || e.ID == "" || e.Time.IsZero() || e.Project != workDir ||
			e.Source != Component {
			t.Fatalf("event %+v: want client kimi-cli, the session, an id, a time and the project", e)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("event %+v does not validate: %v", e, err)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) < 1 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != workDir ||
		!sess[0].Time.Equal(time.Date(2026, 2, 2, 2, 40, 0, 250e6, time.UTC)) {
		t.Fatalf("session events %+v: want started in %s at the first record's time", sess, workDir)
	}
	var models, epochs int
	for _, s := range sess[1:] {
		if s.Session.Model == theModel {
			models++
		}
		if s.Session.Epoch == 1 {
			epochs++
		}
	}
	if models != 1 || epochs != 1 {
		t.Errorf("session events %+v: want the model once and the compaction's epoch once", sess)
	}
	if p.Stats().Unknown["BtwNote"] != 1 || p.Stats().Malformed != 0 {
		t.Errorf("stats %+v: want the unknown type counted, nothing malformed", p.Stats())
	}
}

func TestParser_TokenUsage(t *testing.T) {
	evs, _ := readAll(t, mainWire())
	usage := byKind(evs, event.KindTokenUsage)
	want := map[string]event.Tokens{
		"chatcmpl-A1kq": {Input: 1562, Output: 120, CacheRead: 4864},
		"chatcmpl-A2mz": {Input: 310, Output: 45, CacheRead: 6400},
		"chatcmpl-A3pd": {Input: 220, Output: 80, CacheRead: 6700},
		"chatcmpl-S1xa": {Input: 900, Output: 60},
		"chatcmpl-S2yb": {Input: 150, Output: 40, CacheRead: 896},
		"chatcmpl-A4rs": {Input: 400, Output: 210, CacheRead: 7100},
	}
	if len(usage) != len(want) {
		t.Fatalf("%d usage events, want one per step with usage (%d; a StatusUpdate without token_usage is none)", len(usage), len(want))
	}
	var total event.Tokens
	for _, e := range usage {
		u := e.TokenUsage
		w, ok := want[u.MessageID]
		if !ok || u.Tokens != w {
			t.Errorf("usage %s: %+v, want %+v (input net of the cache, as Kimi CLI keeps it)", u.MessageID, u.Tokens, w)
		}
		if e.ID != event.ID(Client, "usage", session, u.MessageID) {
			t.Errorf("usage %s: id %s, want one derived from the message id", u.MessageID, e.ID)
		}
		if u.Model != theModel || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.Origin != "transcript" {
			t.Errorf("usage %s: %+v, want the configured model priced, approximate", u.MessageID, u)
		}
		if sub := strings.HasPrefix(u.MessageID, "chatcmpl-S"); sub != (u.AgentID == agent) {
			t.Errorf("usage %s: agent %q, want the subagent's steps to carry its id", u.MessageID, u.AgentID)
		}
		total.Input += u.Input
		total.Output += u.Output
		total.CacheRead += u.CacheRead
	}
	if total != (event.Tokens{Input: 3542, Output: 555, CacheRead: 25960}) {
		t.Errorf("totals %+v", total)
	}
	if a1 := usage[0]; !a1.Time.Equal(time.Date(2026, 2, 2, 2, 40, 1, 700e6, time.UTC)) {
		t.Errorf("first usage at %v, want its StatusUpdate's time", a1.Time)
	}
}

func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		a := e.Action
		key := string(a.Type)
		if a.ToolUseID != "" {
			key = a.ToolUseID
		}
		if prev, ok := out[key]; ok && a.Success == nil {
			_ = prev // the call; keep the result, read later
			continue
		}
		out[key] = a
	}
	return out
}

func TestParser_Actions(t *testing.T) {
	evs, _ := readAll(t, mainWire())
	acts := actions(evs)
	var prompts []string
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if strings.Join(prompts, "|") != "the login test fails one run in ten, find out why|now fix it" {
		t.Errorf("prompts %q: want the two turns' inputs (not the subagent's task)", prompts)
	}
	if a := acts["tool_Rd1"]; a == nil || a.Type != event.ActionReadFile || a.Target != "test/login.test.ts" ||
		a.Success == nil || !*a.Success || !strings.Contains(a.Output, "sleep(50)") || a.DurationMs != 300 || a.Tool != "ReadFile" {
		t.Errorf("read_file %+v: want the path relative to the project, succeeded in 300 ms, the content as output", a)
	}
	if a := acts["tool_Sh2"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "npm test -- login" ||
		a.Success == nil || *a.Success || !strings.Contains(a.Error, "exit code: 1") || !strings.Contains(a.Error, "1 failing") {
		t.Errorf("run_command %+v: want npm test, failed with Kimi's message and the output as the error", a)
	}
	if a := acts["tool_Mc3"]; a == nil || a.Type != event.ActionMCPCall || a.Target != "search_issues" ||
		a.Success == nil || !*a.Success || !strings.Contains(a.Output, "#412") {
		t.Errorf("mcp_call %+v: want the MCP tool (content-part result), succeeded", a)
	}
	if a := acts["tool_Ag4"]; a == nil || a.Type != event.ActionSpawnSubagent || a.Target != "Check CI logs" || a.Success == nil {
		t.Errorf("spawn_subagent %+v", a)
	}
	if a := acts["tool_Sb1"]; a == nil || a.Type != event.ActionSearchText || a.Target != "login in ci" ||
		a.AgentID != agent || !a.Sidechain || a.Success == nil || !*a.Success {
		t.Errorf("the subagent's grep %+v: want search_text in ci, the subagent's", a)
	}
	if acts[string(event.ActionTurnAborted)] == nil || acts[string(event.ActionContextCompacted)] == nil {
		t.Errorf("actions %v: want the interruption and the compaction", acts)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Message.AgentID != "" {
			t.Errorf("message %+v: relayed subagent messages are left to the subagent's own wire", e.Message)
		}
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,tool_call,tool_call,tool_call,assistant,user" {
		t.Errorf("message roles %s", got)
	}
}

// A subagent's own wire yields the same usage and action ids as its messages relayed into the
// parent's: each step and call is stored once.
func TestParser_SubagentFile(t *testing.T) {
	parent, _ := readAll(t, mainWire())
	evs, _ := readAll(t, subWire())
	ids := map[string]bool{}
	for _, e := range parent {
		ids[e.ID] = true
	}
	var usage, shared int
	for _, e := range evs {
		if e.SessionID != session || e.Project != workDir {
			t.Fatalf("event %+v: want the parent session and project", e)
		}
		switch e.Kind {
		case event.KindSession:
			if e.Session.State == event.SessionStarted {
				t.Errorf("a subagent's file started the session again: %+v", e)
			}
		case event.KindTokenUsage:
			usage++
			if !ids[e.ID] || e.TokenUsage.AgentID != agent {
				t.Errorf("usage %+v: want the id the parent's relay gave it, and the agent", e.TokenUsage)
			}
		case event.KindAction:
			if e.Action.Type == event.ActionUserPrompt {
				t.Errorf("the subagent's task is no user prompt: %+v", e.Action)
			}
			if ids[e.ID] {
				shared++
			}
		case event.KindMessage:
			if e.Message.AgentID != agent || !e.Message.Sidechain {
				t.Errorf("message %+v: want the subagent's", e.Message)
			}
		}
	}
	if usage != 2 || shared != 2 {
		t.Errorf("%d usage events, %d actions shared with the parent; want 2 and 2 (the grep's call and result)", usage, shared)
	}
}

// Read again from the start, a file yields the same events; read in two parts, the second parser
// resumed from the first's State, the same events too.
func TestParser_RereadAndResume(t *testing.T) {
	first, _ := readAll(t, mainWire())
	again, _ := readAll(t, mainWire())
	if len(first) != len(again) {
		t.Fatalf("a second read emitted %d events, the first %d", len(again), len(first))
	}
	for i := range first {
		if transcript.Fingerprint(&first[i]) != transcript.Fingerprint(&again[i]) {
			t.Fatalf("event %d differs on a second read: %+v, %+v", i, first[i], again[i])
		}
	}
	for _, cut := range []int{7, 14, 20} {
		p1 := newTestParser(t, mainWire(), nil)
		head := readLines(t, p1, mainWire(), 0, cut)
		p2 := newTestParser(t, mainWire(), p1.State())
		tail := readLines(t, p2, mainWire(), cut, -1)
		both := append(head, tail...)
		if len(both) != len(first) {
			t.Fatalf("cut at %d: %d events, want %d", cut, len(both), len(first))
		}
		for i := range first {
			if transcript.Fingerprint(&first[i]) != transcript.Fingerprint(&both[i]) {
				t.Fatalf("cut at %d: event %d differs: %+v, %+v", cut, i, first[i], both[i])
			}
		}
	}
}

func TestParser_Malformed(t *testing.T) {
	p := newTestParser(t, mainWire(), nil)
	good := []byte(`{"timestamp": 1770000100.5, "message": {"type": "TurnBegin", "payload": {"user_input": "still here"}}}`)
	bad := [][]byte{
		[]byte(`{"timestamp": 1770000100.1, "message": {"type": "ToolCall", "payload": {"id": "x", "funct`), // cut mid-write
		[]byte("{\"timestamp\": 1, \"message\": \"\xff\"}"),
		[]byte(`[1, 2]`),
		[]byte(`{"timestamp": 1770000100.2, "message": {"type": "ToolCall", "payload": "not an object"}}`),
		[]byte(`{"timestamp": 1770000100.3, "message": {"type": "StatusUpdate"}}`),
	}
	for _, line := range bad {
		evs, err := p.Record(0, line)
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v; want ErrMalformed and nothing", line, len(evs), err)
		} else if !strings.Contains(err.Error(), Client) {
			t.Errorf("%q: error %q does not name the client", line, err)
		}
	}
	evs, err := p.Record(1000, good)
	if err != nil || len(byKind(evs, event.KindAction)) != 1 {
		t.Errorf("the line after the bad ones: %v, %+v; want its prompt", err, evs)
	}
	if s := p.Stats(); s.Malformed != int64(len(bad)) || s.Lines != int64(len(bad)+1) {
		t.Errorf("stats %+v: want %d malformed of %d lines", s, len(bad), len(bad)+1)
	}
}

// Without a model the configuration names (or one the table does not price), usage is kept with
// no cost, "unknown".
func TestParser_UnpricedModel(t *testing.T) {
	share := t.TempDir()
	dir := filepath.Join(share, "sessions", WorkDirHash("/srv/app", ""), session)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(share, "config.toml"), []byte("default_model = \"kimi-code/kimi-for-coding\"\n"+
		"[models.\"kimi-code/kimi-for-coding\"]\nprovider = \"managed:kimi-code\"\nmodel = \"kimi-for-coding\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := New([]string{filepath.Join(share, "sessions")}).NewParser(transcript.Source{Client: Client, Path: filepath.Join(dir, "wire.jsonl")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, []byte(`{"timestamp": 1770000000, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 10, "output": 5, "input_cache_read": 0, "input_cache_creation": 2}, "message_id": "m1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	u := byKind(evs, event.KindTokenUsage)
	if len(u) != 1 || u[0].TokenUsage.Model != "kimi-for-coding" || u[0].TokenUsage.CostUSD != 0 ||
		u[0].TokenUsage.Reliability != event.ReliabilityUnknown || u[0].TokenUsage.Tokens != (event.Tokens{Input: 10, Output: 5, CacheCreation: 2}) {
		t.Errorf("usage %+v: want kimi-for-coding, unpriced, unknown, its figures", u)
	}
	if u[0].Project != "" {
		t.Errorf("project %q: kimi.json is absent, the directory unknown", u[0].Project)
	}
}

func TestWorkDirHash(t *testing.T) {
	if got := WorkDirHash(workDir, "local"); got != hashDir {
		t.Errorf("WorkDirHash(%s) = %s, want %s", workDir, got, hashDir)
	}
	if got := WorkDirHash(workDir, "ssh"); got != "ssh_"+hashDir {
		t.Errorf("a non-local kaos: %s", got)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvShareDir, "/tmp/kimi-share")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/kimi-share/sessions" {
		t.Errorf("DefaultRoots with %s: %v", EnvShareDir, got)
	}
	home, _ := os.UserHomeDir()
	t.Setenv(EnvShareDir, "~/kimi")
	if got := DefaultRoots(); got[0] != filepath.Join(home, "kimi", "sessions") {
		t.Errorf("DefaultRoots with ~: %v", got)
	}
	t.Setenv(EnvShareDir, "")
	if got := DefaultRoots(); got[0] != filepath.Join(home, ".kimi", "sessions") {
		t.Errorf("DefaultRoots (Linux and macOS alike): %v", got)
	}
}

// Kimi K2 numbers tool calls functions.<name>:<n> from 0 in every conversation: the session's
// and a subagent's first Shell are both functions.Shell:0, and the count may start again once a
// context is compacted. Each is its own action, and the subagent's relayed copy and its own
// wire still name it alike.
func TestParser_ToolCallIDsPerAgentAndEpoch(t *testing.T) {
	const at = `{"timestamp": 1770000100.%d, "message": %s}`
	relay := func(msg string) string {
		return `{"type": "SubagentEvent", "payload": {"parent_tool_call_id": "functions.Agent:1", "agent_id": "` + agent +
			`", "subagent_type": "explore", "event": ` + msg + `}}`
	}
	callMsg := func(cmd string) string {
		return `{"type": "ToolCall", "payload": {"type": "function", "id": "functions.Shell:0", "function": {"name": "Shell", "arguments": "{\"command\": \"` + cmd + `\"}"}}}`
	}
	resultMsg := func(isErr bool) string {
		e := "false"
		if isErr {
			e = "true"
		}
		return `{"type": "ToolResult", "payload": {"tool_call_id": "functions.Shell:0", "return_value": {"is_error": ` + e + `, "output": "done", "message": ""}}}`
	}
	const compaction = `{"type": "CompactionBegin", "payload": {}}`
	feed := func(p *Parser, off int64, msgs ...string) []event.Event {
		t.Helper()
		var evs []event.Event
		for i, m := range msgs {
			got, err := p.Record(off+int64(i)*1000, []byte(fmt.Sprintf(at, i, m)))
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, byKind(got, event.KindAction)...)
		}
		return evs
	}

	parent := newTestParser(t, mainWire(), nil)
	evs := feed(parent, 100000,
		callMsg("make build"),        // the session's functions.Shell:0
		relay(callMsg("ls ci")),      // the subagent's functions.Shell:0
		relay(resultMsg(false)),      // its result
		resultMsg(true),              // the session's result
		compaction,                   // the session's context compacted: its count starts again
		callMsg("make test"),         // the session's functions.Shell:0 again
		resultMsg(false),             //
		relay(compaction),            // the subagent's context compacted
		relay(callMsg("ls ci/logs")), // its functions.Shell:0 again
		relay(resultMsg(false)),      //
	)
	var acts []*event.Action
	var ids []string
	for _, e := range evs {
		if e.Action.ToolUseID != "" {
			acts = append(acts, e.Action)
			ids = append(ids, e.ID)
		}
	}
	if len(acts) != 8 {
		t.Fatalf("%d tool actions, want 8: %+v", len(acts), acts)
	}
	pairs := [][2]int{{0, 3}, {1, 2}, {4, 5}, {6, 7}}
	for _, pr := range pairs {
		if ids[pr[0]] != ids[pr[1]] {
			t.Errorf("call %d and its result %d have ids %s and %s, want one", pr[0], pr[1], ids[pr[0]], ids[pr[1]])
		}
	}
	for i := range pairs {
		for j := i + 1; j < len(pairs); j++ {
			if ids[pairs[i][0]] == ids[pairs[j][0]] {
				t.Errorf("calls %d and %d (both functions.Shell:0) share id %s", pairs[i][0], pairs[j][0], ids[pairs[i][0]])
			}
		}
	}
	for i, want := range []struct {
		target, agent string
		ok            bool
	}{{"make build", "", false}, {"ls ci", agent, true}, {"make test", "", true}, {"ls ci/logs", agent, true}} {
		r := acts[pairs[i][1]]
		if r.Type != event.ActionRunCommand || r.Target != want.target || r.AgentID != want.agent || r.Success == nil ||
			*r.Success != want.ok {
			t.Errorf("result %d: %+v, want run_command %q of agent %q, success %v (its own call's)", i, r, want.target, want.agent, want.ok)
		}
	}

	// The subagent's own wire, read in two parts, names its calls as the relayed copies did.
	sub := newTestParser(t, subWire(), nil)
	own := feed(sub, 100000, callMsg("ls ci"), resultMsg(false), compaction)
	sub = newTestParser(t, subWire(), sub.State())
	own = append(own, feed(sub, 200000, callMsg("ls ci/logs"), resultMsg(false))...)
	var ownIDs []string
	for _, e := range own {
		if e.Action.ToolUseID != "" {
			ownIDs = append(ownIDs, e.ID)
		}
	}
	if len(ownIDs) != 4 || ownIDs[0] != ids[1] || ownIDs[1] != ids[2] || ownIDs[2] != ids[6] || ownIDs[3] != ids[7] {
		t.Errorf("the subagent's own wire: ids %v, want the relayed copies' %v", ownIDs, []string{ids[1], ids[2], ids[6], ids[7]})
	}

	// A parser resumed from the session's state still knows the subagent's epoch.
	resumed := newTestParser(t, mainWire(), parent.State())
	again := feed(resumed, 300000, relay(callMsg("ls ci/logs")))
	if len(again) != 1 || again[0].ID != ids[6] {
		t.Errorf("resumed: %+v, want the subagent's call in its second epoch (%s)", again, ids[6])
	}
}
