package pi

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures under testdata/agent were written by pi 0.73.1 itself against observer-fakeapi
// (every response: input 120, output 45, cache read 1000, Anthropic cache writes 200 + 100): one
// session per API (openai-responses, openai-completions, anthropic-messages), an RPC session with
// a user shell command, a compaction, a session name, and then (through pi's own SessionManager) a
// branch back to an earlier entry with a summary, a grep call and a label; and the /fork of that
// session taken before the branch was added. testdata/flat holds a version 1 session written by
// hand in the format of the corpus's files, and testdata/migration/v3.jsonl the same file as pi
// rewrote it when it opened it.
const (
	fixtureDir   = "testdata/agent/sessions/--tmp-piwork-proj--"
	fixResponses = fixtureDir + "/2026-12-01T17-29-18-302Z_01a232a7-5add-7470-9c04-d55218cae550.jsonl"
	fixChat      = fixtureDir + "/2026-12-01T17-29-20-001Z_01a232a7-6180-71a5-8b0c-822dc5e6ac93.jsonl"
	fixAnthropic = fixtureDir + "/2026-12-01T17-29-21-970Z_01a232a7-6931-7399-acfa-f9d59ad28296.jsonl"
	fixRPC       = fixtureDir + "/2026-12-01T17-29-29-235Z_01a232a7-8593-7623-94d9-fa00e7e2150c.jsonl"
	fixFork      = fixtureDir + "/2026-12-01T17-29-48-570Z_01a232a7-d119-7620-9895-7eee5b81d6de.jsonl"
	fixV1        = "testdata/flat/2025-11-02T09-00-00-000Z_0b1c2d3e-0000-4000-8000-000000000001.jsonl"
	fixMigrated  = "testdata/migration/v3.jsonl"
)

func usages(evs []event.Event) []*event.TokenUsage {
	_, byID := transcripttest.Merge(evs)
	var out []*event.TokenUsage
	seen := map[string]bool{}
	for _, e := range evs {
		if e.TokenUsage != nil && !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, byID[e.ID].TokenUsage)
		}
	}
	return out
}

func idSet(evs []event.Event) map[string]bool {
	m := map[string]bool{}
	for _, e := range evs {
		m[e.ID] = true
	}
	return m
}

func TestParser_Responses(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(fixResponses))
	s := summarize(evs, p)
	if s.SessionID != "01a232a7-5add-7470-9c04-d55218cae550" || s.Project == "" || s.Malformed != 0 {
		t.Errorf("summary %+v", s)
	}
	if len(s.Prompts) != 1 || s.Prompts[0] != "list the files here" {
		t.Errorf("prompts %q", s.Prompts)
	}
	acts := transcripttest.ActionsOf(evs)
	if len(acts) != 1 {
		t.Fatalf("actions %+v", acts)
	}
	a := acts[0]
	if a.Type != event.ActionRunCommand || a.Tool != "bash" || a.Target != "ls" || a.ToolUseID != "call_fake_3|fc_fake_2" ||
		a.Success == nil || !*a.Success || a.Output != "hello.txt\n" || a.MessageID != "resp_fake_1" ||
		a.Model != "gpt-5.2-codex" || a.DurationMs != 17 || a.InputHash == "" {
		t.Errorf("action %+v", a)
	}
	us := usages(evs)
	if len(us) != 2 {
		t.Fatalf("usages %+v", us)
	}
	for _, u := range us {
		// OpenAI's input_tokens 1120 include the 1000 cached; pi logged input 120 already net.
		if (u.Tokens != event.Tokens{Input: 120, CacheRead: 1000, Output: 45}) {
			t.Errorf("tokens %+v", u.Tokens)
		}
		// pi priced the custom model at 0; observer's table knows gpt-5.2-codex.
		want, _ := pricing.Default().CostAt("gpt-5.2-codex", u.Tokens, evs[0].Time)
		if u.CostUSD != want || u.CostUSD == 0 || u.Reliability != event.ReliabilityApproximate || u.Origin != "transcript" {
			t.Errorf("cost %v (want %v) %s", u.CostUSD, want, u.Reliability)
		}
	}
	if us[0].MessageID != "resp_fake_1" || us[1].MessageID != "resp_fake_5" {
		t.Errorf("message ids %q %q", us[0].MessageID, us[1].MessageID)
	}
	var started *event.Session
	for _, e := range evs {
		if e.Session != nil && e.Session.State == event.SessionStarted {
			started = e.Session
		}
	}
	if started == nil || started.Cwd != "/tmp/piwork/proj" || started.StartedAt.IsZero() ||
		!strings.HasSuffix(started.TranscriptPath, ".jsonl") || started.ParentSessionID != "" {
		t.Errorf("started %+v", started)
	}
}

func TestParser_AnthropicCacheWrites(t *testing.T) {
	evs, _ := parseFile(t, New(nil), srcOf(fixAnthropic))
	for _, u := range usages(evs) {
		// The fake API wrote 200 five-minute and 100 one-hour tokens; pi logs their sum.
		if (u.Tokens != event.Tokens{Input: 120, CacheRead: 1000, CacheCreation: 300, Output: 45}) {
			t.Errorf("tokens %+v", u.Tokens)
		}
	}
	acts := transcripttest.ActionsOf(evs)
	if len(acts) != 1 || acts[0].Type != event.ActionReadFile || acts[0].Success == nil || *acts[0].Success ||
		!strings.Contains(acts[0].Error, "Validation failed") || acts[0].Target != "" {
		t.Errorf("actions %+v", acts)
	}
}

func TestParser_ChatCompletions(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(fixChat))
	s := summarize(evs, p)
	if s.Usage.Messages != 2 || s.Usage.Input != 240 || s.Usage.CacheRead != 2000 || s.Tools["bash"] != 1 {
		t.Errorf("summary %+v", s)
	}
}

// The RPC session holds a "!" command, a compaction, a session name, a branch_summary that starts
// a second branch from an earlier entry, and a label: every entry counts once, whichever branch.
func TestParser_BranchesAndCompaction(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(fixRPC))
	s := summarize(evs, p)
	if s.Malformed != 0 || len(s.Unknown) != 0 {
		t.Errorf("malformed %d unknown %v", s.Malformed, s.Unknown)
	}
	want := []string{"list the files", "second prompt", "try it another way: grep for TODO"}
	if !slices.Equal(s.Prompts, want) {
		t.Errorf("prompts %q, want %q (both branches)", s.Prompts, want)
	}
	if s.Usage.Messages != 4 || s.Actions["context_compacted"] != 1 {
		t.Errorf("usage %+v actions %v", s.Usage, s.Actions)
	}
	_, byID := transcripttest.Merge(evs)
	var bash, grep, compact *event.Action
	var epoch int
	for _, e := range byID {
		switch {
		case e.Action != nil && e.Action.Tool == "bashExecution":
			bash = e.Action
		case e.Action != nil && e.Action.Tool == "grep":
			grep = e.Action
		case e.Action != nil && e.Action.Type == event.ActionContextCompacted:
			compact = e.Action
		case e.Session != nil && e.Session.Epoch > 0:
			epoch = e.Session.Epoch
		}
	}
	if bash == nil || bash.Type != event.ActionRunCommand || bash.Target != "echo hi; exit 3" || bash.Success == nil ||
		*bash.Success || bash.Error != "exit code 3" || bash.Output != "hi\n" {
		t.Errorf("bash %+v", bash)
	}
	if grep == nil || grep.Type != event.ActionSearchText || grep.Target != "TODO in src" || grep.DurationMs != 900 ||
		grep.MessageID != "msg_branch_1" || grep.Success == nil || !*grep.Success {
		t.Errorf("grep %+v", grep)
	}
	if compact == nil || compact.Target != "tokens before: 1470" || epoch != 1 {
		t.Errorf("compaction %+v epoch %d", compact, epoch)
	}
	// The branch's message carries pi's own cost, but the table prices claude-sonnet-4-5.
	for _, u := range usages(evs) {
		if u.MessageID == "msg_branch_1" {
			want := (10*3.0 + 20*15 + 3000*0.3 + 500*3.75) / 1e6
			if math.Abs(u.CostUSD-want) > 1e-9 || u.Reliability != event.ReliabilityApproximate {
				t.Errorf("cost %v, want %v", u.CostUSD, want)
			}
		}
	}
}

// A /fork copies the entries verbatim into a new file: the copies yield the source's ids, so only
// the fork's own entries are new.
func TestParser_ForkStoresCopiesOnce(t *testing.T) {
	a := New(nil)
	src, _ := parseFile(t, a, srcOf(fixRPC))
	fork, _ := parseFile(t, a, srcOf(fixFork))
	have := idSet(src)
	var newUsage, newPrompts int
	var parent string
	for _, e := range fork {
		if e.SessionID != "01a232a7-d119-7620-9895-7eee5b81d6de" {
			t.Errorf("event of session %q", e.SessionID)
		}
		if e.Session != nil && e.Session.State == event.SessionStarted {
			parent = e.Session.ParentSessionID
		}
		if have[e.ID] {
			continue
		}
		switch {
		case e.TokenUsage != nil:
			newUsage++
		case e.Action != nil && e.Action.Type == event.ActionUserPrompt:
			newPrompts++
		case e.Action != nil:
			t.Errorf("copied action stored again: %+v", e.Action)
		}
	}
	if newUsage != 1 || newPrompts != 1 {
		t.Errorf("new usage %d, new prompts %d; want the fork's own 1 and 1", newUsage, newPrompts)
	}
	if parent != "01a232a7-8593-7623-94d9-fa00e7e2150c" {
		t.Errorf("parent %q", parent)
	}
}

func TestParser_V1(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(fixV1))
	s := summarize(evs, p)
	if s.Malformed != 0 || len(s.Unknown) != 0 || p.st.Version != 1 {
		t.Errorf("malformed %d unknown %v version %d", s.Malformed, s.Unknown, p.st.Version)
	}
	if !slices.Equal(s.Prompts, []string{"read @README.md and fix the typo", "now run the tests"}) {
		t.Errorf("prompts %q (the hookMessage is no prompt)", s.Prompts)
	}
	wantSessions := []string{"started", "active claude-sonnet-4-5", "active epoch 1", "active gpt-5.1-codex"}
	if !slices.Equal(s.Sessions, wantSessions) {
		t.Errorf("sessions %q", s.Sessions)
	}
	for _, e := range evs {
		if e.Session != nil && e.Session.State == event.SessionStarted && e.Session.ParentSessionID != "0b1c2d3e-0000-4000-8000-000000000000" {
			t.Errorf("parent %q (from branchedFrom)", e.Session.ParentSessionID)
		}
	}
	var got []string
	for _, a := range transcripttest.ActionsOf(evs) {
		ok := "?"
		if a.Success != nil && *a.Success {
			ok = "ok"
		} else if a.Success != nil {
			ok = "failed"
		}
		got = append(got, string(a.Type)+"("+a.Target+") "+ok)
	}
	want := []string{"read_file(README.md) ok", "edit_file(README.md) ok", "run_command(go test ./...) failed"}
	if !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	// The aborted message used nothing; the failed request was billed its prompt.
	if s.Usage.Messages != 4 || s.Actions["turn_aborted"] != 1 || s.Actions["api_error"] != 1 ||
		s.ByModel["gpt-5.1-codex"].Input != 900+950 || s.ByModel["claude-sonnet-4-5"].CacheCreation != 5320 {
		t.Errorf("usage %+v by model %+v actions %v", s.Usage, s.ByModel["gpt-5.1-codex"], s.Actions)
	}
	_, byID := transcripttest.Merge(evs)
	for _, e := range byID {
		if a := e.Action; a != nil && a.Type == event.ActionAPIError && a.Error != "429 Rate limit reached for requests" {
			t.Errorf("api error %+v", a)
		}
	}
	// The table's price for the first message is the one pi logged.
	if u := usages(evs)[0]; math.Abs(u.CostUSD-0.020409) > 1e-9 {
		t.Errorf("cost %v", u.CostUSD)
	}
}

// pi rewrites a version 1 file in place when it opens it (ids, parentIds and the version added to
// every line): the reader's cursor then lies inside a line. That line is malformed, and the lines
// after it, read again, add nothing new.
func TestParser_MigrationRewrite(t *testing.T) {
	a := New(nil)
	v1 := transcripttest.ReadLines(t, fixV1)
	v3, err := os.ReadFile(fixMigrated)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := parseFile(t, a, srcOf(fixV1))
	want := idSet(all)
	fresh, p3 := parseFile(t, a, srcOf(fixMigrated))
	if p3.st.Version != 3 || !mapsEqual(idSet(fresh), want) {
		t.Errorf("the migrated file read alone: version %d, %d ids, want the v1 file's %d", p3.st.Version, len(idSet(fresh)), len(want))
	}
	for _, cut := range []int{1, 6, 11, 14} { // lines read before the rewrite; 11: past the compaction
		p, _ := a.newParser(srcOf(fixV1), nil)
		var off int
		var evs []event.Event
		for _, l := range v1[:cut] {
			e, _ := p.Record(int64(off), l)
			evs = append(evs, e...)
			off += len(l) + 1
		}
		p2, err := a.newParser(srcOf(fixV1), p.State())
		if err != nil {
			t.Fatal(err)
		}
		rest := bytes.Split(bytes.TrimSuffix(v3[off:], []byte("\n")), []byte("\n"))
		var malformed int
		for i, l := range rest {
			e, err := p2.Record(int64(i), l)
			if errors.Is(err, transcript.ErrMalformed) {
				malformed++
			}
			check(t, e)
			evs = append(evs, e...)
		}
		if malformed != 1 {
			t.Errorf("cut %d: %d malformed lines, want 1 (the line the cursor lands in)", cut, malformed)
		}
		for id := range idSet(evs) {
			if !want[id] {
				t.Errorf("cut %d: new id %s after the rewrite", cut, id)
			}
		}
		if p2.st.Epoch != 1 {
			t.Errorf("cut %d: epoch %d, want 1", cut, p2.st.Epoch)
		}
	}
}

func TestParser_Malformed(t *testing.T) {
	header := `{"type":"session","version":3,"id":"00000000-0000-4000-8000-00000000000a","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w"}`
	user := `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767348001000}}`
	// pi stopped while appending a line; the next append went on from there.
	half := `{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assis` + user
	lines := []string{header, half, "\xff\xfe{}", `[1,2]`, `{"type":"message","message":"text"}`, `{"type":"message"`,
		`{"type":7}`, `{"type":"new_kind","id":"x"}`, `{"type":"message","id":"b","timestamp":"2026-01-02T10:00:03.000Z","message":{"role":"robot"}}`,
		"", `{"no":"type"}`, user}
	p, err := New(nil).newParser(srcOf("/x/2026-01-02T10-00-00-000Z_00000000-0000-4000-8000-00000000000a.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	var bad int
	for _, l := range lines {
		e, err := p.Record(0, []byte(l))
		if err != nil {
			if !errors.Is(err, transcript.ErrMalformed) {
				t.Errorf("%q: error %v does not wrap ErrMalformed", l, err)
			}
			bad++
		}
		check(t, e)
		evs = append(evs, e...)
	}
	st := p.Stats()
	if bad != 6 || st.Malformed != 6 || st.Lines != int64(len(lines)) {
		t.Errorf("malformed %d, stats %+v", bad, st)
	}
	if st.Unknown["new_kind"] != 1 || st.Unknown["message/robot"] != 1 || st.Unknown["(no type)"] != 1 {
		t.Errorf("unknown %v", st.Unknown)
	}
	var prompts int
	for _, e := range evs {
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			prompts++
		}
	}
	if prompts != 1 { // the last line; the same prompt inside the half-written line is lost with it
		t.Errorf("prompts %d", prompts)
	}
}

func TestParser_Cost(t *testing.T) {
	table := pricing.New(map[string]pricing.Price{"known-model": {Input: 1, Output: 2, CacheRead: 0.5, CacheWrite5m: 1.5}})
	a := &Adapter{Prices: table}
	line := func(model, served string, piCost string) string {
		return `{"type":"message","id":"m","parentId":null,"timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[],` +
			`"provider":"x","model":"` + model + `","responseModel":"` + served + `","responseId":"r-` + model + `",` +
			`"usage":{"input":1000000,"output":1000000,"cacheRead":2000000,"cacheWrite":1000000,"totalTokens":5000000,"cost":{"total":` + piCost + `}},` +
			`"stopReason":"stop","timestamp":1767348002000}}`
	}
	cases := []struct {
		model, served, piCost string
		usd                   float64
		rel                   event.Reliability
	}{
		{"known-model", "", "99", 1 + 2 + 1 + 1.5, event.ReliabilityApproximate},
		{"alias", "known-model", "99", 5.5, event.ReliabilityApproximate},
		{"custom", "", "0.25", 0.25, event.ReliabilityApproximate},
		{"custom", "", "0", 0, event.ReliabilityUnknown},
		{"custom", "", "-3", 0, event.ReliabilityUnknown},
	}
	for _, c := range cases {
		evs, _ := parseLines(t, a, "/x/s.jsonl", line(c.model, c.served, c.piCost))
		us := usages(evs)
		if len(us) != 1 || math.Abs(us[0].CostUSD-c.usd) > 1e-9 || us[0].Reliability != c.rel {
			t.Errorf("%+v: %+v", c, us)
		}
	}
}

// A parser resumed from its State at every line produces what one pass does.
func TestParser_Resume(t *testing.T) {
	a := New(nil)
	for _, path := range []string{fixRPC, fixV1, fixResponses} {
		once, _ := parseFile(t, a, srcOf(path))
		resumed, _ := transcripttest.Resumed(t, a, srcOf(path))
		if string(transcripttest.MustJSON(t, resumed)) != string(transcripttest.MustJSON(t, once)) {
			t.Errorf("%s: resumed events differ from one pass", filepath.Base(path))
		}
	}
}

func TestParser_Scrubs(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	evs, _ := parseLines(t, New(nil), "/x/s.jsonl",
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":"use OPENAI_API_KEY=`+key+`","timestamp":1767348001000}}`,
		`{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"OPENAI_API_KEY=`+key+` run"}}],"model":"m","usage":{"input":1},"stopReason":"toolUse","timestamp":1767348002000}}`,
		`{"type":"message","id":"r","parentId":"a","timestamp":"2026-01-02T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"key `+key+`"}],"isError":true,"timestamp":1767348003000}}`,
		`{"type":"message","id":"b","parentId":"r","timestamp":"2026-01-02T10:00:04.000Z","message":{"role":"bashExecution","command":"echo `+key+`","output":"`+key+`","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767348004000}}`)
	for _, e := range evs {
		if strings.Contains(string(transcripttest.MustJSON(t, e)), key) {
			t.Errorf("secret left in %+v", e.Action)
		}
	}
}

func TestToolType(t *testing.T) {
	cases := map[string]event.ActionType{
		"read": event.ActionReadFile, "Read": event.ActionReadFile, "write": event.ActionWriteFile,
		"edit": event.ActionEditFile, "bash": event.ActionRunCommand, "grep": event.ActionSearchText,
		"find": event.ActionSearchFiles, "ls": event.ActionSearchFiles, "subagent": event.ActionSpawnSubagent,
		"todo": event.ActionTodoUpdate, "questionnaire": event.ActionAskUser, "web_search": event.ActionWebSearch,
		"fetch": event.ActionWebFetch, "mcp": event.ActionMCPCall, "mcp__github__list_issues": event.ActionMCPCall,
		"tic_tac_toe": event.ActionUnknown, "": event.ActionUnknown,
	}
	for name, want := range cases {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParser_Targets(t *testing.T) {
	p, _ := New(nil).newParser(srcOf("/x/s.jsonl"), nil)
	p.st.Cwd = "/nonexistent-pi-test/proj"
	cases := []struct{ tool, args, want string }{
		{"read", `{"path":"/nonexistent-pi-test/proj/src/a.go"}`, "src/a.go"},
		{"read", `{"path":"@src/b.go","offset":3}`, "src/b.go"},
		{"write", `{"path":"/etc/hosts","content":"x"}`, "/etc/hosts"},
		{"edit", `{"path":"c.go","edits":[{"oldText":"a","newText":"b"}]}`, "c.go"},
		{"bash", `{"command":"go test ./...","timeout":60}`, "go test ./..."},
		{"grep", `{"pattern":"TODO","path":"src","glob":"*.go"}`, "TODO in src"},
		{"find", `{"pattern":"*.md"}`, "*.md"},
		{"ls", `{}`, "."},
		{"ls", `{"path":"docs"}`, "docs"},
		{"subagent", `{"agent":"scout","task":"find the parser"}`, "scout: find the parser"},
		{"subagent", `{"tasks":[{"agent":"a","task":"one"},{"agent":"b","task":"two"}]}`, "a: one"},
		{"questionnaire", `{"questions":[{"id":"q","question":"Which one?"}]}`, "Which one?"},
		{"web_fetch", `{"url":"https://example.com"}`, "https://example.com"},
		{"custom_tool", `{"file_path":"/nonexistent-pi-test/proj/x"}`, "x"},
		{"custom_tool", `{"query":"q"}`, "q"},
		{"bash", `not json`, ""},
	}
	for _, c := range cases {
		if got := p.r.Target(&p.st.Session, c.tool, []byte(c.args)); got != c.want {
			t.Errorf("%s %s: target %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// TestFixtures_Golden keeps the figures of the fixtures in testdata/golden, as for the corpus.
func TestFixtures_Golden(t *testing.T) {
	for _, path := range []string{fixResponses, fixChat, fixAnthropic, fixRPC, fixFork, fixV1, fixMigrated} {
		name := "fixture-" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			evs, p := parseFile(t, New(nil), srcOf(path))
			transcripttest.Golden(t, filepath.Join("testdata", "golden", name+".golden.json"), summarize(evs, p), *update)
		})
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// A message time past the year 9999 is no time (the event could not be encoded as JSON).
func TestMessageTime_Bounds(t *testing.T) {
	for raw, ok := range map[string]bool{"1767225600000": true, "253402300799999": true, "253402300800000": false, "9e15": false, "1000": false} {
		if _, got := MessageTime([]byte(raw)); got != ok {
			t.Errorf("MessageTime(%s) ok = %v, want %v", raw, got, ok)
		}
	}
}
