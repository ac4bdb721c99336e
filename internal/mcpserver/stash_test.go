package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// retrieve_stashed returns the original of an output the proxy compressed, in pages, stored once
// however many requests carried it; an unknown id is a tool error that says why.
func TestRetrieveStashed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	original := strings.Repeat("line of the original output ✓\n", 2000) // 62 KB, multi-byte runes
	id := compress.StashID(original)
	var evs []event.Event
	for i := range 3 { // the same output compressed in three successive requests
		ev := event.New(event.KindCompression, "observer-proxy")
		ev.ID, ev.Client, ev.SessionID = event.RandomID(), "claude-code", "s1"
		ev.Time = time.Now().Add(time.Duration(i) * time.Second)
		ev.Compression = &event.Compression{Mechanism: "logs", BytesBefore: int64(len(original)), BytesAfter: 300,
			StashID: id, Original: original}
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if n := queryInt(t, roDB(t, path), "SELECT count(*) FROM compression_stash"); n != 1 {
		t.Errorf("%d stash rows, want 1", n)
	}
	_, cs := newServer(t, path, "", time.Now())
	var got strings.Builder
	offset := 0
	for pages := 0; ; pages++ {
		var a stashAnswer
		callJSON(t, cs, toolStash, map[string]any{"stash_id": id, "offset": offset, "max_bytes": 20000}, &a)
		if a.Size != len(original) || a.Mechanism != "logs" || a.Session != "s1" {
			t.Fatalf("answer %+v", a)
		}
		got.WriteString(a.Content)
		if a.Next == 0 {
			break
		}
		if pages > 10 {
			t.Fatal("no end of pages")
		}
		offset = a.Next
	}
	if got.String() != original {
		t.Errorf("the pages joined are %d bytes, not the original's %d", got.Len(), len(original))
	}
	// An offset inside a character starts the page at that character.
	var mid stashAnswer
	callJSON(t, cs, toolStash, map[string]any{"stash_id": id, "offset": strings.Index(original, "✓") + 1, "max_bytes": 100}, &mid)
	if !strings.HasPrefix(mid.Content, "✓") || mid.Offset != strings.Index(original, "✓") {
		t.Errorf("a page from inside a character: offset %d, %.20q", mid.Offset, mid.Content)
	}
	text, isErr := call(t, cs, toolStash, map[string]any{"stash_id": "stash_0000"})
	if !isErr || !strings.Contains(text, "no stashed output") {
		t.Errorf("unknown id: %q (error %v)", text, isErr)
	}
}
