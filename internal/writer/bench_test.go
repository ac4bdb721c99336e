package writer_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// benchEvents makes n events in the mix a busy session produces: mostly actions, some token
// rows, some hook calls.
func benchEvents(tag string, n int) []event.Event {
	evs := make([]event.Event, n)
	ok := true
	for i := range evs {
		var ev event.Event
		switch {
		case i%10 < 7:
			ev = event.New(event.KindAction, "bench")
			ev.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Target: fmt.Sprintf("pkg/x/file%d.go", i%500),
				ToolUseID: fmt.Sprintf("toolu_%d", i), MessageID: fmt.Sprintf("msg_%d", i/3), Success: &ok, DurationMs: 12,
				OutputSize: 2048, Model: "claude-sonnet-4-5"}
		case i%10 < 9:
			ev = event.New(event.KindTokenUsage, "bench")
			ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 12, Output: 345, CacheRead: 40000, CacheCreation: 1200},
				MessageID: fmt.Sprintf("msg_%d", i), Model: "claude-sonnet-4-5", CostUSD: 0.0231, Reliability: event.ReliabilityApproximate}
		default:
			ev = event.New(event.KindHook, "bench")
			ev.Hook = &event.Hook{Event: "PostToolUse", ToolName: "Read", Cwd: "/home/u/project"}
		}
		ev.ID = event.ID(tag, fmt.Sprint(i))
		ev.Client = "claude-code"
		ev.SessionID = fmt.Sprintf("session-%d", i%20)
		ev.Project = "/home/u/project"
		evs[i] = ev
	}
	return evs
}

// BenchmarkBusToStore measures sustained events/s from several publishers through the bus (TCP
// on loopback, JetStream file store) into the store, and, in the same run, the same events written
// straight into a fresh store in batches of 1,000 (the raw rate). It reports both and the ratio.
//
//	go test -tags sqlite_fts5 -run '^$' -bench BusToStore -benchtime 1x ./internal/writer/
func BenchmarkBusToStore(b *testing.B) {
	const n, publishers, chunk = 200_000, 4, 500
	for range b.N {
		raw := rawRate(b, n)
		pipe := pipelineRate(b, n, publishers, chunk)
		b.ReportMetric(raw, "raw_events/s")
		b.ReportMetric(pipe, "bus_events/s")
		b.ReportMetric(pipe/raw, "ratio")
	}
}

func rawRate(b *testing.B, n int) float64 {
	evs := benchEvents("raw", n)
	st, err := store.OpenWriter(context.Background(), filepath.Join(b.TempDir(), "raw.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		if _, err := st.WriteBatch(context.Background(), evs[i:min(i+1000, n)], nil); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

func pipelineRate(b *testing.B, n, publishers, chunk int) float64 {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := b.TempDir()
	srv, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(dir, "bus"), Port: port, Token: "t",
		MaxBytes: 4 << 30, MaxAge: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	st, err := store.OpenWriter(ctx, filepath.Join(dir, "pipe.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	wc, err := bus.Connect(ctx, bus.Options{URL: url, Token: "t", Wait: true})
	if err != nil {
		b.Fatal(err)
	}
	defer wc.Close()
	w := &writer.Writer{Store: st, Bus: wc, Options: bus.ConsumeOptions{BatchSize: 1000, FlushInterval: 50 * time.Millisecond}}
	go w.Run(ctx)

	evs := benchEvents("pipe", n)
	clients := make([]*bus.Client, publishers)
	for i := range clients {
		c, err := bus.Connect(ctx, bus.Options{URL: url, Token: "t", Wait: true, Timeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	start := time.Now()
	var wg sync.WaitGroup
	per := n / publishers
	for p, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := evs[p*per : (p+1)*per]
			for i := 0; i < len(mine); i += chunk {
				if _, err := c.PublishBatch(ctx, mine[i:min(i+chunk, len(mine))]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for w.Stats().Stored < int64(n) {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("stored %d of %d after 5 minutes", w.Stats().Stored, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return float64(n) / time.Since(start).Seconds()
}
