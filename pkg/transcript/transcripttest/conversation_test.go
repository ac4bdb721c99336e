package transcripttest

import (
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

func msg(id string, sec int, seq int64, role, tool, text, agent string) event.Event {
	return event.Event{ID: id, Kind: event.KindMessage, SessionID: "s", Time: time.Unix(int64(sec), 0),
		Message: &event.Message{Role: role, Tool: tool, Text: text, Seq: seq, AgentID: agent}}
}

// A conversation is ordered by time, then seq; an id read again keeps its first place and takes
// a longer text (not a shorter one), as the store does; the input is not changed.
func TestConversation(t *testing.T) {
	evs := []event.Event{
		msg("b", 2, 1, event.RoleAssistant, "", "Runn", ""),
		{ID: "x", Kind: event.KindSession, SessionID: "s", Time: time.Unix(1, 0)},
		msg("c", 2, 0, event.RoleThinking, "", "plan\tit\\now", ""),
		msg("a", 1, 9, event.RoleUser, "", "go\nnow", ""),
		msg("b", 3, 5, event.RoleAssistant, "", "Running it.", ""),
		msg("c", 4, 0, event.RoleThinking, "", "p", ""),
		msg("d", 2, 2, event.RoleToolCall, "bash", "make", "sub"),
	}
	CheckConversation(t, evs,
		"user\t\tgo\\nnow",
		"thinking\t\tplan\\tit\\\\now",
		"assistant\t\tRunning it.",
		"[sub] tool_call\tbash\tmake",
	)
	if evs[0].Message.Text != "Runn" {
		t.Errorf("the input changed: %q", evs[0].Message.Text)
	}
	if got := RoleCounts(Conversation(evs)); got[event.RoleAssistant] != 1 || len(got) != 4 {
		t.Errorf("roles %v", got)
	}
	if got := RoleCounts(evs); got[event.RoleAssistant] != 2 {
		t.Errorf("roles of the events %v", got)
	}
	if got := ConversationsText(Conversations(evs)); got != "# s\nuser\t\tgo\\nnow\nthinking\t\tplan\\tit\\\\now\n"+
		"assistant\t\tRunning it.\n# s/sub\n[sub] tool_call\tbash\tmake\n" {
		t.Errorf("conversations\n%s", got)
	}
	if got := MessageIDs(evs); !slices.Equal(got, []string{"b", "c", "a", "b", "c", "d"}) {
		t.Errorf("ids %v", got)
	}
	if n := len(WithoutMessages(evs)); n != 1 {
		t.Errorf("%d events without messages", n)
	}
}

// A message line keeps the first 60 characters of the text.
func TestMessageLine(t *testing.T) {
	long := ""
	for range 70 {
		long += "é"
	}
	m := &event.Message{Role: event.RoleAssistant, Text: long}
	if got := MessageLine(m); got != "assistant\t\t"+long[:120] {
		t.Errorf("%q", got)
	}
}
