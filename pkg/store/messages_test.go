package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func messageEv(key string, at time.Time, m event.Message) event.Event {
	e := newEv(event.KindMessage, key, at)
	e.Message = &m
	return e
}

// matches counts the messages the full-text index finds for q.
func matches(tb testing.TB, s *store.Store, q string) int {
	tb.Helper()
	var n int
	if err := s.DB.QueryRow(`SELECT count(*) FROM message_fts WHERE message_fts MATCH ?`, q).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// Messages are stored once however often they come; one read again with more text (a reply
// rewritten as it streams) keeps the longer text, and the index follows it whether it had
// indexed the shorter one or not; the index is filled in batches and skips tool calls without
// text; pruning takes the index entries with the rows, and the index stays consistent.
//
// It runs with short texts, stored as they are, and with long ones, stored packed (pack.go).
func TestMessages_StoreIndexPrune(t *testing.T) {
	for _, c := range []struct{ name, pad string }{
		{"plain", ""},
		{"packed", strings.Repeat(" and the rest of a long reply that goes on", 6)},
	} {
		t.Run(c.name, func(t *testing.T) { testMessagesStoreIndexPrune(t, c.pad) })
	}
}

func testMessagesStoreIndexPrune(t *testing.T, pad string) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, recent := t0.Add(-48*time.Hour), t0
	evs := []event.Event{
		messageEv("m1", old, event.Message{Role: "user", Text: "where is the migration lock" + pad, Seq: 64}),
		messageEv("m2", recent, event.Message{Role: "assistant", Text: "The lock is" + pad, Seq: 128, MessageID: "msg_1"}),
		messageEv("m3", recent, event.Message{Role: "tool_call", Tool: "Bash", ToolUseID: "tu_1", Seq: 192}),
	}
	if res := write(t, s, evs, nil); res.Inserted != 3 {
		t.Fatalf("inserted %d, want 3", res.Inserted)
	}
	if res := write(t, s, evs, nil); res.Inserted != 0 || res.Duplicates != 3 {
		t.Fatalf("again: %+v, want 3 duplicates", res)
	}
	for {
		n, err := s.IndexMessages(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if n := matches(t, s, "lock"); n != 2 {
		t.Fatalf("lock: %d matches, want 2", n)
	}
	// The reply grows after it was indexed: the longer text replaces it, in the index too; a
	// shorter copy read later changes nothing.
	write(t, s, []event.Event{messageEv("m2", recent, event.Message{Role: "assistant", Text: "The lock is released in migrate.go" + pad, Seq: 128, MessageID: "msg_1"})}, nil)
	write(t, s, []event.Event{messageEv("m2", recent, event.Message{Role: "assistant", Text: "The" + pad, Seq: 128, MessageID: "msg_1"})}, nil)
	var text, typ string
	if err := s.DB.QueryRow(`SELECT unpack(text), typeof(text) FROM messages WHERE event_id = ?`, event.ID("store-test", "m2")).Scan(&text, &typ); err != nil || text != "The lock is released in migrate.go"+pad {
		t.Fatalf("text %q, %v", text, err)
	}
	if want := map[bool]string{false: "text", true: "blob"}[pad != ""]; typ != want {
		t.Errorf("the message is stored as %s, want %s", typ, want)
	}
	if n := matches(t, s, "migrate"); n != 1 {
		t.Errorf("migrate: %d matches after the update, want 1", n)
	}
	// A message not indexed yet that grows: indexed once, with its final text.
	write(t, s, []event.Event{messageEv("m4", recent, event.Message{Role: "assistant", Text: "Done" + pad, Seq: 256})}, nil)
	write(t, s, []event.Event{messageEv("m4", recent, event.Message{Role: "assistant", Text: "Done: tests pass" + pad, Seq: 256})}, nil)
	if _, err := s.IndexMessages(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if n := matches(t, s, "tests"); n != 1 {
		t.Errorf("tests: %d matches, want 1", n)
	}
	// Pruning the old prompt takes its index entry.
	res, err := s.Prune(ctx, store.PruneOptions{Before: t0.Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted["messages"] != 1 {
		t.Errorf("pruned %v, want 1 message", res.Deleted)
	}
	if n := matches(t, s, "where"); n != 0 {
		t.Errorf("the pruned prompt is still found (%d)", n)
	}
	if _, err := s.DB.Exec(`INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("full-text index inconsistent: %v", err)
	}
}
