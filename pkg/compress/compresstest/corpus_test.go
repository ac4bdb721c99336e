package compresstest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/compress/validate"
)

// TestSessions_CorpusBodiesValid rebuilds every request sequence of the corpus and checks that
// each body passes validate.Body, that each body of a sequence extends the one before, and that
// the corpus yields at least 1,000 bodies.
func TestSessions_CorpusBodiesValid(t *testing.T) {
	sessions, rep := Load(t)
	t.Logf("corpus %s:\n%s", CorpusDir(), rep)
	type count struct{ sessions, bodies, bytes int }
	counts := map[string]*count{}
	total := 0
	for _, s := range sessions {
		c := counts[s.API]
		if c == nil {
			c = &count{}
			counts[s.API] = c
		}
		c.sessions++
		c.bodies += len(s.Bodies)
		total += len(s.Bodies)
		var prev []any
		for i, b := range s.Bodies {
			c.bytes += len(b)
			if errs := validate.Body(s.API, b); len(errs) > 0 {
				t.Errorf("%s (%s) body %d of %d is invalid: %v", s.Name, s.API, i+1, len(s.Bodies), errs[:min(5, len(errs))])
				continue
			}
			conv := conversationOf(t, s.API, b)
			if i > 0 && (len(conv) <= len(prev) || !reflect.DeepEqual(conv[:len(prev)], prev)) {
				t.Errorf("%s (%s) body %d does not extend body %d (%d messages after %d)", s.Name, s.API, i+1, i, len(conv), len(prev))
			}
			prev = conv
		}
	}
	for _, api := range []string{validate.Anthropic, validate.Chat, validate.Responses} {
		c := counts[api]
		if c == nil {
			t.Errorf("no %s session rebuilt", api)
			continue
		}
		t.Logf("%s: %d sessions, %d bodies, %.1f MB", api, c.sessions, c.bodies, float64(c.bytes)/1e6)
	}
	t.Logf("total: %d bodies", total)
	if total < 1000 {
		t.Errorf("the corpus yields %d bodies, want at least 1000", total)
	}
}

// conversationOf returns the messages (or input items) of a body, without cache_control
// breakpoints, which move as the conversation grows.
func conversationOf(t *testing.T, api string, body []byte) []any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	key := "messages"
	if api == validate.Responses {
		key = "input"
	}
	list, _ := m[key].([]any)
	if api == validate.Anthropic {
		for _, msg := range list {
			blocks, _ := msg.(map[string]any)["content"].([]any)
			for _, b := range blocks {
				delete(b.(map[string]any), "cache_control")
			}
		}
	}
	return list
}

// TestSessions_ClaudeCodeCacheBreakpoints checks the breakpoints Claude Code sets: the system
// prompt, the last block of the last message, and the last block of the user message before.
func TestSessions_ClaudeCodeCacheBreakpoints(t *testing.T) {
	sessions, _ := Load(t)
	for _, s := range sessions {
		if s.API != validate.Anthropic {
			continue
		}
		for i, b := range s.Bodies {
			var body struct {
				System   []map[string]any `json:"system"`
				Messages []struct {
					Role    string           `json:"role"`
					Content []map[string]any `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatal(err)
			}
			var users []int
			n := 0
			for j, m := range body.Messages {
				if m.Role == "user" {
					users = append(users, j)
				}
				for k, blk := range m.Content {
					if blk["cache_control"] != nil {
						n++
						if k != len(m.Content)-1 {
							t.Errorf("%s body %d: breakpoint on messages[%d].content[%d], not the message's last block", s.Name, i+1, j, k)
						}
					}
				}
			}
			want := min(2, len(users))
			if last := body.Messages[len(body.Messages)-1]; last.Role != "user" {
				t.Errorf("%s body %d: last message is %s, want user", s.Name, i+1, last.Role)
			}
			if n != want || body.System[0]["cache_control"] == nil {
				t.Errorf("%s body %d: %d message breakpoints (want %d), system breakpoint %v", s.Name, i+1, n, want, body.System[0]["cache_control"])
			}
		}
	}
}

// ---- hand-written transcripts: every repair ----

func jsonLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type obj = map[string]any

func ccUser(uuid, parent string, content any) obj {
	return obj{"type": "user", "uuid": uuid, "parentUuid": parent, "message": obj{"role": "user", "content": content}}
}

func ccAssistant(uuid, parent, id string, block obj) obj {
	return obj{"type": "assistant", "uuid": uuid, "parentUuid": parent,
		"message": obj{"id": id, "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{block}}}
}

func text(s string) obj { return obj{"type": "text", "text": s} }

func toolUse(id, name string) obj {
	return obj{"type": "tool_use", "id": id, "name": name, "input": obj{"arg": id}}
}

func ccToolResult(id, content string) obj {
	return obj{"type": "tool_result", "tool_use_id": id, "content": content}
}

// writeCorpus writes a corpus folder: files maps a path under it to its lines.
func writeCorpus(t *testing.T, files map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, ls := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuild_Repairs(t *testing.T) {
	synthetic := ccAssistant("a6", "u3", "m3", text("API Error: overloaded"))
	synthetic["message"].(obj)["model"] = "<synthetic>"
	sidechainStart := ccUser("s1", "", "Search for X")
	sidechainStart["isSidechain"], sidechainStart["agentId"] = true, "abc"
	sidechainReply := ccAssistant("s2", "s1", "s-m1", text("Found X."))
	sidechainReply["isSidechain"], sidechainReply["agentId"] = true, "abc"
	summary := ccUser("u9", "c1", "This session is being continued from a previous conversation.")
	summary["isCompactSummary"] = true
	cc := []obj{
		{"type": "summary", "summary": "A title", "leafUuid": "x"},
		ccUser("u1", "", "Fix the bug"),
		ccAssistant("a1", "u1", "m1", text("Looking.")),
		ccAssistant("a2", "a1", "m1", toolUse("toolu_1", "Read")),
		ccAssistant("a2", "a1", "m1", toolUse("toolu_1", "Read")), // the same line twice
		ccUser("u2", "a2", []any{ccToolResult("toolu_1", "contents")}),
		ccAssistant("a3", "u2", "m2", obj{"type": "thinking", "thinking": "hmm"}), // no signature
		ccAssistant("a4", "a3", "m2", text("  ")),                                 // empty text
		ccAssistant("a5", "a4", "m2", toolUse("toolu_2", "Bash")),
		ccUser("u3", "a5", "stop"), // interrupted: toolu_2 has no result
		synthetic,
		ccAssistant("a7", "a6", "m4", toolUse("toolu_3", "mcp__ctx__search")),
		ccUser("u4", "a7", "queued note"), // before the result
		ccUser("u5", "u4", []any{ccToolResult("toolu_3", "found")}),
		ccUser("u6", "u5", []any{ccToolResult("toolu_9", "orphan")}),
		ccAssistant("a8", "u6", "m5", obj{"type": "thinking", "thinking": "let me", "signature": "sig"}),
		ccUser("u7", "a8", []any{text("[Request interrupted by user]")}),
		ccUser("u8", "u7", "continue please"),
		ccAssistant("a9", "u8", "m6", text("Done.")),
		{"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": nil, "logicalParentUuid": "a9"},
		summary,
		ccAssistant("a10", "u9", "m7", text("Continuing.")),
		sidechainStart,
		sidechainReply,
	}
	var ccLines []string
	for _, l := range cc {
		ccLines = append(ccLines, jsonLine(t, l))
	}
	ccLines = append(ccLines, `{"type":"user","uuid":`) // a line cut short

	// Raw lines, to check that item fields keep their order.
	codexLines := []string{
		`{"type":"session_meta","payload":{"id":"s","instructions":"Be Codex."}}`,
		`{"type":"turn_context","payload":{"model":"gpt-5-codex"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`,
		`{"type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAA"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"js","namespace":"mcp__node__","arguments":"{}","call_id":"c1"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok"}}`,
		`{"type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{"id":"g"}}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"first"}]}}`,
		`{"type":"event_msg","payload":{"type":"user_message","message":"again"}}`, // no response_item for it
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c2"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"a.txt"}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`,
	}
	dir := writeCorpus(t, map[string][]string{
		"MANIFEST.tsv": {
			"client\tlocal_file\tprovenance",
			"claude-code\tclaude-code/s.jsonl\treal",
			"codex\tcodex/hand.jsonl\thandmade",
		},
		"claude-code/s.jsonl":     ccLines,
		"claude-code/empty.jsonl": {`{"type":"summary","summary":"nothing","leafUuid":"x"}`},
		"codex/r.jsonl":           codexLines,
		"codex/hand.jsonl":        codexLines,
	})

	sessions, rep, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	for _, s := range sessions {
		for i, b := range s.Bodies {
			if errs := validate.Body(s.API, b); len(errs) > 0 {
				t.Errorf("%s (%s) body %d invalid: %v\n%s", s.Name, s.API, i+1, errs, b)
			}
		}
	}

	type key struct{ name, api string }
	got := map[key]int{}
	for _, s := range sessions {
		got[key{s.Name, s.API}] = len(s.Bodies)
	}
	want := map[key]int{
		{"s.jsonl", validate.Anthropic}:           4, // m1, m2, m4, m6 (m3 synthetic, m5 thinking only)
		{"s.jsonl", validate.Chat}:                4,
		{"s.jsonl#part-2", validate.Anthropic}:    1,
		{"s.jsonl#part-2", validate.Chat}:         1,
		{"s.jsonl#agent-abc", validate.Anthropic}: 1,
		{"s.jsonl#agent-abc", validate.Chat}:      1,
		{"r.jsonl", validate.Responses}:           4, // before each run of model output
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessions and bodies:\n got %v\nwant %v", got, want)
	}

	wantRepairs := map[string]int{
		RepairBadLine:          1,
		RepairMergedUser:       3, // u4+u5, u5+u6, u7+u8
		RepairDuplicateLine:    1,
		RepairSyntheticMessage: 1,
		RepairUnsignedThinking: 1,
		RepairEmptyText:        1,
		RepairInterrupted:      1,
		RepairToolResultOrder:  1,
		RepairOrphanToolResult: 1,
		RepairThinkingOnly:     1,
		RepairNullField:        1,
		RepairNamespace:        1,
		RepairGhostSnapshot:    1,
		RepairUserMessageEvent: 1,
	}
	if got := rep.Repairs(); !reflect.DeepEqual(got, wantRepairs) {
		t.Errorf("repairs:\n got %v\nwant %v", got, wantRepairs)
	}
	skipped := map[string]string{}
	for _, f := range rep.Files {
		if f.Skipped != "" {
			skipped[f.File] = f.Skipped
		}
	}
	if len(skipped) != 2 || !strings.Contains(skipped["codex/hand.jsonl"], "hand-made") || !strings.Contains(skipped["claude-code/empty.jsonl"], "no request") {
		t.Errorf("skipped files: %v", skipped)
	}

	byName := map[key]Session{}
	for _, s := range sessions {
		byName[key{s.Name, s.API}] = s
	}
	last := byName[key{"s.jsonl", validate.Anthropic}].Bodies[3]
	for _, want := range []string{
		`{"type":"tool_result","tool_use_id":"toolu_2","content":"[interrupted]","is_error":true}`,
		`"messages":[{"role":"user","content":[{"type":"text","text":"Fix the bug"}]}`,
		// Tool results first, then the user's text, the breakpoint on the last block.
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"found"},{"type":"text","text":"queued note"},{"type":"text","text":"[Request interrupted by user]"},{"type":"text","text":"continue please","cache_control":{"type":"ephemeral"}}]}]}`,
		`{"name":"mcp__ctx__search","description":`,
	} {
		if !bytes.Contains(last, []byte(want)) {
			t.Errorf("last Anthropic body lacks %s:\n%s", want, last)
		}
	}
	for _, unwanted := range []string{"toolu_9", "hmm", "let me", "API Error"} {
		if bytes.Contains(last, []byte(unwanted)) {
			t.Errorf("last Anthropic body holds %q:\n%s", unwanted, last)
		}
	}
	chatLast := byName[key{"s.jsonl", validate.Chat}].Bodies[3]
	for _, want := range []string{
		`{"role":"system","content":"You are Claude Code`,
		`{"role":"assistant","content":"Looking.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"Read","arguments":"{\"arg\":\"toolu_1\"}"}}]}`,
		`{"role":"tool","tool_call_id":"toolu_2","content":"[interrupted]"},{"role":"user","content":[{"type":"text","text":"stop"}]}`,
	} {
		if !bytes.Contains(chatLast, []byte(want)) {
			t.Errorf("last Chat body lacks %s:\n%s", want, chatLast)
		}
	}
	resp := byName[key{"r.jsonl", validate.Responses}].Bodies
	for _, want := range []string{
		`{"model":"gpt-5-codex","instructions":"Be Codex.","input":[{"type":"message","role":"developer"`,
		`{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}`,
		`{"type":"function_call","name":"mcp__node__js","arguments":"{}","call_id":"c1"}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}`,
		`"tools":[{"type":"function","name":"mcp__node__js"`,
	} {
		if !bytes.Contains(resp[3], []byte(want)) {
			t.Errorf("last Responses body lacks %s:\n%s", want, resp[3])
		}
	}
	if bytes.Contains(resp[3], []byte("ghost")) {
		t.Errorf("Responses body holds the ghost snapshot:\n%s", resp[3])
	}
}

func TestBuild_NotACorpus(t *testing.T) {
	if _, _, err := Build(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no claude-code transcripts") {
		t.Fatalf("Build on an empty folder: err = %v, want one naming the missing transcripts", err)
	}
}

func TestCorpusDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OBSERVER_CORPUS", dir)
	if got := CorpusDir(); got != dir {
		t.Errorf("CorpusDir() = %q with OBSERVER_CORPUS=%q", got, dir)
	}
	t.Setenv("OBSERVER_CORPUS", filepath.Join(dir, "absent"))
	if got := CorpusDir(); got != "" {
		t.Errorf("CorpusDir() = %q for an absent folder, want \"\"", got)
	}
}
