package writer_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// A batch message is stored event by event: a bad event in it is quarantined alone, the others
// are stored; a message whose lines do not match its header is quarantined whole.
func TestWriter_BatchMessageQuarantinesOnlyItsBadEvent(t *testing.T) {
	ctx, _, _, st, _ := rig(t)
	w := &writer.Writer{Store: st, Logger: slog.New(slog.DiscardHandler)}
	var lines [][]byte
	for i := range 3 {
		ev := hookEvent(i)
		data, err := event.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, data)
	}
	bad := []byte(`{"id":"x","kind":"hook","v":1`) // cut short
	good := hookEvent(0)
	batch := func(n string, ls ...[]byte) bus.Message {
		return bus.Message{Subject: good.Subject(), Data: bytes.Join(ls, []byte("\n")), Header: nats.Header{bus.EventsHeader: []string{n}}}
	}
	if err := w.Handle(ctx, []bus.Message{
		batch("4", lines[0], bad, lines[1], lines[2]),
		batch("5", lines[0], lines[1]), // says 5, holds 2
	}); err != nil {
		t.Fatal(err)
	}
	var hooks, quarantined int
	st.DB.QueryRow(`SELECT count(*) FROM hook_events`).Scan(&hooks)
	st.DB.QueryRow(`SELECT count(*) FROM quarantine`).Scan(&quarantined)
	if hooks != 3 || quarantined != 2 {
		t.Errorf("%d hooks stored and %d messages quarantined, want 3 and 2 (the bad event, the bad message)", hooks, quarantined)
	}
	var alone int
	st.DB.QueryRow(`SELECT count(*) FROM quarantine WHERE data = ?`, bad).Scan(&alone)
	if alone != 1 {
		t.Errorf("the bad event is not quarantined alone (%d rows hold exactly it)", alone)
	}
}
