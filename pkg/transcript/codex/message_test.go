package codex

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// rawCounts counts, walking the rollout's lines with encoding/json alone, what must become a
// message: event_msg user_message (the prompts; no corpus file has the item_completed form),
// the text parts of response_item assistant messages, the summary parts of reasoning items (their
// raw content parts when the summary is empty), every tool call (function_call, custom_tool_call,
// local_shell_call, web_search_call) and the compactions with a message. The corpus holds no
// file of the bare format.
func rawCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	type part struct {
		Text string `json:"text"`
	}
	out := map[string]int{}
	texts := func(parts []part) (n int) {
		for _, p := range parts {
			if strings.TrimSpace(p.Text) != "" {
				n++
			}
		}
		return n
	}
	for i, line := range transcripttest.ReadLines(t, path) {
		var rec struct {
			Type    string `json:"type"`
			Payload *struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				Message json.RawMessage `json:"message"`
				Content json.RawMessage `json:"content"`
				Summary json.RawMessage `json:"summary"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Payload == nil {
			t.Fatalf("line %d is not an envelope: %v", i+1, err)
		}
		pl := rec.Payload
		var content, summary []part
		_ = json.Unmarshal(pl.Content, &content)
		_ = json.Unmarshal(pl.Summary, &summary) // turn_context's summary is a string
		switch rec.Type + "/" + pl.Type {
		case "event_msg/user_message":
			var s string
			if json.Unmarshal(pl.Message, &s) == nil && strings.TrimSpace(s) != "" {
				out[event.RoleUser]++
			}
		case "response_item/message":
			if pl.Role == "assistant" {
				out[event.RoleAssistant] += texts(content)
			}
		case "response_item/reasoning":
			if n := texts(summary); n > 0 {
				out[event.RoleThinking] += n
			} else {
				out[event.RoleThinking] += texts(content)
			}
		case "response_item/function_call", "response_item/custom_tool_call", "response_item/local_shell_call",
			"response_item/web_search_call":
			out[event.RoleToolCall]++
		case "compacted/":
			var s string
			if json.Unmarshal(pl.Message, &s) == nil && strings.TrimSpace(s) != "" {
				out[event.RoleSummary]++
			}
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// Every corpus rollout's conversation is its messages, in count and order: the golden files hold
// the sequence (go test -update rewrites them), and the count per role is checked against a walk
// of the raw lines. A second read gives the same messages under the same ids.
func TestCorpus_Conversation(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			path := corpus(t, name)
			evs, _ := parseFile(t, testAdapter(t, ""), path)
			msgs := transcripttest.Conversation(evs)
			transcripttest.GoldenText(t, filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".jsonl")+".messages.txt"),
				transcripttest.ConversationText(msgs), *update)
			if got, want := transcripttest.RoleCounts(msgs), rawCounts(t, path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("messages per role = %v, the raw lines hold %v", got, want)
			}
			for _, e := range msgs {
				m := e.Message
				if e.SessionID == "" || e.Time.IsZero() || e.Client != Client {
					t.Fatalf("message envelope %+v", e)
				}
				if m.Role == event.RoleToolCall && m.ToolUseID == "" && m.Tool != "web_search" {
					t.Errorf("tool call without id %+v", m)
				}
			}

			again, _ := parseFile(t, testAdapter(t, ""), path)
			transcripttest.SameEvents(t, transcripttest.Conversation(again), msgs)
			if n := len(transcripttest.Conversation(append(append([]event.Event{}, evs...), again...))); n != len(msgs) {
				t.Errorf("two reads hold %d distinct messages, one %d", n, len(msgs))
			}
		})
	}
}

// A tool call's message carries the id and target of the call's action.
func TestCorpus_CallMessagesMatchActions(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			evs, _ := parseFile(t, testAdapter(t, ""), corpus(t, name))
			calls := map[string]*event.Action{}
			for _, e := range evs {
				if a := e.Action; a != nil && a.ToolUseID != "" && calls[a.ToolUseID] == nil {
					calls[a.ToolUseID] = a // the call's own event comes first
				}
			}
			for _, e := range transcripttest.Conversation(evs) {
				m := e.Message
				if m.Role != event.RoleToolCall || m.ToolUseID == "" {
					continue
				}
				a := calls[m.ToolUseID]
				if a == nil || a.Tool != m.Tool || a.Target != m.Text {
					t.Errorf("message %+v, action %+v", m, a)
				}
			}
		})
	}
}

// Fixture lines (envelope format), each with what it must yield as messages.
var fixture = []struct {
	line string
	want []string // role|tool|text of each message
}{
	{`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"0199aaaa-0000-7000-8000-000000000001","cwd":"/w/proj","timestamp":"2026-03-01T10:00:00Z"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>\nsandbox"}]}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /w/proj\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>"}]}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w/proj</cwd>\n</environment_context>"}]}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:02Z","type":"turn_context","payload":{"cwd":"/w/proj","model":"gpt-5.2-codex","turn_id":"turn-1"}}`, nil},
	// The typed prompt is written twice: as a response_item (not read) and as the event_msg.
	{`{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the failing test"}]}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"fix the failing test","images":[]}}`,
		[]string{"user||fix the failing test"}},
	// Reasoning: the summary parts; the event_msg copy is not read; encrypted content alone is nothing.
	{`{"timestamp":"2026-03-01T10:00:03Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"**Looking**\n\nat the test"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Looking**\n\nat the test"},{"type":"summary_text","text":"**Planning**"}],"content":null,"encrypted_content":"gAAAA"}}`,
		[]string{"thinking||**Looking**\n\nat the test", "thinking||**Planning**"}},
	{`{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAB"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"raw thought"}]}}`,
		[]string{"thinking||raw thought"}},
	{`{"timestamp":"2026-03-01T10:00:04Z","type":"event_msg","payload":{"type":"agent_message","message":"Running the tests."}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:04Z","type":"response_item","payload":{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"Running the tests."}],"phase":"commentary"}}`,
		[]string{"assistant||Running the tests."}},
	{`{"timestamp":"2026-03-01T10:00:05Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"call_1","arguments":"{\"cmd\":\"go test ./...\",\"workdir\":\"/w/proj\"}"}}`,
		[]string{"tool_call|exec_command|go test ./..."}},
	{`{"timestamp":"2026-03-01T10:00:06Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Chunk ID: 1\nWall time: 1 seconds\nProcess exited with code 1\nOutput:\nFAIL x_test.go"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:07Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"call_2","input":"*** Begin Patch\n*** Update File: /w/proj/x.go\n@@\n-a\n+b\n*** End Patch"}}`,
		[]string{"tool_call|apply_patch|x.go"}},
	{`{"timestamp":"2026-03-01T10:00:08Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"call_3","status":"completed","action":{"type":"exec","command":["bash","-lc","cat x.go"]}}}`,
		[]string{"tool_call|local_shell|x.go"}},
	{`{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed: the key was sk-proj-A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4"},{"type":"output_text","text":"  "},{"type":"output_text","text":"Done."}]}}`,
		[]string{"assistant||Fixed: the key was [REDACTED:openai-key]", "assistant||Done."}},
	{`{"timestamp":"2026-03-01T10:00:10Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"turn-1","reason":"interrupted"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:10Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>\nThe user interrupted.\n</turn_aborted>"}]}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:11Z","type":"compacted","payload":{"message":"Summary: the test was fixed.","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the failing test"}]}]}}`,
		[]string{"summary||Summary: the test was fixed."}},
	{`{"timestamp":"2026-03-01T10:00:12Z","type":"response_item","payload":{"type":"compaction","encrypted_content":"gAAAC"}}`, nil},
	{`{"timestamp":"2026-03-01T10:00:13Z","type":"event_msg","payload":{"type":"user_message","message":"# Context from my IDE setup:\n\n## Active file: x.go\n\n## My request for Codex:\nnow commit","images":[]}}`,
		[]string{"user||now commit"}},
}

func fixtureLines() [][]byte {
	var out [][]byte
	for _, f := range fixture {
		out = append(out, []byte(f.line))
	}
	return out
}

func messageString(m *event.Message) string { return m.Role + "|" + m.Tool + "|" + m.Text }

// Each fixture line yields its messages, and nothing else becomes one: injected context, the
// event_msg copies, encrypted reasoning, the call outputs.
func TestParser_Messages(t *testing.T) {
	const sid = "0199aaaa-0000-7000-8000-000000000001"
	src := transcript.Source{Path: "/x/rollout-2026-03-01T10-00-00-" + sid + ".jsonl"}
	p, _ := New("").newParser(src, nil)
	var all []event.Event
	for i, f := range fixture {
		evs := run(t, p, [][]byte{[]byte(f.line)})
		var got []string
		for _, e := range evs {
			if m := e.Message; m != nil {
				got = append(got, messageString(m))
				if e.SessionID != sid || e.Project != "/w/proj" || e.Source != Component {
					t.Errorf("line %d: envelope %+v", i+1, e)
				}
				if want := int64(i+1) * 64; m.Seq < want || m.Seq >= want+64 {
					t.Errorf("line %d: seq %d", i+1, m.Seq)
				}
				if m.Role != event.RoleUser && m.Role != event.RoleSummary && m.Model != "gpt-5.2-codex" {
					t.Errorf("line %d: model %q", i+1, m.Model)
				}
			}
		}
		if strings.Join(got, "\x00") != strings.Join(f.want, "\x00") {
			t.Errorf("line %d: messages %q, want %q", i+1, got, f.want)
		}
		all = append(all, evs...)
	}
	msgs := transcripttest.Conversation(all)
	byTool := map[string]*event.Message{}
	for _, e := range msgs {
		if m := e.Message; m.Role == event.RoleToolCall {
			byTool[m.Tool] = m
		}
	}
	if m := byTool["exec_command"]; m == nil || m.ToolUseID != "call_1" {
		t.Errorf("exec_command message %+v", m)
	}
	for _, e := range all {
		if a := e.Action; a != nil && a.ToolUseID == "call_1" && a.Output != "" {
			if strings.Contains(transcripttest.ConversationText(msgs), "FAIL x_test.go") {
				t.Errorf("a call's output became a message")
			}
		}
	}
	if m := msgs[len(msgs)-1].Message; m.Role != event.RoleUser || msgs[0].Message.Role != event.RoleUser {
		t.Errorf("conversation %s", transcripttest.ConversationText(msgs))
	}
	// The assistant message's id; the two blocks of one message share it.
	for _, e := range msgs {
		if m := e.Message; m.Text == "Running the tests." && m.MessageID != "msg_1" {
			t.Errorf("message id %q", m.MessageID)
		}
	}
}

// The same lines give the same message ids read again, in another file, or by a parser resumed
// from State; and the fixture's ids are fixed (a change of the keying would store everything
// twice).
func TestParser_MessageIDsStable(t *testing.T) {
	lines := fixtureLines()
	read := func(path string, split int) []event.Event {
		src := transcript.Source{Path: path}
		p, _ := New("").newParser(src, nil)
		evs := run(t, p, lines[:split])
		p2, err := New("").newParser(src, p.State())
		if err != nil {
			t.Fatal(err)
		}
		return transcripttest.Conversation(append(evs, run(t, p2, lines[split:])...))
	}
	one := read("/x/rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl", len(lines))
	if len(one) != 12 {
		t.Fatalf("%d messages:\n%s", len(one), transcripttest.ConversationText(one))
	}
	for _, split := range []int{1, 7, 12, 20} {
		other := read("/y/rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl", split)
		if len(other) != len(one) {
			t.Fatalf("split %d: %d messages", split, len(other))
		}
		for i := range one {
			if one[i].ID != other[i].ID || one[i].Message.Seq != other[i].Message.Seq {
				t.Errorf("split %d: message %d id %s seq %d, was %s %d", split, i, other[i].ID, other[i].Message.Seq,
					one[i].ID, one[i].Message.Seq)
			}
		}
	}
	ids := map[string]bool{}
	for _, e := range one {
		if ids[e.ID] {
			t.Errorf("id %s twice", e.ID)
		}
		ids[e.ID] = true
	}
}

// The bare format has no event_msg: a user message that is not injected context is the prompt;
// assistant messages and reasoning are read as in the envelope format.
func TestParser_BareFormatMessages(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z","instructions":null}`),
		[]byte(`{"record_type":"state"}`),
		[]byte(`{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/u/proj</cwd>\n</environment_context>"}]}`),
		[]byte(`{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"<user_instructions>\nuse tabs\n</user_instructions>"}]}`),
		[]byte(`{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"fix the build"}]}`),
		[]byte(`{"type":"reasoning","id":"rs_9","summary":[{"type":"summary_text","text":"Checking go.mod"}],"encrypted_content":"x"}`),
		[]byte(`{"type":"local_shell_call","id":"lsc_1","call_id":"call_1","status":"completed","action":{"type":"exec","command":["bash","-lc","make"]}}`),
		[]byte(`{"type":"message","id":"msg_2","role":"assistant","content":[{"type":"output_text","text":"Built."}]}`),
	}
	p, _ := New("").newParser(transcript.Source{Path: "/x/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"}, nil)
	msgs := transcripttest.Conversation(run(t, p, lines))
	var got []string
	for _, e := range msgs {
		got = append(got, messageString(e.Message))
	}
	want := []string{"user||fix the build", "thinking||Checking go.mod", "tool_call|local_shell|make", "assistant||Built."}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("messages %q, want %q", got, want)
	}
}

// A fork replays its parent's lines: read together, the parent's messages are stored once and the
// fork adds only its own turn's prompt and call.
func TestParser_ForkMessagesOnce(t *testing.T) {
	parentPath := corpus(t, fileCodemie)
	parentLines := transcripttest.ReadLines(t, parentPath)
	const parentID = "019b7f94-51b4-7593-922e-ba12b5b73b52"
	const forkID = "019b8000-0000-7000-8000-00000000f001"
	home := t.TempDir()
	forkPath := filepath.Join(home, "sessions", "2026", "01", "03", "rollout-2026-01-03T10-00-00-"+forkID+".jsonl")
	forkLines := forkOf(t, parentLines, forkID, parentID, "2026-01-03T10:00:00.000Z",
		counts{Input: 22474, Cached: 14848, Output: 300, Reasoning: 128}, counts{Input: 8000, Cached: 7680, Output: 50}, "call_fork_1")
	writeLines(t, forkPath, forkLines)
	a := testAdapter(t, home)
	parentEvs, _ := parseFile(t, a, parentPath)
	forkEvs, _ := parseFile(t, a, forkPath)
	parent := transcripttest.Conversation(parentEvs)
	both := transcripttest.Conversation(append(append([]event.Event{}, parentEvs...), forkEvs...))
	if len(both) != len(parent)+2 {
		t.Fatalf("parent %d messages, with the fork %d, want 2 more:\n%s", len(parent), len(both), transcripttest.ConversationText(both))
	}
	added := both[len(parent):]
	transcripttest.CheckConversation(t, added, "user\t\tnow run the tests", "tool_call\tshell\tgo test ./...")
}
