package cursor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Thinking, the reply and a tool call of one bubble, in the order the composer's headers give
// (bubbles at the same time), scrubbed; a tool call's message has its action's target and id;
// the ids are the same at a second read.
func TestPoll_Messages(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("C", 90)
	path := filepath.Join(t.TempDir(), "globalStorage", "state.vscdb")
	db := newDB(t, path, "DELETE")
	put(t, db, "cursorDiskKV", "composerData:c9", map[string]any{"composerId": "c9", "createdAt": c0, "lastUpdatedAt": c0,
		"fullConversationHeadersOnly": []any{map[string]any{"bubbleId": "u1", "type": 1}, map[string]any{"bubbleId": "a1", "type": 2},
			map[string]any{"bubbleId": "a2", "type": 2}}})
	// a2 is written first, and no bubble has a time of its own: the headers order them.
	put(t, db, "cursorDiskKV", "bubbleId:c9:a2", map[string]any{"type": 2, "bubbleId": "a2", "text": "Done. The key was " + key})
	put(t, db, "cursorDiskKV", "bubbleId:c9:u1", map[string]any{"type": 1, "bubbleId": "u1", "text": "run the tests\n"})
	put(t, db, "cursorDiskKV", "bubbleId:c9:a1", map[string]any{"type": 2, "bubbleId": "a1", "text": "Running them.",
		"thinking": map[string]any{"text": "the tests are in ./..."}, "modelInfo": map[string]any{"modelName": "gpt-5"},
		"toolFormerData": map[string]any{"toolCallId": "toolu_9", "status": "completed", "name": "run_terminal_cmd",
			"params": jsonString(t, map[string]any{"command": "go test ./..."}), "result": jsonString(t, map[string]any{"output": "ok"})}})
	put(t, db, "cursorDiskKV", "bubbleId:c9:a3", map[string]any{"type": 2, "bubbleId": "a3", "text": "",
		"allThinkingBlocks": []any{map[string]any{"text": ""}}})
	evs, _, _ := poll(t, New(nil), path, nil)
	if got, want := transcripttest.ConversationsLines(transcripttest.Conversations(evs)), []string{
		"# c9",
		"user\t\trun the tests",
		"thinking\t\tthe tests are in ./...",
		"assistant\t\tRunning them.",
		"tool_call\trun_terminal_cmd\tgo test ./...",
		"assistant\t\tDone. The key was [REDACTED:anthropic-key]",
	}; !slices.Equal(got, want) {
		t.Errorf("conversation\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range transcripttest.Conversation(evs) {
		m := e.Message
		if m.Role == event.RoleToolCall && (m.ToolUseID != "toolu_9" || m.Model != "gpt-5" || m.MessageID != "a1" ||
			e.ID != event.ID(Client, "message", "c9", "a1", "2")) {
			t.Errorf("call message %s %+v", e.ID, m)
		}
	}
	again, _, _ := poll(t, New(nil), path, nil)
	transcripttest.SameMessageIDs(t, transcripttest.Conversation(evs), transcripttest.Conversation(again))
}
