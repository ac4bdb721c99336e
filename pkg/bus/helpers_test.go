package bus_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/busserver/busservertest"
	"github.com/observerhq/observer/pkg/event"
)

const testToken = busservertest.Token

func freePort(tb testing.TB) int { return busservertest.FreePort(tb) }

// startServer starts a bus on dir and port (-1 picks one) and closes it when the test ends.
func startServer(tb testing.TB, dir string, port int) *busserver.Server {
	return busservertest.Start(tb, dir, port)
}

// newServer starts a bus on a fresh temp dir and a free port.
func newServer(tb testing.TB) *busserver.Server {
	tb.Helper()
	return startServer(tb, filepath.Join(tb.TempDir(), "bus"), -1)
}

func connect(tb testing.TB, opts bus.Options) *bus.Client {
	tb.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	c, err := bus.Connect(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

func urlFor(port int) string { return fmt.Sprintf("nats://127.0.0.1:%d", port) }

// hookEvent returns a valid hook event with a deterministic id.
func hookEvent(name, client string) event.Event {
	ev := event.New(event.KindHook, "bus-test")
	ev.ID = event.ID("bus-test", name)
	ev.Client = client
	ev.Hook = &event.Hook{Event: name}
	return ev
}

func mustEncode(tb testing.TB, ev event.Event) []byte {
	tb.Helper()
	data, err := event.Marshal(&ev)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// waitFor polls cond until it holds, failing the test after a few seconds.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute) // a bound on a hang: a loaded machine is slow
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stats(tb testing.TB, srv *busserver.Server) busserver.Stats {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := srv.Stats(ctx)
	if err != nil {
		tb.Fatalf("Stats: %v", err)
	}
	return st
}
