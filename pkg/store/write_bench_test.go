package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// BenchmarkWriteBatch_ProxyTurns stores the proxy's turns as the writer gets them under load
// (observer-proxy at 16 concurrent requests): small batches of one session's turns, each its own
// transaction. It reports the writer's time per turn.
//
//	go test -tags sqlite_fts5 -run '^$' -bench WriteBatch_ProxyTurns ./pkg/store/
func BenchmarkWriteBatch_ProxyTurns(b *testing.B) {
	for _, per := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", per), func(b *testing.B) {
			ctx := context.Background()
			st, err := store.OpenWriter(ctx, filepath.Join(b.TempDir(), "o.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			at := time.Now().Add(-time.Hour)
			n := 0
			batch := make([]event.Event, per)
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				for i := range batch {
					ev := event.New(event.KindAPITurn, "proxy")
					ev.ID = event.ID("bench", fmt.Sprint(n))
					ev.Time = at.Add(time.Duration(n) * time.Millisecond)
					ev.Client, ev.SessionID = "claude-code", "px"
					ev.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 1200, Output: 300, CacheRead: 40000},
						Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-sonnet-4-5",
						MessageID: fmt.Sprintf("msg_%d", n), RequestID: fmt.Sprintf("req_%d", n), Status: 200,
						LatencyMs: 120, CostUSD: 0.02, BytesIn: 4000, BytesOut: 900}
					batch[i] = ev
					n++
				}
				if _, err := st.WriteBatch(ctx, batch, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/turn")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/turn")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
