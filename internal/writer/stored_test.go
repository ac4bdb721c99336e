package writer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// TestWriter_SaysWhatItStored: after each commit the writer publishes a bus.StoredNote with the
// kinds, clients, projects and sessions of the batch, once the rows are readable; a batch of
// duplicates changes nothing and says nothing.
func TestWriter_SaysWhatItStored(t *testing.T) {
	ctx, cancel, _, st, c := rig(t)
	defer cancel()
	type seen struct {
		note bus.StoredNote
		rows int64
	}
	notes := make(chan seen, 16)
	sub, err := c.SubscribeStored(func(n bus.StoredNote) {
		if n.Events == 0 {
			return // the analysis' notes
		}
		var rows int64
		st.DB.QueryRow("SELECT count(*) FROM hook_events").Scan(&rows)
		notes <- seen{n, rows}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	for i := range 3 { // sessions s0, s1, s2
		ev := hookEvent(i)
		if _, err := c.Publish(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}
	var got bus.StoredNote
	for stored := 0; stored < 3; {
		select {
		case s := <-notes:
			if s.rows < int64(stored+s.note.Events) {
				t.Fatalf("note %+v came with %d rows stored: before the commit", s.note, s.rows)
			}
			stored += s.note.Events
			got.Merge(s.note)
		case <-time.After(10 * time.Second):
			t.Fatalf("notes for %d events of 3", stored)
		}
	}
	slices.Sort(got.Sessions)
	if !slices.Equal(got.Kinds, []string{"hook"}) || !slices.Equal(got.Clients, []string{"claude-code"}) ||
		!slices.Equal(got.Projects, []string{"/work/p"}) || !slices.Equal(got.Sessions, []string{"s0", "s1", "s2"}) || got.Many {
		t.Fatalf("notes say %+v", got)
	}
	// The same events again, straight into the writer (a redelivery): nothing new, no note.
	ev := hookEvent(0)
	data, err := event.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(ctx, []bus.Message{{Subject: ev.Subject(), Data: data}}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-notes:
		t.Fatalf("a batch of duplicates said %+v", s.note)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStoredNote_Capped: a note lists at most bus.StoredListMax values of a kind, then says "many".
func TestStoredNote_Capped(t *testing.T) {
	var n bus.StoredNote
	for i := 0; i < bus.StoredListMax+5; i++ {
		n.Add("action", "codex", "/p", string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if len(n.Sessions) != bus.StoredListMax || !n.Many || len(n.Kinds) != 1 || len(n.Clients) != 1 {
		t.Fatalf("%+v", n)
	}
}
