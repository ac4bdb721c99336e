package transcripttest

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Messages returns the message events of evs, in the order read.
func Messages(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Message != nil {
			out = append(out, e)
		}
	}
	return out
}

// WithoutMessages returns the events of evs but the message events (for the goldens that keep
// the other events' views), in order.
func WithoutMessages(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Message == nil {
			out = append(out, e)
		}
	}
	return out
}

// Conversation returns the message events of evs as the store keeps them, in (Time, Seq) order:
// one per id, the first read, its text (and model, where it has one) that of a later read whose
// text is longer (a reply the client rewrites as it streams).
func Conversation(evs []event.Event) []event.Event {
	at := map[string]int{}
	var out []event.Event
	for _, e := range Messages(evs) {
		i, ok := at[e.ID]
		if !ok {
			at[e.ID] = len(out)
			out = append(out, e)
			continue
		}
		if kept := out[i].Message; len(e.Message.Text) > len(kept.Text) {
			m := *kept
			m.Text = e.Message.Text
			if e.Message.Model != "" {
				m.Model = e.Message.Model
			}
			out[i].Message = &m
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

// Conversations returns the Conversation of each session among evs, by session id; a subagent's
// messages (those with an AgentID) are a conversation of their own, under "session/agent".
func Conversations(evs []event.Event) map[string][]event.Event {
	out := map[string][]event.Event{}
	for _, e := range Conversation(evs) {
		k := e.SessionID
		if e.Message.AgentID != "" {
			k += "/" + e.Message.AgentID
		}
		out[k] = append(out[k], e)
	}
	return out
}

// escape writes a message's text on one line of a golden file.
var escape = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// MessageLine is a message as a conversation golden holds it: its role, tool and the first 60
// characters of its text (backslashes, line breaks and tabs escaped), separated by tabs; a
// subagent's message is marked "[agent] " first.
func MessageLine(m *event.Message) string {
	line := m.Role + "\t" + m.Tool + "\t" + escape.Replace(transcript.CutRunes(m.Text, 60))
	if m.AgentID != "" {
		line = "[" + m.AgentID + "] " + line
	}
	return line
}

// ConversationLines returns the MessageLine of each message of the Conversation of evs (a
// conversation already, or any events), in order.
func ConversationLines(evs []event.Event) []string {
	out := []string{}
	for _, e := range Conversation(evs) {
		out = append(out, MessageLine(e.Message))
	}
	return out
}

// ConversationText is the Conversation of evs as a golden text file holds it: its
// ConversationLines, each ended by a newline.
func ConversationText(evs []event.Event) string {
	return lines(ConversationLines(evs))
}

// ConversationsLines returns the lines of conversations by key (Conversations), in the keys'
// order: a line "# key", then the conversation's ConversationLines.
func ConversationsLines(convs map[string][]event.Event) []string {
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(convs)) {
		out = append(out, "# "+k)
		out = append(out, ConversationLines(convs[k])...)
	}
	return out
}

// ConversationsText is ConversationsLines as a golden text file holds them, each line ended by a
// newline.
func ConversationsText(convs map[string][]event.Event) string {
	return lines(ConversationsLines(convs))
}

func lines(ls []string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// CheckConversation fails the test unless the ConversationLines of evs are the want lines,
// showing both.
func CheckConversation(tb testing.TB, evs []event.Event, want ...string) {
	tb.Helper()
	if got := ConversationLines(evs); !slices.Equal(got, want) {
		tb.Errorf("conversation\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// RoleCounts counts the message events of evs per role.
func RoleCounts(evs []event.Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		if e.Message != nil {
			out[e.Message.Role]++
		}
	}
	return out
}

// MessageIDs returns the ids of the message events of evs, in order.
func MessageIDs(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Message != nil {
			out = append(out, e.ID)
		}
	}
	return out
}

// UniqueMessageIDs returns MessageIDs of evs, failing the test for each id two message events
// share (a parser emits a message once per read).
func UniqueMessageIDs(tb testing.TB, evs []event.Event) []string {
	tb.Helper()
	ids := MessageIDs(evs)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			tb.Errorf("message id %s twice", id)
		}
		seen[id] = true
	}
	return ids
}

// SameMessageIDs fails the test unless two reads of the same input gave their message events the
// same ids, in the same order: a message's id does not depend on the read.
func SameMessageIDs(tb testing.TB, first, second []event.Event) {
	tb.Helper()
	if a, b := MessageIDs(first), MessageIDs(second); !slices.Equal(a, b) {
		tb.Errorf("a second read gave other message ids:\n%v\n%v", a, b)
	}
}

// GoldenText compares got with the golden text file at path, or writes it there when update is
// set (the package's -update flag).
func GoldenText(tb testing.TB, path, got string, update bool) {
	tb.Helper()
	if update {
		WriteFile(tb, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		tb.Errorf("differs from %s:\n%s", path, got)
	}
}
