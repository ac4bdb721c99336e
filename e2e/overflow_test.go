package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// TestBus_OverflowRefusesAndRecovers: the suite on a 1 MiB stream ([bus] max_bytes) with its
// writer stopped (SIGSTOP). A producer publishes 3,000 events: the stream takes what fits and
// refuses the rest, which the producer spools; status says the stream is full (the bus degraded,
// exit 1). When the writer runs again, every event is stored exactly once, nothing acknowledged
// was dropped, and status is ok again.
func TestBus_OverflowRefusesAndRecovers(t *testing.T) {
	s := newSuite(t, "OBSERVER_BUS_MAX_BYTES=1048576")
	s.start()
	writer := s.componentPID("writer")
	if writer == 0 {
		t.Fatal("no writer pid in status")
	}
	if err := syscall.Kill(writer, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(writer, syscall.SIGCONT)
		}
	}()

	token, _ := os.ReadFile(filepath.Join(s.home, "bus.token"))
	port := ""
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "OBSERVER_BUS_PORT="); ok {
			port = v
		}
	}
	ctx := context.Background()
	cl, err := bus.Connect(ctx, bus.Options{URL: "nats://127.0.0.1:" + port, Token: strings.TrimSpace(string(token)), Wait: true,
		SpoolDir: filepath.Join(t.TempDir(), "spool"), Name: "overflow-producer"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 3000
	pad := strings.Repeat("x", 400) // about 600 bytes an event: 1.8 MB in all
	var published, spooled int
	for i := range n {
		ev := event.New(event.KindAction, "e2e")
		ev.ID = event.ID("overflow", fmt.Sprint(i))
		ev.Client = "claude-code"
		ev.SessionID = "overflow"
		ev.Action = &event.Action{Type: event.ActionRunCommand, Target: fmt.Sprintf("echo %d %s", i, pad)}
		res, err := cl.Publish(ctx, &ev)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if res == bus.Spooled {
			spooled++
		} else {
			published++
		}
	}
	t.Logf("the stream took %d events, the producer spooled %d", published, spooled)
	if spooled == 0 {
		t.Fatal("a 1 MiB stream took 1.8 MB of events with the writer stopped")
	}
	st, code := s.status()
	var health, detail string
	for _, c := range st.Components {
		if c.Name == "bus" {
			health, detail = c.Health, c.Detail
		}
	}
	if code != 1 || health != "degraded" || !strings.Contains(detail, "stream full") || !strings.Contains(detail, "max_bytes") {
		t.Errorf("status with the stream full: exit %d, bus %s: %s; want exit 1, degraded, naming the stream full and [bus] max_bytes", code, health, detail)
	}

	syscall.Kill(writer, syscall.SIGCONT)
	stopped = false
	s.waitCount(2*time.Minute, n, "SELECT count(*) FROM actions WHERE session_id = 'overflow'")
	if got := s.count("SELECT count(DISTINCT target) FROM actions WHERE session_id = 'overflow'"); got != n {
		t.Errorf("%d distinct events stored, want %d", got, n)
	}
	s.waitHealthy(time.Minute)
}
