package compress

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// bigJSON is a listing like the ones agents read: n records of an API's response.
func bigJSON(n int) string {
	var b strings.Builder
	b.WriteString(`{"kind":"list","items":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"service-%04d","owner":"team-%d@example.com","description":"Handles the %d-th shard of the billing pipeline and its retries","tags":["prod","eu-west-1","tier-%d"],"healthy":%t}`,
			i, i, i%7, i, i%3, i%5 != 0)
	}
	b.WriteString(`],"total":` + fmt.Sprint(n) + `}`)
	return b.String()
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// anthropicBody is a Claude Code-like request: system and tools with breakpoints, then turns.
func anthropicBody(msgs ...string) []byte {
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,` +
		`"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"Bash","description":"Runs a command. Use it for builds and tests.\n\nLong usage notes follow here.","input_schema":{"type":"object","properties":{"command":{"type":"string","description":"The command to run. It runs in a shell."}},"required":["command"]}}],` +
		`"messages":[` + strings.Join(msgs, ",") + `]}`)
}

func userText(s string) string {
	return `{"role":"user","content":[{"type":"text","text":` + js(s) + `}]}`
}

func toolUse(id, cmd string) string {
	return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":` + js(cmd) + `}}]}`
}

func toolResult(id, out string, cache bool) string {
	cc := ""
	if cache {
		cc = `,"cache_control":{"type":"ephemeral"}`
	}
	return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + js(out) + cc + `}]}`
}

func mustNew(t *testing.T, o Options) *Compressor {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// messagesOf decodes a body's messages (or input) array, each element kept raw.
func messagesOf(t *testing.T, body []byte, key string) []json.RawMessage {
	t.Helper()
	var v map[string]json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("the body is not JSON: %v\n%s", err, body)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(v[key], &msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// The newest tool output is compressed (it is after the model's last turn: the upstream has not
// cached it), the older ones are left as they came, the breakpoint stays where the client put it,
// and in the next request the output compressed before is compressed the same, byte for byte.
func TestRequest_CacheAwareCompressesOnlyNewOutputs(t *testing.T) {
	c := mustNew(t, Options{})
	old := bigJSON(300)
	first := anthropicBody(userText("list the services"), toolUse("t1", "cat services.json"), toolResult("t1", old, true))
	res, err := c.Request(APIAnthropic, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decisions) != 1 || res.Decisions[0].Mechanism != string(KindJSON) {
		t.Fatalf("decisions = %+v, want one json compression", res.Decisions)
	}
	if float64(len(res.Body)) > 0.3*float64(len(first)) {
		t.Errorf("body %d → %d bytes: the 300-record listing should shrink far more", len(first), len(res.Body))
	}
	m1 := messagesOf(t, res.Body, "messages")
	if !bytes.Contains(m1[2], []byte(`"cache_control":{"type":"ephemeral"}`)) {
		t.Errorf("the client's breakpoint is gone: %s", m1[2])
	}

	// The next turn: the model answered, the client sends the conversation again with a new output.
	second := anthropicBody(userText("list the services"), toolUse("t1", "cat services.json"), toolResult("t1", old, false),
		toolUse("t2", "cat services.json"), toolResult("t2", bigJSON(200), true))
	res2, err := c.Request(APIAnthropic, second)
	if err != nil {
		t.Fatal(err)
	}
	m2 := messagesOf(t, res2.Body, "messages")
	if !bytes.Equal(withoutCacheControl(m1[2]), withoutCacheControl(m2[2])) {
		t.Errorf("the output compressed in the first request is sent differently in the second:\n%s\n%s", m1[2], m2[2])
	}
	if len(res2.Decisions) != 2 {
		t.Errorf("decisions = %d, want 2 (the earlier output again, the new one)", len(res2.Decisions))
	}

	// A proxy that never saw the first request (started mid-session) leaves the old output alone.
	fresh := mustNew(t, Options{})
	res3, _ := fresh.Request(APIAnthropic, second)
	m3 := messagesOf(t, res3.Body, "messages")
	if !bytes.Equal(m3[2], messagesOf(t, second, "messages")[2]) {
		t.Error("an output the upstream may have cached as it was got compressed")
	}
	if len(res3.Decisions) != 1 {
		t.Errorf("decisions = %d, want 1 (only the new output)", len(res3.Decisions))
	}
	// And it stays uncompressed for good, even in a request where it would look new.
	res4, _ := fresh.Request(APIAnthropic, anthropicBody(userText("again"), toolResult("t1", old, false)))
	if len(res4.Decisions) != 0 {
		t.Errorf("an output sent once as it was got compressed later: %+v", res4.Decisions)
	}
}

// withoutCacheControl removes the client's breakpoint markers, which move from turn to turn.
func withoutCacheControl(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`,"cache_control":{"type":"ephemeral"}`), nil)
}

func TestRequest_SmallOutputsAndUnknownBodiesUntouched(t *testing.T) {
	c := mustNew(t, Options{})
	body := anthropicBody(userText("hi"), toolUse("t1", "ls"), toolResult("t1", "a.go\nb.go\n", true))
	res, err := c.Request(APIAnthropic, body)
	if err != nil || len(res.Decisions) != 0 || !bytes.Equal(res.Body, body) {
		t.Errorf("a small output was changed: err=%v decisions=%+v", err, res.Decisions)
	}
	for _, bad := range []string{`not json`, `{"messages":`, `[1,2]`, `{"model":"m"}`, `{"messages":[1]}`, `{"messages":[]} x`} {
		res, err := c.Request(APIAnthropic, []byte(bad))
		if err == nil {
			t.Errorf("%q: no error", bad)
		}
		if string(res.Body) != bad {
			t.Errorf("%q: body changed to %q", bad, res.Body)
		}
	}
}

// Token mode compresses every output, then drops the least important old exchanges as whole
// tool_use/tool_result pairs, keeping the system prompt, the first prompt and the tail.
func TestRequest_TokenModeDrops(t *testing.T) {
	c := mustNew(t, Options{Mode: ModeToken, TargetRatio: 0.2, PreserveTail: 2})
	msgs := []string{userText("fix the build")}
	for i := range 8 {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, toolUse(id, fmt.Sprintf("go build ./pkg%d", i)),
			toolResult(id, strings.Repeat(fmt.Sprintf("pkg%d/file.go:%d: undefined: thing\n", i, i), 40+i), i == 7))
	}
	body := anthropicBody(msgs...)
	res, err := c.Request(APIAnthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for _, d := range res.Decisions {
		if d.Mechanism == MechDrop {
			drops += d.Count
			if d.Index < 1 || d.Index+d.Count > len(msgs)-2 {
				t.Errorf("dropped messages %d..%d: outside the droppable middle", d.Index, d.Index+d.Count-1)
			}
		}
	}
	if drops == 0 || drops%2 != 0 {
		t.Fatalf("dropped %d messages, want whole pairs: %+v", drops, res.Decisions)
	}
	out := messagesOf(t, res.Body, "messages")
	if len(out) != len(msgs)-drops {
		t.Errorf("%d messages left, want %d", len(out), len(msgs)-drops)
	}
	if !bytes.Contains(res.Body, []byte("observer dropped")) {
		t.Error("no marker where messages were dropped")
	}
	if !bytes.Contains(out[0], []byte("fix the build")) {
		t.Error("the first prompt is gone")
	}
	checkPairs(t, out)
}

// checkPairs checks a Messages API conversation: roles alternate, every tool_result answers a
// tool_use of the message before.
func checkPairs(t *testing.T, msgs []json.RawMessage) {
	t.Helper()
	var prevRole string
	var prevUses map[string]bool
	for i, raw := range msgs {
		var m struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}
		json.Unmarshal(raw, &m)
		if m.Role == prevRole {
			t.Errorf("messages[%d]: two %s messages in a row", i, m.Role)
		}
		uses := map[string]bool{}
		for _, b := range m.Content {
			var bl struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			}
			json.Unmarshal(b, &bl)
			switch bl.Type {
			case "tool_use":
				uses[bl.ID] = true
			case "tool_result":
				if !prevUses[bl.ToolUseID] {
					t.Errorf("messages[%d]: tool_result %s answers no tool_use of the message before", i, bl.ToolUseID)
				}
			}
		}
		prevRole, prevUses = m.Role, uses
	}
}

// Cache mode drops only after the client's last breakpoint outside the tail, and marks the end
// of the kept prefix with a breakpoint of its own, never more than four in all.
func TestRequest_CacheModeKeepsThePrefix(t *testing.T) {
	c := mustNew(t, Options{Mode: ModeCache, TargetRatio: 0.1, PreserveTail: 2})
	msgs := []string{userText("start")}
	for i := range 8 {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, toolUse(id, "make test"), toolResult(id, distinctLines(i, 60), i == 1))
	}
	body := anthropicBody(msgs...)
	res, err := c.Request(APIAnthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	in := messagesOf(t, body, "messages")
	out := messagesOf(t, res.Body, "messages")
	// messages[0..4] hold the client's breakpoint at [4]: nothing up to it changes but the
	// marker and the new breakpoint appended to the message before the first drop.
	for i := 0; i < 4; i++ {
		if !bytes.Equal(in[i], out[i]) {
			t.Errorf("messages[%d] changed in cache mode:\n%s\n%s", i, in[i], out[i])
		}
	}
	if n := bytes.Count(res.Body, []byte(`"cache_control"`)); n > 4 {
		t.Errorf("%d breakpoints, the API takes 4", n)
	}
	// The message before the first dropped one ends the kept prefix: it carries a breakpoint
	// (the client's, or one added).
	first := -1
	for _, d := range res.Decisions {
		if d.Mechanism == MechDrop && (first < 0 || d.Index < first) {
			first = d.Index
		}
	}
	if first < 0 {
		t.Fatal("nothing dropped")
	}
	if !bytes.Contains(out[first-1], []byte(`"cache_control"`)) {
		t.Errorf("no breakpoint at the end of the kept prefix, messages[%d]: %s", first-1, out[first-1])
	}
	checkPairs(t, out)
}

func TestRequest_OpenAIChat(t *testing.T) {
	c := mustNew(t, Options{})
	out := bigJSON(200)
	body := []byte(`{"model":"gpt-4.1","messages":[{"role":"system","content":"You are a coding agent."},` +
		`{"role":"user","content":"read it"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"data/services.json\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":` + js(out) + `}],` +
		`"tools":[{"type":"function","function":{"name":"read_file","description":"Reads a file from the workspace. Returns its whole content.\n\nDetails: binary files are refused.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace root. Must exist. Symlinks are followed."}},"required":["path"]}}}]}`)
	res, err := c.Request(APIChat, body)
	if err != nil {
		t.Fatal(err)
	}
	var mechs []string
	for _, d := range res.Decisions {
		mechs = append(mechs, d.Mechanism)
	}
	if strings.Join(mechs, ",") != "json,tool_trim" {
		t.Errorf("mechanisms = %v, want json then tool_trim", mechs)
	}
	var v struct {
		Tools []struct {
			Function struct {
				Name        string
				Description string
				Parameters  struct {
					Required   []string
					Properties map[string]struct{ Description string }
				}
			}
		}
	}
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatal(err)
	}
	f := v.Tools[0].Function
	if f.Name != "read_file" || len(f.Parameters.Required) != 1 || f.Description != "Reads a file from the workspace." ||
		f.Parameters.Properties["path"].Description != "Path relative to the workspace root." {
		t.Errorf("tool trimmed wrong: %+v", f)
	}
	// Deterministic: the same body gives the same bytes.
	res2, _ := c.Request(APIChat, body)
	if !bytes.Equal(res.Body, res2.Body) {
		t.Error("the same request compressed twice differs")
	}
}

func TestRequest_OpenAIResponses(t *testing.T) {
	c := mustNew(t, Options{Mode: ModeToken, TargetRatio: 0.3, PreserveTail: 2})
	items := []string{`{"type":"message","role":"user","content":[{"type":"input_text","text":"look around"}]}`}
	for i := range 6 {
		id := fmt.Sprintf("call_%d", i)
		items = append(items,
			`{"type":"reasoning","summary":[],"encrypted_content":"gAAA`+strings.Repeat("x", 200)+`"}`,
			`{"type":"function_call","name":"exec_command","arguments":`+js(js(map[string]string{"cmd": "ls -la"}))+`,"call_id":"`+id+`"}`,
			`{"type":"function_call_output","call_id":"`+id+`","output":`+js("Exit code: 0\nOutput:\n"+distinctLines(i, 80))+`}`)
	}
	body := []byte(`{"model":"gpt-5","instructions":"be brief","input":[` + strings.Join(items, ",") + `],"store":false}`)
	res, err := c.Request(APIResponses, body)
	if err != nil {
		t.Fatal(err)
	}
	out := messagesOf(t, res.Body, "input")
	calls := map[string]bool{}
	for i, raw := range out {
		var typ struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		json.Unmarshal(raw, &typ)
		switch typ.Type {
		case "function_call":
			calls[typ.CallID] = true
		case "function_call_output":
			if !calls[typ.CallID] {
				t.Errorf("input[%d]: output of %s without its call", i, typ.CallID)
			}
			delete(calls, typ.CallID)
		case "reasoning":
			var next struct{ Type string }
			if i+1 < len(out) {
				json.Unmarshal(out[i+1], &next)
			}
			if next.Type != "function_call" {
				t.Errorf("input[%d]: reasoning not followed by its call (%q)", i, next.Type)
			}
		}
	}
	if len(calls) != 0 {
		t.Errorf("calls without output: %v", calls)
	}
	dropped := false
	for _, d := range res.Decisions {
		dropped = dropped || d.Mechanism == MechDrop
	}
	if !dropped || len(out) >= len(items) {
		t.Errorf("nothing dropped: %d items → %d", len(items), len(out))
	}
}

func TestNew_RejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{Mode: "fast"}, {Kinds: []Kind{"yaml"}}, {TrimTools: "some"}} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestShorten(t *testing.T) {
	for in, want := range map[string]string{
		"Reads a file. Returns it.":                  "Reads a file.",
		"Short":                                      "Short",
		"One paragraph\n\nand another":               "One paragraph",
		"e.g. this is kept because i > 10. Then not": "e.g. this is kept because i > 10.",
	} {
		if got := shorten(in, 100); got != want {
			t.Errorf("shorten(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("word ", 100)
	if got := shorten(long, 50); len(got) > 50 || !strings.HasSuffix(got, "…") {
		t.Errorf("shorten(long) = %q", got)
	}
}

// distinctLines is output no compressor can shrink much: n lines that all differ.
func distinctLines(seed, n int) string {
	var b strings.Builder
	for i := range n {
		h := sha256.Sum256([]byte(fmt.Sprint(seed, i)))
		fmt.Fprintf(&b, "%x %d\n", h[:12], i)
	}
	return b.String()
}

// An output whose tool and path say json but that is not JSON (Codex cuts long outputs short and
// says so) is compressed by what its content is.
func TestRequest_FallsBackWhenTheKindDoesNotFit(t *testing.T) {
	c := mustNew(t, Options{})
	cut := "Chunk ID: 5567a6\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 14152\nOutput:\n" +
		"Warning: truncated output (original token count: 14152)\nTotal output lines: 282\n\n" + bigJSON(300)[:9000]
	body := []byte(`{"model":"gpt-5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"read"}]},` +
		`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat data.json\"}","call_id":"c1"},` +
		`{"type":"function_call_output","call_id":"c1","output":` + js(cut) + `}]}`)
	res, err := c.Request(APIResponses, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Decisions) != 1 || res.Decisions[0].Mechanism == string(KindJSON) || res.Decisions[0].After >= res.Decisions[0].Before {
		t.Fatalf("decisions %+v: want the cut JSON compressed by another compressor", res.Decisions)
	}
}

// The message before a dropped run may have an empty content array: the marker goes in as its
// only block, and no breakpoint is added to a block that is not there. A request whose breakpoints
// name a TTL gets none added (a 5-minute one before a 1-hour one is refused by the API).
func TestRequest_DropEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string
		first string
		ttl   bool
	}{
		{"empty content before the drop", ModeToken, `{"role":"user","content":[]}`, false},
		{"breakpoints with a ttl", ModeCache, userText("go"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, Options{Mode: tc.mode, TargetRatio: 0.1, PreserveTail: 2})
			msgs := []string{tc.first}
			for i := range 6 {
				id := fmt.Sprintf("t%d", i)
				msgs = append(msgs, toolUse(id, "make"), toolResult(id, distinctLines(i, 60), false))
			}
			body := anthropicBody(msgs...)
			if tc.ttl {
				body = bytes.Replace(body, []byte(`"cache_control":{"type":"ephemeral"}`), []byte(`"cache_control":{"type":"ephemeral","ttl":"1h"}`), 1)
			}
			res, err := c.Request(APIAnthropic, body)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(res.Body) {
				t.Fatalf("invalid JSON:\n%s", res.Body)
			}
			dropped := false
			for _, d := range res.Decisions {
				dropped = dropped || d.Mechanism == MechDrop
			}
			if !dropped {
				t.Fatal("nothing dropped")
			}
			if n := bytes.Count(res.Body, []byte(`"cache_control"`)); n != bytes.Count(body, []byte(`"cache_control"`)) {
				t.Errorf("%d breakpoints, the client set %d: none may be added here", n, bytes.Count(body, []byte(`"cache_control"`)))
			}
			out := messagesOf(t, res.Body, "messages")
			checkPairs(t, out)
			if tc.mode == ModeToken && !bytes.Contains(out[0], []byte(`"content":[{"type":"text","text":"[observer dropped`)) {
				t.Errorf("the marker is not the empty message's only block: %s", out[0])
			}
		})
	}
}

// The second request carrying an output compressed before marks it a repeat, and only the first
// decision carries the original for the stash.
func TestRequest_RepeatsAndStash(t *testing.T) {
	c := mustNew(t, Options{Stash: true})
	out := bigJSON(200)
	first, _ := c.Request(APIAnthropic, anthropicBody(userText("go"), toolUse("t1", "cat a.json"), toolResult("t1", out, true)))
	second, _ := c.Request(APIAnthropic, anthropicBody(userText("go"), toolUse("t1", "cat a.json"), toolResult("t1", out, false),
		toolUse("t2", "ls"), toolResult("t2", "a.json", true)))
	if len(first.Decisions) != 1 || first.Decisions[0].Repeat || first.Decisions[0].Original != out {
		t.Errorf("first decision %+v", first.Decisions)
	}
	if len(second.Decisions) != 1 || !second.Decisions[0].Repeat || second.Decisions[0].Original != "" ||
		second.Decisions[0].StashID != first.Decisions[0].StashID {
		t.Errorf("second decision %+v: want a repeat naming the same stash, without the original", second.Decisions)
	}
}

// A proxy restarted with its memory keeps compressing what it compressed (the cached prefix stays
// the same bytes) and keeps leaving alone what it left; damaged memory is refused whole.
func TestMemory_SurvivesARestart(t *testing.T) {
	c := mustNew(t, Options{})
	out, kept := bigJSON(200), bigJSON(150)
	// kept: an output already in the conversation when the proxy first saw it.
	c.Request(APIAnthropic, anthropicBody(userText("go"), toolUse("t0", "cat b.json"), toolResult("t0", kept, false),
		toolUse("t1", "cat a.json"), toolResult("t1", out, true)))
	next := anthropicBody(userText("go"), toolUse("t0", "cat b.json"), toolResult("t0", kept, false),
		toolUse("t1", "cat a.json"), toolResult("t1", out, false), toolUse("t2", "ls"), toolResult("t2", "x", true))
	want, _ := c.Request(APIAnthropic, next)

	restarted := mustNew(t, Options{})
	if err := restarted.UnmarshalMemory(c.MarshalMemory()); err != nil {
		t.Fatal(err)
	}
	got, _ := restarted.Request(APIAnthropic, next)
	if !bytes.Equal(got.Body, want.Body) {
		t.Error("after a restart with its memory the proxy sends the conversation differently")
	}
	forgetful, _ := mustNew(t, Options{}).Request(APIAnthropic, next)
	if bytes.Equal(forgetful.Body, want.Body) {
		t.Error("the test shows nothing: a proxy without memory sends the same bytes")
	}
	for _, bad := range [][]byte{nil, []byte("obsmem1\nxx"), append([]byte("obsmem1\n"), bytes.Repeat([]byte{7}, 17)...)} {
		if err := mustNew(t, Options{}).UnmarshalMemory(bad); err == nil {
			t.Errorf("damaged memory %q accepted", bad)
		}
	}
}
