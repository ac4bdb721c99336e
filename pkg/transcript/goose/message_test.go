package goose

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

func withoutMessages(evs []event.Event) []event.Event {
	return slices.DeleteFunc(slices.Clone(evs), func(e event.Event) bool { return e.Kind == event.KindMessage })
}

// conversation returns the message events of one session in (Time, Seq) order.
func conversation(evs []event.Event, session string) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == event.KindMessage && e.SessionID == session {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b event.Event) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Seq, b.Message.Seq)
	})
	return out
}

// messageLines is a conversation as role, tool and the first 60 characters of the text, its line
// breaks escaped.
func messageLines(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		m := e.Message
		text := []rune(m.Text)
		if len(text) > 60 {
			text = text[:60]
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", m.Role, m.Tool, strings.NewReplacer("\\", `\\`, "\n", `\n`).Replace(string(text)))
	}
	return b.String()
}

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
	got := conversation(evs, "20260105_1")
	want := "user\t\tList the files and fix the typo in README.md\n" +
		"assistant\t\tLet me look.\n" +
		"tool_call\tdeveloper__shell\tls -la\n" +
		"tool_call\tdeveloper__text_editor\tREADME.md\n" +
		"tool_call\tdeveloper__text_editor\tREADME.md\n" +
		"tool_call\tgithub__create_issue\t\n" +
		"tool_call\t\t\n" + // a call goose could not parse: no tool, its id
		"user\t\tthanks, and this screenshot?\\n[image]\n" +
		"thinking\t\tIt shows the demo.\n" +
		"assistant\t\tDone.\n" +
		"summary\t\t## Summary\\nFixed the README; tests pending.\n" +
		"user\t\tthanks, and this screenshot?\n" +
		"thinking\t\tSame screenshot.\n" +
		"assistant\t\tStill the demo.\n"
	if s := messageLines(got); s != want {
		t.Errorf("conversation\n%s\nwant\n%s", s, want)
	}
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
	for _, a := range withoutMessages(evs) {
		if a.Action != nil && a.Action.ToolUseID != "" {
			uses[a.Action.ToolUseID] = true
		}
	}
	calls := len(uses)
	if n := strings.Count(messageLines(conversation(evs, "20260105_1"))+messageLines(conversation(evs, "20260105_2")), "tool_call\t"); n != calls {
		t.Errorf("%d tool call messages, %d tool calls", n, calls)
	}
	// The subagent's session is a session of its own here (nothing links it to its parent).
	if s := messageLines(conversation(evs, "20260105_2")); s != "user\t\trun the tests\ntool_call\tdeveloper__shell\tgo test ./...\n" {
		t.Errorf("sub_agent session:\n%s", s)
	}
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
	for _, e := range conversation(again, "20260105_1") {
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
	file := conversation(fileEvs, "20260105_1")
	if s := messageLines(file); s != "user\t\tList the files and fix the typo in README.md\nassistant\t\tLet me look.\ntool_call\tdeveloper__shell\tls -la\n" {
		t.Errorf("file's conversation:\n%s", s)
	}
	ids := map[string]bool{}
	for _, e := range conversation(dbEvs, "20260105_1") {
		ids[e.ID] = true
	}
	for _, e := range file {
		if !ids[e.ID] {
			t.Errorf("the file's %s message %s is not the database's", e.Message.Role, e.ID)
		}
	}
}
