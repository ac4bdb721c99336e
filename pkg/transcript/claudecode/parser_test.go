package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

const testCwd = "/nonexistent/observer-test/proj"

// rec builds a transcript line: a base envelope with the given fields merged over it.
func rec(tb testing.TB, fields map[string]any) []byte {
	tb.Helper()
	m := map[string]any{"sessionId": "sess-1", "cwd": testCwd, "timestamp": "2026-03-01T10:00:00.000Z",
		"version": "2.1.7", "isSidechain": false, "userType": "external"}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func assistantLine(tb testing.TB, uuid, ts, msgID, model string, usage map[string]any, blocks ...map[string]any) []byte {
	tb.Helper()
	content := make([]any, 0, len(blocks))
	for _, b := range blocks {
		content = append(content, b)
	}
	msg := map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model, "content": content}
	if usage != nil {
		msg["usage"] = usage
	}
	return rec(tb, map[string]any{"type": "assistant", "uuid": uuid, "timestamp": ts, "requestId": "req_" + msgID, "message": msg})
}

func userLine(tb testing.TB, uuid, ts string, content any, extra map[string]any) []byte {
	tb.Helper()
	f := map[string]any{"type": "user", "uuid": uuid, "timestamp": ts, "message": map[string]any{"role": "user", "content": content}}
	for k, v := range extra {
		f[k] = v
	}
	return rec(tb, f)
}

func toolUse(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id string, content any, isError bool) map[string]any {
	b := map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}
	if isError {
		b["is_error"] = true
	}
	return b
}

func use(in, out, cw, cr, w1h int64) map[string]any {
	return map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": cw,
		"cache_read_input_tokens": cr, "cache_creation": map[string]any{"ephemeral_5m_input_tokens": cw - w1h,
			"ephemeral_1h_input_tokens": w1h}, "service_tier": "standard"}
}

func testSource() transcript.Source {
	return transcript.Source{Client: Client, Path: "/t/sess-1.jsonl", SessionID: "sess-1"}
}

// messagesOf returns the message payloads of evs, in order.
func messagesOf(evs []event.Event) []*event.Message {
	var out []*event.Message
	for _, e := range evs {
		if e.Message != nil {
			out = append(out, e.Message)
		}
	}
	return out
}

func actions(evs []event.Event) []*event.Action {
	var out []*event.Action
	for _, e := range evs {
		if e.Action != nil {
			out = append(out, e.Action)
		}
	}
	return out
}

func TestParser_ToolCallAndResult(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	lines := [][]byte{
		assistantLine(t, "a1", "2026-03-01T10:00:01.000Z", "msg_1", "claude-sonnet-4-5-20250929", use(3, 2, 100, 1000, 40),
			map[string]any{"type": "thinking", "thinking": "hmm"}),
		assistantLine(t, "a2", "2026-03-01T10:00:02.000Z", "msg_1", "claude-sonnet-4-5-20250929", use(3, 2, 100, 1000, 40),
			toolUse("toolu_read", "Read", map[string]any{"file_path": testCwd + "/src/main.go"})),
		assistantLine(t, "a3", "2026-03-01T10:00:02.500Z", "msg_1", "claude-sonnet-4-5-20250929", use(3, 90, 100, 1000, 40),
			toolUse("toolu_bash", "Bash", map[string]any{"command": "curl -H 'Authorization: Bearer abcdefghijklmnop1234567890' https://x", "description": "d"})),
		userLine(t, "u1", "2026-03-01T10:00:03.250Z", []any{toolResult("toolu_read", "     1→package main", false)},
			map[string]any{"toolUseResult": map[string]any{"type": "text", "file": map[string]any{"filePath": "x"}}}),
		userLine(t, "u2", "2026-03-01T10:00:04.000Z", []any{toolResult("toolu_bash", "<tool_use_error>Exit code 7\nsk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789</tool_use_error>", true)},
			map[string]any{"toolUseResult": "Error: Exit code 7"}),
	}
	evs := run(t, p, lines)

	var usage []*event.TokenUsage
	for _, e := range evs {
		if e.TokenUsage != nil {
			usage = append(usage, e.TokenUsage)
			if e.ID != UsageID("msg_1") || e.SessionID != "sess-1" || e.Project != testCwd {
				t.Errorf("usage envelope %+v", e)
			}
		}
	}
	// Three lines of one message: the first emits, the second repeats output 2 (skipped), the
	// third grew to 90.
	if len(usage) != 2 || usage[0].Output != 2 || usage[1].Output != 90 {
		t.Fatalf("usage = %+v", usage)
	}
	u := usage[1]
	want := event.Tokens{Input: 3, Output: 90, CacheRead: 1000, CacheCreation: 100, CacheCreation1h: 40}
	if u.Tokens != want || u.MessageID != "msg_1" || u.RequestID != "req_msg_1" || u.Model != "claude-sonnet-4-5-20250929" ||
		u.Reliability != event.ReliabilityUnreliable || u.Origin != "transcript" || u.CostUSD <= 0 {
		t.Errorf("usage %+v", u)
	}
	// sonnet 4.5: $3 in, $15 out, $0.30 read, $3.75 5m write, $6 1h write per million.
	wantCost := (3*3 + 90*15 + 1000*0.3 + 60*3.75 + 40*6) / 1e6
	if d := u.CostUSD - wantCost; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost %v, want %v", u.CostUSD, wantCost)
	}

	acts := actions(evs)
	if len(acts) != 4 {
		t.Fatalf("actions = %d", len(acts))
	}
	read, bash, readRes, bashRes := acts[0], acts[1], acts[2], acts[3]
	if read.Type != event.ActionReadFile || read.Target != "src/main.go" || read.ToolUseID != "toolu_read" ||
		read.MessageID != "msg_1" || read.RequestID != "req_msg_1" || read.Success != nil || read.Transcript != "/t/sess-1.jsonl" {
		t.Errorf("read call %+v", read)
	}
	if bash.Type != event.ActionRunCommand || strings.Contains(bash.Target, "abcdefghijklmnop1234567890") ||
		!strings.Contains(bash.Target, "[REDACTED:bearer]") {
		t.Errorf("bash call %+v", bash)
	}
	if readRes.Type != event.ActionReadFile || readRes.Target != "src/main.go" || readRes.Success == nil || !*readRes.Success ||
		readRes.DurationMs != 1250 || readRes.Output != "     1→package main" || readRes.OutputSize != int64(len("     1→package main")) {
		t.Errorf("read result %+v", readRes)
	}
	if bashRes.Success == nil || *bashRes.Success || !strings.HasPrefix(bashRes.Error, "Exit code 7") ||
		strings.Contains(bashRes.Error, "sk-ant-") || strings.Contains(bashRes.Output, "sk-ant-") ||
		!strings.Contains(bashRes.Output, "<tool_use_error>") || bashRes.DurationMs != 1500 {
		t.Errorf("bash result %+v", bashRes)
	}
	for i, e := range evs {
		if e.Action == nil {
			continue
		}
		if e.Action.ToolUseID != "" && e.ID != event.ID("claude-code", "action", e.Action.ToolUseID) {
			t.Errorf("event %d id %s", i, e.ID)
		}
	}
	if len(p.st.Pending) != 0 {
		t.Errorf("pending left: %+v", p.st.Pending)
	}
}

func TestParser_ResultWithoutCall(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	evs := run(t, p, [][]byte{
		userLine(t, "u1", "2026-03-01T10:00:03Z", []any{toolResult("toolu_gone", []any{
			map[string]any{"type": "text", "text": "part one"}, map[string]any{"type": "text", "text": "part two"}}, false)},
			map[string]any{"toolUseResult": map[string]any{"filenames": []string{}, "durationMs": 19}}),
	})
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	a := evs[0].Action
	if evs[0].ID != callID("toolu_gone") || a.Type != event.ActionUnknown || a.Tool != "" || a.DurationMs != 19 ||
		a.Output != "part one\npart two" || a.OutputSize != 17 || a.Success == nil || !*a.Success {
		t.Errorf("result %+v", a)
	}
}

// Parallel results in one user line share one toolUseResult, which then belongs to neither.
func TestParser_ParallelResults(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	evs := run(t, p, [][]byte{
		assistantLine(t, "a1", "2026-03-01T10:00:01Z", "msg_1", "claude-sonnet-4-5", use(1, 5, 0, 0, 0),
			toolUse("t1", "Glob", map[string]any{"pattern": "**/*.go", "path": testCwd + "/pkg"})),
		assistantLine(t, "a2", "2026-03-01T10:00:01Z", "msg_1", "claude-sonnet-4-5", use(1, 5, 0, 0, 0),
			toolUse("t2", "Grep", map[string]any{"pattern": "func main"})),
		userLine(t, "u1", "2026-03-01T10:00:02Z", []any{toolResult("t1", "a.go", false), toolResult("t2", "b.go", false)},
			map[string]any{"toolUseResult": map[string]any{"durationMs": 99999}}),
	})
	acts := actions(evs)
	if len(acts) != 4 || acts[0].Target != "**/*.go in pkg" || acts[1].Target != "func main" ||
		acts[0].Type != event.ActionSearchFiles || acts[1].Type != event.ActionSearchText {
		t.Fatalf("calls %+v %+v", acts[0], acts[1])
	}
	for _, a := range acts[2:] {
		if a.DurationMs != 1000 {
			t.Errorf("result %+v: duration from timestamps expected", a)
		}
	}
}

func TestParser_Taxonomy(t *testing.T) {
	cases := []struct {
		name   string
		input  map[string]any
		typ    event.ActionType
		target string
	}{
		{"Read", map[string]any{"file_path": testCwd + "/a.go"}, event.ActionReadFile, "a.go"},
		{"Read", map[string]any{"file_path": "/etc/hosts"}, event.ActionReadFile, "/etc/hosts"},
		{"Read", map[string]any{"file_path": "rel/b.go"}, event.ActionReadFile, "rel/b.go"},
		{"Write", map[string]any{"file_path": testCwd + "/w.go", "content": "x"}, event.ActionWriteFile, "w.go"},
		{"Edit", map[string]any{"file_path": testCwd + "/e.go"}, event.ActionEditFile, "e.go"},
		{"MultiEdit", map[string]any{"file_path": testCwd + "/m.go"}, event.ActionEditFile, "m.go"},
		{"NotebookEdit", map[string]any{"notebook_path": testCwd + "/n.ipynb"}, event.ActionEditFile, "n.ipynb"},
		{"Bash", map[string]any{"command": "go test ./..."}, event.ActionRunCommand, "go test ./..."},
		{"BashOutput", map[string]any{"bash_id": "bash_1"}, event.ActionRunCommand, "bash_1"},
		{"KillShell", map[string]any{"shell_id": "bash_2"}, event.ActionRunCommand, "bash_2"},
		{"KillBash", map[string]any{"shell_id": "bash_3"}, event.ActionRunCommand, "bash_3"},
		{"Grep", map[string]any{"pattern": "TODO", "path": testCwd + "/pkg"}, event.ActionSearchText, "TODO in pkg"},
		{"Glob", map[string]any{"pattern": "*.md"}, event.ActionSearchFiles, "*.md"},
		{"LS", map[string]any{"path": testCwd}, event.ActionSearchFiles, "."},
		{"WebSearch", map[string]any{"query": "go 1.26"}, event.ActionWebSearch, "go 1.26"},
		{"WebFetch", map[string]any{"url": "https://go.dev", "prompt": "p"}, event.ActionWebFetch, "https://go.dev"},
		{"mcp__context7__resolve-library-id", map[string]any{"libraryName": "golang"}, event.ActionMCPCall, ""},
		{"Task", map[string]any{"subagent_type": "Explore", "description": "Find uses", "prompt": "p"}, event.ActionSpawnSubagent, "Explore: Find uses"},
		{"Agent", map[string]any{"description": "Find uses"}, event.ActionSpawnSubagent, "Find uses"},
		{"TodoWrite", map[string]any{"todos": []any{}}, event.ActionTodoUpdate, ""},
		{"TodoRead", map[string]any{}, event.ActionTodoUpdate, ""},
		{"AskUserQuestion", map[string]any{"questions": []any{map[string]any{"question": "Which?"}}}, event.ActionAskUser, "Which?"},
		{"Skill", map[string]any{"skill": "pdf"}, event.ActionUnknown, "pdf"},
		{"ExitPlanMode", map[string]any{"plan": "p"}, event.ActionUnknown, ""},
		{"SomethingNew", map[string]any{"file_path": testCwd + "/z"}, event.ActionUnknown, "z"},
	}
	for i, c := range cases {
		p := newTestParser(t, testSource(), nil)
		evs := run(t, p, [][]byte{assistantLine(t, "a", "2026-03-01T10:00:01Z", "m", "claude-sonnet-4-5", nil,
			toolUse(fmt.Sprint("t", i), c.name, c.input))})
		a := actions(evs)
		if len(a) != 1 || a[0].Type != c.typ || a[0].Tool != c.name || a[0].Target != c.target {
			t.Errorf("%s %v: got %+v, want %s %q", c.name, c.input, a, c.typ, c.target)
		}
	}
}

func TestParser_TargetLimits(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	long := strings.Repeat("é", 2000)
	evs := run(t, p, [][]byte{
		assistantLine(t, "a", "2026-03-01T10:00:01Z", "m", "claude-sonnet-4-5", nil,
			toolUse("t1", "Bash", map[string]any{"command": "echo " + long})),
		userLine(t, "u", "2026-03-01T10:00:02Z", []any{toolResult("t1", strings.Repeat("x", 20000), false)}, nil),
		assistantLine(t, "a2", "2026-03-01T10:00:03Z", "m2", "claude-sonnet-4-5", nil,
			toolUse("t2", "Bash", map[string]any{"command": "false"})),
		userLine(t, "u2", "2026-03-01T10:00:04Z", []any{toolResult("t2", strings.Repeat("e", 5000), true)}, nil),
	})
	a := actions(evs)
	if n := len([]rune(a[0].Target)); n != maxTarget {
		t.Errorf("target runes %d", n)
	}
	if len(a[1].Output) != maxOutput || a[1].OutputSize != 20000 {
		t.Errorf("output %d size %d", len(a[1].Output), a[1].OutputSize)
	}
	if len(a[3].Error) != maxError || a[3].OutputSize != 5000 {
		t.Errorf("error %d", len(a[3].Error))
	}
}

func TestParser_Prompts(t *testing.T) {
	cases := []struct {
		name    string
		content any
		extra   map[string]any
		typ     event.ActionType // "" for no action
		target  string
		role    string // the message's role, "" for none; its text is target, or content when target is ""
	}{
		{"typed", "fix the flaky test", nil, event.ActionUserPrompt, "fix the flaky test", event.RoleUser},
		{"blocks", []any{map[string]any{"type": "text", "text": "look at this"}}, nil, event.ActionUserPrompt, "look at this", event.RoleUser},
		{"image only", []any{map[string]any{"type": "image", "source": map[string]any{"data": "AAAA"}}}, nil, event.ActionUserPrompt, "[image]", event.RoleUser},
		{"secret", "use key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", nil, event.ActionUserPrompt, "use key [REDACTED:anthropic-key]", event.RoleUser},
		{"slash command", "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>\n<command-args></command-args>", nil, event.ActionUserPrompt, "/init", event.RoleUser},
		{"old slash command", "<command-message>mcp</command-message>\n<command-name>mcp</command-name>\n<command-args>list</command-args>", nil, event.ActionUserPrompt, "/mcp list", event.RoleUser},
		{"bash input", "<bash-input>git status</bash-input>", nil, event.ActionUserPrompt, "!git status", event.RoleUser},
		{"local stdout", "<local-command-stdout>(no content)</local-command-stdout>", nil, "", "", ""},
		{"bash stdout", "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>", nil, "", "", ""},
		{"system reminder", "<system-reminder>The user opened a file</system-reminder>", nil, "", "", ""},
		{"command message only", "<command-message>init is analyzing your codebase…</command-message>", nil, "", "", ""},
		{"meta caveat", "Caveat: The messages below were generated by the user while running local commands.", map[string]any{"isMeta": true}, "", "", ""},
		{"meta command body", []any{map[string]any{"type": "text", "text": "Please analyze this codebase and create a CLAUDE.md file"}}, map[string]any{"isMeta": true}, "", "", ""},
		{"compact summary", "This session is being continued from a previous conversation", map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true}, "", "", event.RoleSummary},
		{"compact summary with a secret", "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 was used", map[string]any{"isCompactSummary": true}, "", "key [REDACTED:anthropic-key] was used", event.RoleSummary},
		{"visible in transcript only", "a note", map[string]any{"isVisibleInTranscriptOnly": true}, "", "", ""},
		{"sidechain task prompt", "Analyze the package.json files", map[string]any{"isSidechain": true, "agentId": "a1"}, "", "", event.RoleUser},
		{"interrupt", []any{map[string]any{"type": "text", "text": "[Request interrupted by user]"}}, nil, event.ActionTurnAborted, "", ""},
		{"interrupt tool use", []any{map[string]any{"type": "text", "text": "[Request interrupted by user for tool use]"}}, nil, event.ActionTurnAborted, "", ""},
		{"tool result", []any{toolResult("t1", "ok", false)}, nil, event.ActionUnknown, "", ""},
		{"empty", "   ", nil, "", "", ""},
	}
	for _, c := range cases {
		p := newTestParser(t, testSource(), nil)
		line := userLine(t, "uuid-"+c.name, "2026-03-01T10:00:01Z", c.content, c.extra)
		evs := run(t, p, [][]byte{line})
		msgs, acts := messagesOf(evs), actions(evs)
		if c.role == "" {
			if len(msgs) != 0 {
				t.Errorf("%s: message %+v", c.name, msgs[0])
			}
		} else {
			text := c.target
			if text == "" {
				text, _ = c.content.(string)
			}
			m := msgs[len(msgs)-1]
			e := evs[len(evs)-1]
			if len(msgs) != 1 || m.Role != c.role || m.Text != text || m.MessageID != "uuid-"+c.name ||
				e.ID != event.ID("claude-code", "message", "uuid-"+c.name, "0") || m.Seq != 0 || m.Model != "" ||
				m.Sidechain != (c.extra["isSidechain"] == true) || m.AgentID != str(c.extra["agentId"]) {
				t.Errorf("%s: messages %+v", c.name, msgs)
			}
		}
		if c.typ == "" {
			if len(acts) != 0 {
				t.Errorf("%s: events %+v", c.name, acts[0])
			}
			continue
		}
		if c.typ == event.ActionUnknown {
			continue // a tool result: tested with its call
		}
		if len(acts) != 1 || acts[0].Type != c.typ || acts[0].Target != c.target ||
			evs[0].ID != event.ID("claude-code", "action", "uuid-"+c.name) {
			t.Errorf("%s: events %+v", c.name, evs)
			continue
		}
		if c.typ == event.ActionTurnAborted && !strings.HasPrefix(acts[0].Error, "Request interrupted by user") {
			t.Errorf("%s: %+v", c.name, acts[0])
		}
	}
}

// str is a test case's optional string.
func str(v any) string {
	s, _ := v.(string)
	return s
}

func TestParser_SystemAndErrors(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	lines := [][]byte{
		rec(t, map[string]any{"type": "system", "subtype": "api_error", "level": "error", "uuid": "s1",
			"error":     map[string]any{"status": 529, "error": map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}}},
			"retryInMs": 500, "retryAttempt": 1, "maxRetries": 10}),
		rec(t, map[string]any{"type": "system", "subtype": "api_error", "uuid": "s2",
			"error": map[string]any{"cause": map[string]any{"code": "FailedToOpenSocket"}}}),
		rec(t, map[string]any{"type": "system", "subtype": "compact_boundary", "uuid": "s3", "content": "Conversation compacted",
			"compactMetadata": map[string]any{"trigger": "manual", "preTokens": 155979}}),
		rec(t, map[string]any{"type": "system", "subtype": "microcompact_boundary", "uuid": "s4"}),
		rec(t, map[string]any{"type": "system", "subtype": "turn_duration", "uuid": "s5", "durationMs": 10}),
		rec(t, map[string]any{"type": "system", "subtype": "brand_new_subtype", "uuid": "s6"}),
		rec(t, map[string]any{"type": "system", "content": "Running PostToolUse hooks…", "level": "info", "uuid": "s7"}),
		rec(t, map[string]any{"type": "assistant", "uuid": "a1", "isApiErrorMessage": true, "apiErrorStatus": 429, "error": "rate_limit",
			"message": map[string]any{"id": "0a1b", "model": "<synthetic>", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": "API Error: Rate limited"}},
				"usage":   use(0, 0, 0, 0, 0)}}),
		assistantLine(t, "a2", "2026-03-01T10:00:09Z", "0a1c", "<synthetic>", use(0, 0, 0, 0, 0),
			map[string]any{"type": "text", "text": "No response requested."}),
		assistantLine(t, "a3", "2026-03-01T10:00:09Z", "", "claude-sonnet-4-5", use(5, 5, 0, 0, 0),
			map[string]any{"type": "text", "text": "no id"}),
	}
	all := run(t, p, lines)
	evs, acts := transcripttest.WithoutMessages(all), actions(all)
	want := []struct {
		typ          event.ActionType
		target, errs string
	}{
		{event.ActionAPIError, "", "529 Overloaded (retry 1/10)"},
		{event.ActionAPIError, "", "FailedToOpenSocket"},
		{event.ActionContextCompacted, "manual", ""},
		{event.ActionContextCompacted, "", ""},
		{event.ActionAPIError, "", "429 API Error: Rate limited"},
	}
	if len(acts) != len(want) || len(evs) != len(want) {
		t.Fatalf("events %d, actions %+v", len(evs), acts)
	}
	// Claude Code's own placeholders are no reply; a reply without a message id is one.
	if msgs := messagesOf(all); len(msgs) != 1 || msgs[0].Role != event.RoleAssistant || msgs[0].Text != "no id" ||
		msgs[0].MessageID != "" || msgs[0].Model != "claude-sonnet-4-5" {
		t.Errorf("messages %+v", msgs)
	}
	for i, w := range want {
		if acts[i].Type != w.typ || acts[i].Target != w.target || acts[i].Error != w.errs {
			t.Errorf("action %d = %+v, want %+v", i, acts[i], w)
		}
	}
	if st := p.Stats(); st.Unknown["system/brand_new_subtype"] != 1 || st.Malformed != 0 || st.Lines != int64(len(lines)) {
		t.Errorf("stats %+v", st)
	}
}

func TestParser_ServerTools(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	all := run(t, p, [][]byte{
		assistantLine(t, "a1", "2026-03-01T10:00:01Z", "m1", "claude-sonnet-4-5", nil,
			map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{"query": "q"}}),
		assistantLine(t, "a2", "2026-03-01T10:00:03Z", "m1", "claude-sonnet-4-5", nil,
			map[string]any{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
				"content": map[string]any{"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}),
	})
	evs, a := transcripttest.WithoutMessages(all), actions(all)
	if msgs := messagesOf(all); len(msgs) != 1 || msgs[0].Role != event.RoleToolCall || msgs[0].Tool != "web_search" ||
		msgs[0].ToolUseID != "srvtoolu_1" || msgs[0].Text != "q" {
		t.Errorf("messages %+v", msgs)
	}
	if len(a) != 2 || evs[0].ID != evs[1].ID || a[0].Type != event.ActionWebSearch || a[0].Target != "q" ||
		a[1].Type != event.ActionWebSearch || a[1].Success == nil || *a[1].Success || a[1].Error != "max_uses_exceeded" ||
		a[1].DurationMs != 2000 {
		t.Errorf("server tool %+v", a)
	}
}

func TestParser_UsageBuckets(t *testing.T) {
	cases := []struct {
		name  string
		usage any
		want  event.Tokens
		emit  bool
	}{
		{"full", use(10, 20, 300, 4000, 100), event.Tokens{Input: 10, Output: 20, CacheCreation: 300, CacheRead: 4000, CacheCreation1h: 100}, true},
		{"old: no breakdown", map[string]any{"input_tokens": 4, "cache_creation_input_tokens": 12, "cache_read_input_tokens": 9, "output_tokens": 107},
			event.Tokens{Input: 4, Output: 107, CacheCreation: 12, CacheRead: 9}, true},
		{"Bedrock: no cache fields", map[string]any{"input_tokens": 16878, "output_tokens": 237}, event.Tokens{Input: 16878, Output: 237}, true},
		{"breakdown only", map[string]any{"input_tokens": 1, "output_tokens": 1, "cache_creation": map[string]any{"ephemeral_5m_input_tokens": 5, "ephemeral_1h_input_tokens": 7}},
			event.Tokens{Input: 1, Output: 1, CacheCreation: 12, CacheCreation1h: 7}, true},
		{"odd numbers", map[string]any{"input_tokens": -5, "output_tokens": 3.0, "cache_read_input_tokens": "12", "cache_creation": 4},
			event.Tokens{Output: 3, CacheRead: 12}, true},
		{"usage null", nil, event.Tokens{}, false},
	}
	for _, c := range cases {
		p := newTestParser(t, testSource(), nil)
		msg := map[string]any{"id": "msg_x", "model": "claude-sonnet-4-5", "role": "assistant", "content": []any{}, "usage": c.usage}
		evs := run(t, p, [][]byte{rec(t, map[string]any{"type": "assistant", "uuid": "a", "message": msg})})
		if !c.emit {
			if len(evs) != 0 {
				t.Errorf("%s: %+v", c.name, evs)
			}
			continue
		}
		if len(evs) != 1 || evs[0].TokenUsage == nil || evs[0].TokenUsage.Tokens != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, evs, c.want)
		}
	}
}

// A model the table does not price: cost 0, reliability unknown.
func TestParser_UnpricedModel(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	evs := transcripttest.WithoutMessages(run(t, p, [][]byte{assistantLine(t, "a", "2026-03-01T10:00:01Z", "m", "my-gateway-model", use(1, 1, 0, 0, 0),
		map[string]any{"type": "text", "text": "x"})}))
	if len(evs) != 1 || evs[0].TokenUsage.CostUSD != 0 || evs[0].TokenUsage.Reliability != event.ReliabilityUnknown {
		t.Errorf("%+v", evs[0].TokenUsage)
	}
}

func TestParser_Envelope(t *testing.T) {
	t.Run("SubagentFile", func(t *testing.T) {
		src := transcript.Source{Client: Client, Path: "/t/agent-a1.jsonl", SessionID: "parent", AgentID: "a1"}
		p := newTestParser(t, src, nil)
		evs := run(t, p, [][]byte{
			rec(t, map[string]any{"type": "assistant", "uuid": "x", "sessionId": "line-session", "isSidechain": true,
				"message": map[string]any{"id": "m", "model": "claude-sonnet-4-5", "content": []any{toolUse("t", "Read", map[string]any{"file_path": "/a"})},
					"usage": use(1, 2, 0, 0, 0)}}),
		})
		for _, e := range evs {
			if e.SessionID != "parent" || e.Source != Component || e.Client != Client || e.V != event.SchemaVersion ||
				e.Time.Location().String() != "UTC" {
				t.Errorf("envelope %+v", e)
			}
			if e.Action != nil && (e.Action.AgentID != "a1" || !e.Action.Sidechain) {
				t.Errorf("action %+v", e.Action)
			}
			if e.TokenUsage != nil && e.TokenUsage.AgentID != "a1" {
				t.Errorf("usage %+v", e.TokenUsage)
			}
			if e.Message != nil && (e.Message.AgentID != "a1" || !e.Message.Sidechain) {
				t.Errorf("message %+v", e.Message)
			}
		}
	})
	t.Run("NoSourceSession", func(t *testing.T) {
		p := newTestParser(t, transcript.Source{Path: "/t/agent-x.jsonl"}, nil)
		all := run(t, p, [][]byte{userLine(t, "u", "2026-03-01T10:00:00+02:00", "hi", map[string]any{"sessionId": "from-line", "agentId": "x9"})})
		if msgs := messagesOf(all); len(msgs) != 1 || msgs[0].AgentID != "x9" || all[1].SessionID != "from-line" || all[1].Time.Hour() != 8 {
			t.Errorf("messages %+v", all)
		}
		evs := transcripttest.WithoutMessages(all)
		if len(evs) != 1 || evs[0].SessionID != "from-line" || evs[0].Time.Hour() != 8 || evs[0].Action.AgentID != "x9" {
			t.Errorf("%+v", evs)
		}
	})
	t.Run("ProjectStaysWhileCwdMovesInside", func(t *testing.T) {
		p := newTestParser(t, testSource(), nil)
		all := run(t, p, [][]byte{
			userLine(t, "u1", "2026-03-01T10:00:00Z", "one", nil),
			userLine(t, "u2", "2026-03-01T10:00:01Z", "two", map[string]any{"cwd": testCwd + "/web/app"}),
			rec(t, map[string]any{"type": "assistant", "uuid": "a1", "cwd": testCwd + "/web/app", "message": map[string]any{
				"id": "m", "model": "claude-sonnet-4-5", "content": []any{toolUse("t", "Read", map[string]any{"file_path": "page.tsx"})}}}),
			userLine(t, "u3", "2026-03-01T10:00:03Z", "three", map[string]any{"cwd": "/nonexistent/other"}),
			userLine(t, "u4", "2026-03-01T10:00:04Z", "four", map[string]any{"cwd": nil}),
		})
		for _, e := range all {
			if e.Message != nil && e.Project != "" && e.Project != testCwd && e.Project != "/nonexistent/other" {
				t.Errorf("message project %q", e.Project)
			}
		}
		evs := transcripttest.WithoutMessages(all)
		got := []string{evs[0].Project, evs[1].Project, evs[2].Project, evs[3].Project, evs[4].Project}
		want := []string{testCwd, testCwd, testCwd, "/nonexistent/other", "/nonexistent/other"}
		if strings.Join(got, ",") != strings.Join(want, ",") || evs[2].Action.Target != "web/app/page.tsx" {
			t.Errorf("projects %v target %q", got, evs[2].Action.Target)
		}
	})
}

// Malformed lines are counted and skipped; the file goes on.
func TestParser_Malformed(t *testing.T) {
	good := userLine(t, "u-good", "2026-03-01T10:00:00Z", "still here", nil)
	huge := make([]byte, 64<<20)
	copy(huge, `{"type":"user","message":{"role":"user","content":"`)
	for i := 50; i < len(huge); i++ {
		huge[i] = 'a'
	}
	bigResult := userLine(t, "u-big", "2026-03-01T10:00:01Z", []any{toolResult("t-big", strings.Repeat("b", 8<<20), false)}, nil)
	cases := []struct {
		name      string
		line      []byte
		malformed bool
		unknown   string
	}{
		{"invalid JSON", []byte(`{"type":"user","message":`), true, ""},
		{"invalid UTF-8", []byte("{\"type\":\"user\",\"message\":{\"content\":\"\xff\xfe\"}}"), true, ""},
		{"truncated real line", good[:len(good)/2], true, ""},
		{"not an object", []byte(`["type","user"]`), true, ""},
		{"bad field type", []byte(`{"type":"user","uuid":5,"timestamp":"2026-03-01T10:00:00Z"}`), true, ""},
		{"bad content", []byte(`{"type":"user","uuid":"u","timestamp":"2026-03-01T10:00:00Z","message":{"content":7}}`), true, ""},
		{"unknown type", []byte(`{"type":"worktree-state","uuid":5}`), false, "worktree-state"},
		{"no type", []byte(`{"uuid":"x"}`), false, "(no type)"},
		{"64 MB truncated line", huge, true, ""},
		{"blank", []byte("   "), false, ""},
		{"known bookkeeping", []byte(`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`), false, ""},
	}
	p := newTestParser(t, testSource(), nil)
	var wantMalformed int64
	for _, c := range cases {
		evs, err := p.Record(0, c.line)
		if c.malformed != (err != nil) || len(evs) != 0 {
			t.Errorf("%s: events %d err %v", c.name, len(evs), err)
		}
		if err != nil {
			wantMalformed++
			if !errors.Is(err, transcript.ErrMalformed) {
				t.Errorf("%s: %v does not wrap ErrMalformed", c.name, err)
			}
		}
		if c.unknown != "" && p.Stats().Unknown[c.unknown] != 1 {
			t.Errorf("%s: unknown %v", c.name, p.Stats().Unknown)
		}
	}
	evs, err := p.Record(0, good)
	if err != nil || len(evs) != 2 || evs[0].Action.Target != "still here" || evs[1].Message.Text != "still here" {
		t.Fatalf("good line after malformed ones: %v %+v", err, evs)
	}
	evs, err = p.Record(0, bigResult)
	if err != nil || len(evs) != 1 || len(evs[0].Action.Output) != maxOutput || evs[0].Action.OutputSize != 8<<20 {
		t.Fatalf("8 MB result: %v", err)
	}
	st := p.Stats()
	if st.Lines != int64(len(cases))+2 || st.Malformed != wantMalformed || st.Events != 3 {
		t.Errorf("stats %+v, want %d malformed", st, wantMalformed)
	}
}

// A line that yields events needs a time: its own, or the last one seen.
func TestParser_Timestamps(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	if _, err := p.Record(0, userLine(t, "u0", "", "no time yet", map[string]any{"timestamp": nil})); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("prompt without any time: %v", err)
	}
	if evs, err := p.Record(0, userLine(t, "u1", "garbage", "meta", map[string]any{"isMeta": true})); err != nil || len(evs) != 0 {
		t.Errorf("meta line without time: %v", err)
	}
	run(t, p, [][]byte{userLine(t, "u2", "2026-03-01T10:00:00Z", "timed", nil)})
	evs, err := p.Record(0, userLine(t, "u3", "garbage", "late", nil))
	if err != nil || len(evs) != 2 || !evs[0].Time.Equal(p.lastTime()) || !evs[1].Time.Equal(p.lastTime()) {
		t.Errorf("fallback to the last time: %v %+v", err, evs)
	}
}

// Bounded state: at most maxPending calls and maxMessages message outputs.
func TestParser_StateBounded(t *testing.T) {
	p := newTestParser(t, testSource(), nil)
	var lines [][]byte
	for i := range 500 {
		lines = append(lines, assistantLine(t, fmt.Sprint("a", i), "2026-03-01T10:00:00Z", fmt.Sprint("msg_", i), "claude-sonnet-4-5",
			use(1, 1, 0, 0, 0), toolUse(fmt.Sprint("t", i), "Read", map[string]any{"file_path": "/x"})))
	}
	run(t, p, lines)
	if len(p.st.Pending) != maxPending || len(p.st.Outputs) != maxMessages {
		t.Errorf("pending %d outputs %d", len(p.st.Pending), len(p.st.Outputs))
	}
	if len(p.State()) > 64<<10 {
		t.Errorf("state is %d bytes", len(p.State()))
	}
	// The oldest call was evicted: its result is unknown-typed, the writer keeps the call's type.
	evs := run(t, p, [][]byte{userLine(t, "u", "2026-03-01T10:00:01Z", []any{toolResult("t0", "x", false)}, nil)})
	if evs[0].Action.Type != event.ActionUnknown || evs[0].ID != callID("t0") {
		t.Errorf("%+v", evs[0].Action)
	}
	evs = run(t, p, [][]byte{userLine(t, "u", "2026-03-01T10:00:01Z", []any{toolResult("t499", "x", false)}, nil)})
	if evs[0].Action.Type != event.ActionReadFile {
		t.Errorf("%+v", evs[0].Action)
	}
}
