package writer_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// BenchmarkHistoryWriter is the writer's part of a cold scan, without the bus and the readers: the
// events of the history under $OBSERVER_BENCH_HISTORY (a HOME, such as the one
// scripts/bench-cold-scan.sh generates) are read and encoded once, then each round stores them
// into a fresh store in batches of OBSERVER_BENCH_BATCH (default 5,000, a bulk batch) through
// Writer.Handle as the bus would hand them over, on the bulk path (the live path with
// OBSERVER_BENCH_LIVE=1), and catches up what follows the rows (the indexes the bulk path
// deferred, rollups, full-text index, analysis), timing each part: wall and CPU time, and bytes
// written, of storing the rows.
// OBSERVER_BENCH_PRAGMA='cache_size=-8192;temp_store=memory' runs those PRAGMAs on the
// writer's connection first. Skipped without OBSERVER_BENCH_HISTORY.
//
//	OBSERVER_BENCH_HISTORY=/tmp/observer-bench/history-... go test -tags sqlite_fts5 -run '^$' \
//	    -bench HistoryWriter -benchtime 3x -cpuprofile /tmp/w.prof ./internal/writer/
func BenchmarkHistoryWriter(b *testing.B) {
	home := os.Getenv("OBSERVER_BENCH_HISTORY")
	if home == "" {
		b.Skip("OBSERVER_BENCH_HISTORY names no history")
	}
	msgs := historyMessages(b, home)
	size := 5000 // the bulk batch of the default batch_size (bus.ConsumeOptions.BulkBatchSize)
	if v := os.Getenv("OBSERVER_BENCH_BATCH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	b.ResetTimer()
	for range b.N {
		ctx := context.Background()
		st, err := store.OpenWriter(ctx, filepath.Join(b.TempDir(), "observer.db"))
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range strings.Split(os.Getenv("OBSERVER_BENCH_PRAGMA"), ";") {
			if q != "" {
				if _, err := st.DB.Exec("PRAGMA " + q); err != nil {
					b.Fatal(err)
				}
			}
		}
		w := &writer.Writer{Store: st, Bulk: os.Getenv("OBSERVER_BENCH_LIVE") == "", Logger: slog.New(slog.DiscardHandler)}
		start, cpu0, w0 := time.Now(), cpuTime(), written()
		for i := 0; i < len(msgs); i += size {
			batch := msgs[i:min(i+size, len(msgs))]
			if err := w.Handle(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		stored, storeCPU, storeW := time.Since(start), cpuTime()-cpu0, written()-w0
		// The indexes the bulk path deferred are made first, as the writer makes them when a
		// backlog ends: the catch-ups below read through them (without them the analysis read
		// every action for each session, ten times its time).
		t := time.Now()
		if _, err := st.RestoreIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		restored := time.Since(t)
		t = time.Now()
		for {
			left, err := st.CatchUpRollups(ctx, 200)
			if err != nil {
				b.Fatal(err)
			}
			if left == 0 {
				break
			}
		}
		caught := time.Since(t)
		t = time.Now()
		for {
			n, err := st.IndexOutputs(ctx, 5000)
			if err != nil {
				b.Fatal(err)
			}
			m, err := st.IndexMessages(ctx, 5000)
			if err != nil {
				b.Fatal(err)
			}
			if max(n, m) < 5000 {
				break
			}
		}
		indexed := time.Since(t)
		t = time.Now()
		if _, err := (&analysis.Analyzer{DB: st.DB}).Run(ctx); err != nil {
			b.Fatal(err)
		}
		analysed := time.Since(t)
		b.ReportMetric(stored.Seconds(), "store_s")
		b.ReportMetric(storeCPU.Seconds(), "store_cpu_s")
		b.ReportMetric(float64(storeW)/(1<<20), "store_written_MB")
		b.ReportMetric(restored.Seconds(), "indexes_s")
		b.ReportMetric(caught.Seconds(), "catchup_s")
		b.ReportMetric(indexed.Seconds(), "fts_s")
		b.ReportMetric(analysed.Seconds(), "analysis_s")
		b.ReportMetric(float64(len(msgs))/stored.Seconds(), "events/s")
		st.Close()
	}
}

// historyMessages reads the history under home with every reader, as a scan would, and returns
// its events encoded as the bus carries them.
func historyMessages(b *testing.B, home string) []bus.Message {
	b.Helper()
	b.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"} {
		b.Setenv(v, "")
		os.Unsetenv(v)
	}
	ads, err := readers.Select("")
	if err != nil {
		b.Fatal(err)
	}
	cur, err := ingest.OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
	if err != nil {
		b.Fatal(err)
	}
	defer cur.Close()
	c := &collector{}
	s := &ingest.Scanner{Adapters: ads, Cursors: cur, Publisher: c}
	if _, err := s.Scan(context.Background()); err != nil {
		b.Fatal(err)
	}
	if len(c.msgs) == 0 {
		b.Fatalf("no events under %s", home)
	}
	return c.msgs
}

type collector struct {
	mu   sync.Mutex
	msgs []bus.Message
}

func (c *collector) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range evs {
		data, err := event.Marshal(&evs[i])
		if err != nil {
			return 0, err
		}
		c.msgs = append(c.msgs, bus.Message{Subject: evs[i].Subject(), Data: data})
	}
	return 0, nil
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// written is how many bytes the process has written so far (/proc/self/io wchar), 0 where that
// cannot be read.
func written() int64 {
	data, _ := os.ReadFile("/proc/self/io")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
