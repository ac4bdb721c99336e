package busserver_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/busserver/busservertest"
)

const testToken = busservertest.Token

func freePort(tb testing.TB) int { return busservertest.FreePort(tb) }

// startServer starts a bus on dir and port (-1 picks one) and closes it when the test ends.
func startServer(tb testing.TB, dir string, port int) *busserver.Server {
	return busservertest.Start(tb, dir, port)
}

func TestStart(t *testing.T) {
	t.Run("NeedsToken", func(t *testing.T) {
		if _, err := busserver.Start(context.Background(), busserver.Config{Dir: t.TempDir(), Port: -1}); err == nil {
			t.Error("Start without a token succeeded")
		}
	})
	t.Run("PortInUse", func(t *testing.T) {
		p := freePort(t)
		startServer(t, filepath.Join(t.TempDir(), "bus"), p)
		_, err := busserver.Start(context.Background(), busserver.Config{Dir: t.TempDir(), Port: p, Token: testToken})
		if err == nil || !strings.Contains(err.Error(), "cannot listen") {
			t.Errorf("Start on a busy port = %v, want a cannot-listen error", err)
		}
	})
}

// TestServer_UpdatesAnOlderStreamToRefuse: a store made by a version whose stream dropped its
// oldest events when full is set to refuse new ones when the bus starts on it.
func TestServer_UpdatesAnOlderStreamToRefuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	srv := startServer(t, dir, -1)
	discard := func(srv *busserver.Server) jetstream.DiscardPolicy {
		nc, err := srv.Conn("test")
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		str, err := js.Stream(context.Background(), bus.StreamName)
		if err != nil {
			t.Fatal(err)
		}
		return str.CachedInfo().Config.Discard
	}
	nc, err := srv.Conn("test")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	str, _ := js.Stream(context.Background(), bus.StreamName)
	cfg := str.CachedInfo().Config
	cfg.Discard = jetstream.DiscardOld
	if _, err := js.UpdateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	srv.Close()
	if got := discard(startServer(t, dir, -1)); got != jetstream.DiscardNew {
		t.Errorf("discard policy after a restart: %v, want DiscardNew", got)
	}
}

// A bound the disk cannot hold is refused at start in words that name the setting, its value,
// the free space and what to do, not nats-server's "insufficient storage resources available".
func TestStartRefusesBoundLargerThanDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	_, err := busserver.Start(context.Background(), busserver.Config{
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

// A team hub's bound ([hub] max_bytes, the stream its Setup makes) is checked at start too, and
// named as such.
func TestStartRefusesHubBoundLargerThanDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	_, err := busserver.Start(context.Background(), busserver.Config{
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
