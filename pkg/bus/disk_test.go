package bus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// A bound the disk cannot hold is refused at start in words that name the setting, its value,
// the free space and what to do, not nats-server's "insufficient storage resources available".
func TestStartRefusesBoundLargerThanDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	_, err := bus.StartServer(context.Background(), bus.ServerConfig{
		Dir: dir, Port: -1, Token: testToken, MaxBytes: 1 << 60,
	})
	if err == nil {
		t.Fatal("a bus whose stream may hold 1 EiB started")
	}
	msg := err.Error()
	for _, want := range []string{"[bus] max_bytes is 1024.0 PiB", "free", dir, "free space on that disk, or lower [bus] max_bytes", "OBSERVER_BUS_MAX_BYTES"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	t.Log(msg)
}

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

// A team hub's bound ([hub] max_bytes, the stream its Setup makes) is checked at start too, and
// named as such.
func TestStartRefusesHubBoundLargerThanDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	_, err := bus.StartServer(context.Background(), bus.ServerConfig{
		Dir: dir, Port: -1, Token: testToken, MaxBytes: 1 << 60, MaxBytesKey: "[hub] max_bytes",
		Setup: func(context.Context, jetstream.JetStream) error { return nil },
	})
	if err == nil {
		t.Fatal("a hub whose stream may hold 1 EiB started")
	}
	for _, want := range []string{"[hub] max_bytes is 1024.0 PiB", "OBSERVER_HUB_MAX_BYTES"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
