package goose

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// TestMessages_Database reads the hand-written database (no corpus holds goose sessions): the
// prompts (not goose's hidden instruction), replies, thinking and tool calls in order, and a
// compaction of today's goose (the summary, hidden from the user and followed by goose's hidden
// continuation, is the summary; the continuation is none; the prompt goose copies after it is a
// prompt, as it is for the actions).
func TestMessages_Database(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeDemo(t, path)
	agentOnly := `{"userVisible":false,"agentVisible":true}`
	for _, m := range [][]any{
		{"msg_m", "user", `[{"type":"text","text":"## Summary\nFixed the README; tests pending."}]`, t0 + 70, agentOnly},
		{"msg_n", "assistant", `[{"type":"text","text":"Your context was compacted. The previous message contains a summary of the conversation so far."}]`, t0 + 70, agentOnly},
		{"msg_o", "user", `[{"type":"text","text":"thanks, and this screenshot?"}]`, t0 + 71, visibleMeta},
		{"msg_p", "assistant", `[{"type":"reasoning","text":"Same screenshot."},{"type":"redactedThinking","data":"xx"},{"type":"text","text":"Still the demo."}]`, t0 + 72, visibleMeta},
	} {
		execT(t, db, insMessage, m[0], "20260105_1", m[1], m[2], m[3], m[4])
	}
	evs, _, _ := poll(t, New(nil), path, nil)
	for _, e := range evs {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.ID, err)
		}
	}
	convs := transcripttest.Conversations(evs)
	got := convs["20260105_1"]
	transcripttest.CheckConversation(t, got,
		"user\t\tList the files and fix the typo in README.md",
		"assistant\t\tLet me look.",
		"tool_call\tdeveloper__shell\tls -la",
		"tool_call\tdeveloper__text_editor\tREADME.md",
		"tool_call\tdeveloper__text_editor\tREADME.md",
		"tool_call\tgithub__create_issue\t",
		"tool_call\t\t", // a call goose could not parse: no tool, its id
		"user\t\tthanks, and this screenshot?\\n[image]",
		"thinking\t\tIt shows the demo.",
		"assistant\t\tDone.",
		"summary\t\t## Summary\\nFixed the README; tests pending.",
		"user\t\tthanks, and this screenshot?",
		"thinking\t\tSame screenshot.",
		"assistant\t\tStill the demo.",
	)
	for _, e := range got {
		m := e.Message
		if m.Role == event.RoleAssistant && m.Model != "claude-sonnet-4-20250514" || m.Role == event.RoleUser && m.Model != "" {
			t.Errorf("%s: model %q", m.Role, m.Model)
		}
		if m.Role == event.RoleToolCall && m.ToolUseID == "" {
			t.Errorf("tool call %+v", m)
		}
	}
	// One tool call message per tool call action.
	uses := map[string]bool{}
	for _, a := range transcripttest.WithoutMessages(evs) {
		if a.Action != nil && a.Action.ToolUseID != "" {
			uses[a.Action.ToolUseID] = true
		}
	}
	calls := len(uses)
	if n := strings.Count(transcripttest.ConversationText(got)+transcripttest.ConversationText(convs["20260105_2"]), "tool_call\t"); n != calls {
		t.Errorf("%d tool call messages, %d tool calls", n, calls)
	}
	// The subagent's session is a session of its own here (nothing links it to its parent).
	transcripttest.CheckConversation(t, convs["20260105_2"], "user\t\trun the tests", "tool_call\tdeveloper__shell\tgo test ./...")
	// goose's replace_conversation inserts the rows again under new ids: the same messages.
	execT(t, db, "DELETE FROM messages WHERE session_id = '20260105_1'")
	for _, m := range demoMessages {
		execT(t, db, insMessage, m[0], "20260105_1", m[1], m[2], m[3], m[4])
	}
	again, _, _ := poll(t, New(nil), path, nil)
	ids := map[string]bool{}
	for _, e := range got {
		ids[e.ID] = true
	}
	for _, e := range transcripttest.Conversations(again)["20260105_1"] {
		if !ids[e.ID] {
			t.Errorf("a re-inserted message has a new id: %s %+v", e.ID, e.Message)
		}
	}
}

// A session file and the database goose imported it into are the same messages.
func TestMessages_FileMatchesDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "20260105_1.jsonl")
	writeFile(t, path, legacyLines)
	fileEvs, _, err := readDoc(t, New(nil), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, DBName)
	writeDemo(t, dbPath)
	dbEvs, _, _ := poll(t, New(nil), dbPath, nil)
	file := transcripttest.Conversations(fileEvs)["20260105_1"]
	transcripttest.CheckConversation(t, file, "user\t\tList the files and fix the typo in README.md", "assistant\t\tLet me look.", "tool_call\tdeveloper__shell\tls -la")
	ids := map[string]bool{}
	for _, e := range transcripttest.Conversations(dbEvs)["20260105_1"] {
		ids[e.ID] = true
	}
	for _, e := range file {
		if !ids[e.ID] {
			t.Errorf("the file's %s message %s is not the database's", e.Message.Role, e.ID)
		}
	}
}
