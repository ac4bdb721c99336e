package ingest

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/opencode"
)

// BenchmarkOpenCodeMemory measures the resident memory of one watcher pass over a large Kilo CLI
// database (openCodeHistory; OBSERVER_BENCH_OPENCODE_COPIES copies of the corpus, 1,200 by
// default: ~300 MB): the pass publishes to a publisher that drops the events, as observer-watch
// publishes to the bus. It reports the peak resident size during the pass (VmHWM, reset before
// it), the resident size right after it (VmRSS) and after debug.FreeOSMemory (which observer-watch
// calls after a large pass), and the database's size, in MB. No figure is asserted:
// scripts/bench-opencode-rss.sh prints them.
func BenchmarkOpenCodeMemory(b *testing.B) {
	if os.Getenv("OBSERVER_BENCH_OPENCODE_COPIES") == "" {
		os.Setenv("OBSERVER_BENCH_OPENCODE_COPIES", "1200")
	}
	data := openCodeHistory(b)
	fi, err := os.Stat(filepath.Join(data, "kilo.db"))
	if err != nil {
		b.Fatal(err)
	}
	var peak, after, released, base float64
	var events int64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS(b)
		base = procStatusMB(b, "VmRSS")
		cur, err := OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s := &Scanner{Cursors: cur, Adapters: []transcript.Adapter{opencode.NewKilo([]string{data})}, Publisher: dropPublisher{}}
		sum, err := s.Scan(context.Background())
		b.StopTimer()
		if err != nil || sum.Events == 0 || len(sum.Errors) != 0 {
			b.Fatalf("scan: %v, %+v", err, sum)
		}
		events = sum.Events
		peak, after = procStatusMB(b, "VmHWM"), procStatusMB(b, "VmRSS")
		debug.FreeOSMemory() // what observer-watch does after a large pass
		released = procStatusMB(b, "VmRSS")
		cur.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(fi.Size())/1e6, "db_MB")
	b.ReportMetric(base, "before_rss_MB")
	b.ReportMetric(peak, "peak_rss_MB")
	b.ReportMetric(after, "after_rss_MB")
	b.ReportMetric(released, "released_rss_MB")
	b.ReportMetric(float64(events), "events")
}

// dropPublisher acknowledges every batch and keeps nothing.
type dropPublisher struct{}

func (dropPublisher) PublishBatch(_ context.Context, evs []event.Event) (int, error) { return 0, nil }

// resetPeakRSS resets the process's VmHWM (Linux: 5 to /proc/self/clear_refs), or skips.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("SKIPPED: cannot reset the peak resident size: %v", err)
	}
}

// procStatusMB returns a size field of /proc/self/status in MB.
func procStatusMB(b *testing.B, field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skipf("SKIPPED: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024 / 1e6
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
