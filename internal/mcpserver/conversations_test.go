package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// search_past_outputs with in=chat finds the sessions of the project whose conversation matches,
// with the matched words in brackets; project "*" widens it; an unknown in is refused; what
// matches nothing is a notice, not an error.
func TestSearch_InChat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	var evs []event.Event
	for i, m := range []struct {
		sess, proj string
		msg        event.Message
	}{
		{"s-app", "/work/app", event.Message{Role: "user", Text: "where did we fix the migration lock?"}},
		{"s-app", "/work/app", event.Message{Role: "assistant", Text: "The migration lock is released in migrate.go."}},
		{"s-lib", "/work/lib", event.Message{Role: "user", Text: "add a migration lock test"}},
	} {
		m.msg.Seq = int64(i)
		ev := event.New(event.KindMessage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time, ev.Message = "m"+string(rune('a'+i)), "claude-code", m.sess, m.proj,
			now.Add(-time.Duration(10-i)*time.Minute), &m.msg
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexMessages(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, cs := newServer(t, path, "/work/app", now)
	var ans conversationAnswer
	callJSON(t, cs, toolSearch, map[string]any{"query": "migration lock", "in": "chat"}, &ans)
	if len(ans.Sessions) != 1 || ans.Sessions[0].Sess != "s-app" || ans.Sessions[0].Hits != 2 ||
		!strings.Contains(strings.Join(ans.Sessions[0].Snips, " "), "[migration] [lock]") {
		t.Errorf("project's chat: %+v", ans)
	}
	ans = conversationAnswer{}
	callJSON(t, cs, toolSearch, map[string]any{"query": "migration lock", "in": "chat", "project": "*"}, &ans)
	if len(ans.Sessions) != 2 {
		t.Errorf("all projects' chat: %+v", ans)
	}
	if text, isErr := call(t, cs, toolSearch, map[string]any{"query": "x", "in": "poems"}); !isErr || !strings.Contains(text, "outputs") {
		t.Errorf("in=poems: %q (error %v)", text, isErr)
	}
	if text, isErr := call(t, cs, toolSearch, map[string]any{"query": "nothing-like-this", "in": "chat"}); isErr || !strings.Contains(text, "no conversation matches") {
		t.Errorf("no match: %q (error %v)", text, isErr)
	}
}
