package cursor

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// notMessages drops the message events (the handwritten golden keeps the other events' views).
func notMessages(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Message == nil {
			out = append(out, e)
		}
	}
	return out
}

// messagesOf returns the message events in (session, Time, Seq) order.
func messagesOf(evs []event.Event) []event.Event {
	var msgs []event.Event
	for _, e := range evs {
		if e.Message != nil {
			msgs = append(msgs, e)
		}
	}
	sort.SliceStable(msgs, func(i, j int) bool {
		a, b := msgs[i], msgs[j]
		if a.SessionID != b.SessionID {
			return a.SessionID < b.SessionID
		}
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.Message.Seq < b.Message.Seq
	})
	return msgs
}

// conversation is the golden form of the messages: one line each, session, role, tool, the
// first 60 characters of the text with newlines escaped.
func conversation(evs []event.Event) []string {
	var out []string
	for _, e := range messagesOf(evs) {
		m := e.Message
		text := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(transcript.CutRunes(m.Text, 60))
		out = append(out, fmt.Sprintf("%s %s %s %s", e.SessionID, m.Role, m.Tool, text))
	}
	return out
}

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
	got := strings.Join(conversation(evs), "\n")
	want := strings.Join([]string{
		"c9 user  run the tests",
		"c9 thinking  the tests are in ./...",
		"c9 assistant  Running them.",
		"c9 tool_call run_terminal_cmd go test ./...",
		"c9 assistant  Done. The key was [REDACTED:anthropic-key]",
	}, "\n")
	if got != want {
		t.Errorf("conversation\n%s\nwant\n%s", got, want)
	}
	for _, e := range messagesOf(evs) {
		m := e.Message
		if m.Role == event.RoleToolCall && (m.ToolUseID != "toolu_9" || m.Model != "gpt-5" || m.MessageID != "a1" ||
			e.ID != event.ID(Client, "message", "c9", "a1", "2")) {
			t.Errorf("call message %s %+v", e.ID, m)
		}
	}
	again, _, _ := poll(t, New(nil), path, nil)
	if a, b := ids(messagesOf(evs)), ids(messagesOf(again)); a != b {
		t.Errorf("a second read gave other ids:\n%s\n%s", a, b)
	}
}

func ids(evs []event.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}
