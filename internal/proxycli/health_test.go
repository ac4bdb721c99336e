package proxycli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/otlp"
	"github.com/observerhq/observer/pkg/proxy"
)

// TestProxyHealth_NotRecorded: the heartbeat's detail gives the turns and the OTLP events that
// could not be recorded, and why; the proxy is degraded for each while it lasts and a while after,
// beside a listener's problem, which stays.
func TestProxyHealth_NotRecorded(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	st := proxy.Stats{Requests: 9, Turns: 9, NotRecorded: 3, NotRecordedAt: at, NotRecordedWhy: "disk full"}
	o := &otlp.Stats{Requests: 4, Events: 20, NotRecorded: 7, NotRecordedAt: at, NotRecordedWhy: "disk full"}
	listen := []string{"otlp/grpc listener 127.0.0.1:4317: address already in use"}

	h := proxyHealth(at.Add(time.Second), "127.0.0.1:8820", st, o, "http://127.0.0.1:4318", listen)
	for _, want := range []string{"127.0.0.1:8820, 9 requests, 9 turns", "otlp http://127.0.0.1:4318: 4 exports, 20 events",
		"3 turns not confirmed recorded (disk full)", "7 otlp events not confirmed recorded (disk full)"} {
		if !strings.Contains(h.Detail, want) {
			t.Errorf("detail %q lacks %q", h.Detail, want)
		}
	}
	want := []string{listen[0], "turns may not have been recorded: disk full (count in detail)", "OTLP events may not have been recorded: disk full (count in detail)"}
	if !slices.Equal(h.Degraded, want) {
		t.Errorf("degraded %q, want %q", h.Degraded, want)
	}

	// A while later only the listener's problem is left; the detail keeps the totals.
	later := at.Add(bus.LossRecently + time.Second)
	h = proxyHealth(later, "127.0.0.1:8820", st, o, "http://127.0.0.1:4318", listen)
	if !slices.Equal(h.Degraded, listen) || !strings.Contains(h.Detail, "7 otlp events not confirmed recorded") {
		t.Errorf("later: degraded %q, detail %q; want only %q, and the totals", h.Degraded, h.Detail, listen)
	}

	// The receiver off: no OTLP part.
	h = proxyHealth(later, "127.0.0.1:8820", proxy.Stats{}, nil, "", nil)
	if h.Degraded != nil || strings.Contains(h.Detail, "otlp") {
		t.Errorf("receiver off: degraded %q, detail %q", h.Degraded, h.Detail)
	}
}
