package bus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

func TestIsNoSpace(t *testing.T) {
	for _, s := range []string{"commit: database or disk is full", "write x: no space left on device",
		"nats: API error: code=500 err_code=10047 description=insufficient storage resources available"} {
		if !bus.IsNoSpace(errString(s)) {
			t.Errorf("IsNoSpace(%q) = false", s)
		}
	}
	if bus.IsNoSpace(errString("connection refused")) {
		t.Error("IsNoSpace(connection refused) = true")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// PublishBatch names the events it could neither publish nor spool, so a producer can count them.
func TestPublishBatchNamesEventsNotRecorded(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "spool")
	c := connect(t, bus.Options{URL: urlFor(freePort(t)), SpoolDir: spool, OneShot: true})
	if err := os.RemoveAll(spool); err != nil { // the spool cannot take anything now
		t.Fatal(err)
	}
	evs := []event.Event{hookEvent("a", "claude-code"), hookEvent("b", "claude-code"), hookEvent("c", "claude-code")}
	_, err := c.PublishBatch(context.Background(), evs)
	var nr *bus.NotRecordedError
	if !errors.As(err, &nr) || len(nr.Lost) != 3 {
		t.Fatalf("PublishBatch = %v, want a NotRecordedError naming all 3 events", err)
	}
}
