package pi

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var fixtureMessages = []string{
	`{"type":"session","version":3,"id":"0b1c2d3e-0000-4000-8000-0000000000aa","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/tmp/piwork/proj"}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":"fix the build, token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB","timestamp":1767348001000}}`,
	`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-02T10:00:05.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Look at the Makefile.","thinkingSignature":"sig"},{"type":"thinking","thinking":"","thinkingSignature":"{\"encrypted_content\":\"gAAA\"}"},{"type":"text","text":"Running it."},{"type":"toolCall","id":"toolu_1","name":"bash","arguments":{"command":"make build"}}],"provider":"anthropic","model":"claude-sonnet-4-5","responseId":"msg_01","usage":{"input":3,"output":60,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":1767348005000}}`,
	`{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-02T10:00:06.000Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1767348006000}}`,
	`{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-02T10:00:07.000Z","message":{"role":"custom","customType":"reminder","content":"an extension's note","display":true,"timestamp":1767348007000}}`,
	`{"type":"custom_message","id":"a5","parentId":"a4","timestamp":"2026-01-02T10:00:08.000Z","customType":"x","content":"to the model","display":false}`,
	`{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-01-02T10:00:09.000Z","message":{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"cancelled":false,"timestamp":1767348009000}}`,
	`{"type":"compaction","id":"a7","parentId":"a6","timestamp":"2026-01-02T10:00:10.000Z","summary":"## Goal\nFix the build.","firstKeptEntryId":"a6","tokensBefore":5400}`,
	`{"type":"branch_summary","id":"a8","parentId":"a7","timestamp":"2026-01-02T10:00:11.000Z","fromId":"a2","summary":"An abandoned try."}`,
	`{"type":"message","id":"a9","parentId":"a8","timestamp":"2026-01-02T10:00:12.000Z","message":{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1767348012000}}`,
	`{"type":"message","id":"b1","parentId":"a9","timestamp":"2026-01-02T10:00:15.000Z","message":{"role":"assistant","content":[{"type":"text","text":"A cat."}],"provider":"anthropic","model":"claude-sonnet-4-5","responseId":"msg_02","usage":{"input":3,"output":6,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":1767348015000}}`,
}

// TestMessages_Fixture covers each role: prompts (a string, text and an image), thinking (and an
// encrypted block with no text), a reply, a tool call (its result is its action's output, no
// message), a command the user ran with "!", a compaction summary; extension messages and a
// branch summary are none. Pi's files hold no subagent (OpenClaw's do: package openclaw).
func TestMessages_Fixture(t *testing.T) {
	path := "/tmp/piwork/sessions/2026-01-02T10-00-00-000Z_0b1c2d3e-0000-4000-8000-0000000000aa.jsonl"
	evs, _ := parseLines(t, New(nil), path, fixtureMessages...)
	got := transcripttest.Conversation(evs)
	transcripttest.CheckConversation(t, got,
		"user\t\tfix the build, token [REDACTED:github-token]",
		"thinking\t\tLook at the Makefile.",
		"assistant\t\tRunning it.",
		"tool_call\tbash\tmake build",
		"tool_call\tbashExecution\tgit status",
		"summary\t\t## Goal\\nFix the build.",
		"user\t\twhat is this?\\n[image]",
		"assistant\t\tA cat.",
	)
	for _, e := range got {
		m := e.Message
		if e.SessionID != "0b1c2d3e-0000-4000-8000-0000000000aa" || e.Project == "" || m.AgentID != "" || m.Sidechain {
			t.Errorf("%s: session %q project %q agent %q", e.ID, e.SessionID, e.Project, m.AgentID)
		}
		switch m.Role {
		case event.RoleAssistant, event.RoleThinking:
			if m.Model != "claude-sonnet-4-5" || !strings.HasPrefix(m.MessageID, "msg_0") {
				t.Errorf("%s: model %q message id %q", m.Role, m.Model, m.MessageID)
			}
		case event.RoleToolCall:
			if m.Tool == "bash" && (m.ToolUseID != "toolu_1" || m.MessageID != "msg_01") {
				t.Errorf("tool call %+v", m)
			}
		}
	}
	// The tool call's message and its action share the tool use id and the target.
	for _, e := range evs {
		if e.Kind == event.KindAction && e.Action.ToolUseID == "toolu_1" && e.Action.Target != "make build" {
			t.Errorf("action target %q", e.Action.Target)
		}
	}
	// Within the assistant message, the blocks keep their order at one time.
	if s := got[1].Message.Seq; got[2].Message.Seq != s+2 || got[3].Message.Seq != s+3 {
		t.Errorf("seqs %d %d %d", s, got[2].Message.Seq, got[3].Message.Seq)
	}
	// A fork copies the entries into another file, after a header of its own: same ids.
	fork := append([]string{`{"type":"session","version":3,"id":"0b1c2d3e-0000-4000-8000-0000000000bb","timestamp":"2026-01-03T10:00:00.000Z","cwd":"/tmp/piwork/proj","parentSession":"` + path + `"}`},
		fixtureMessages[1:]...)
	copied, _ := parseLines(t, New(nil), "/tmp/piwork/sessions/2026-01-03T10-00-00-000Z_0b1c2d3e-0000-4000-8000-0000000000bb.jsonl", fork...)
	if a, b := transcripttest.MessageIDs(got), transcripttest.MessageIDs(transcripttest.Conversation(copied)); !slices.Equal(a, b) {
		t.Errorf("a fork's messages have other ids:\n%v\n%v", a, b)
	}
}

// TestMessages_Corpus checks each corpus file's conversation against a golden file
// (testdata/golden/<file>.messages; -update rewrites them), and its count per role against the
// file's lines counted here apart from the parser: a user message with text or an image is a
// prompt, an assistant's text and thinking blocks with text replies and thoughts, its toolCall
// blocks and the user's bashExecution messages tool calls, a compaction entry with a summary a
// summary. A second read gives the same ids, and a read resumed at every line the same messages.
func TestMessages_Corpus(t *testing.T) {
	for _, name := range corpusNames(t) {
		t.Run(name, func(t *testing.T) {
			path := corpus(t, name)
			evs, _ := parseFile(t, New(nil), srcOf(path))
			got := transcripttest.Conversation(evs)
			transcripttest.GoldenText(t, filepath.Join("testdata", "golden", name+".messages"), transcripttest.ConversationText(got), *update)
			if want := countLines(t, path); !maps.Equal(transcripttest.RoleCounts(got), want) {
				t.Errorf("messages per role %v, the file's lines say %v", transcripttest.RoleCounts(got), want)
			}
			again, _ := parseFile(t, New(nil), srcOf(path))
			transcripttest.SameMessageIDs(t, got, transcripttest.Conversation(again))
			transcripttest.UniqueMessageIDs(t, evs)
			resumed, err := transcripttest.Resumed(t, New(nil), srcOf(path))
			if err != nil {
				t.Log(err)
			}
			if a, b := transcripttest.ConversationText(got), transcripttest.ConversationText(transcripttest.Conversation(resumed)); a != b {
				t.Errorf("a resumed read differs")
			}
		})
	}
}

// countLines counts the messages a file's lines hold, per role.
func countLines(tb testing.TB, path string) map[string]int {
	tb.Helper()
	n := map[string]int{}
	for _, l := range transcripttest.ReadLines(tb, path) {
		var e struct {
			Type    string `json:"type"`
			Summary string `json:"summary"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		if e.Type == "compaction" && strings.TrimSpace(e.Summary) != "" {
			n[event.RoleSummary]++
		}
		if e.Type != "message" {
			continue
		}
		var blocks []struct{ Type, Text, Thinking string }
		var s string
		if json.Unmarshal(e.Message.Content, &s) == nil {
			blocks = append(blocks, struct{ Type, Text, Thinking string }{"text", s, ""})
		} else {
			_ = json.Unmarshal(e.Message.Content, &blocks)
		}
		switch e.Message.Role {
		case "user":
			if slices.ContainsFunc(blocks, func(b struct{ Type, Text, Thinking string }) bool {
				return b.Type == "image" || b.Type == "text" && strings.TrimSpace(b.Text) != ""
			}) {
				n[event.RoleUser]++
			}
		case "assistant":
			for _, b := range blocks {
				switch {
				case b.Type == "text" && strings.TrimSpace(b.Text) != "":
					n[event.RoleAssistant]++
				case b.Type == "thinking" && strings.TrimSpace(b.Thinking) != "":
					n[event.RoleThinking]++
				case b.Type == "toolCall":
					n[event.RoleToolCall]++
				}
			}
		case "bashExecution":
			n[event.RoleToolCall]++
		}
	}
	return n
}
