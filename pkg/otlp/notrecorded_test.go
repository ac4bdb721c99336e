package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/testlog"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/proxy"
)

// fullDisk is a Publisher on a full disk: of every batch it records the even events and loses the
// odd ones, as a bus client whose stream and spool refuse them does; with err set, it records
// nothing and fails the whole batch with err instead.
type fullDisk struct {
	mu       sync.Mutex
	recorded int
	batches  int
	err      error
}

func (f *fullDisk) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches++
	if f.err != nil {
		return 0, f.err
	}
	var lost []int
	for i := range evs {
		if i%2 == 1 {
			lost = append(lost, i)
		} else {
			f.recorded++
		}
	}
	if len(lost) == 0 {
		return 0, nil
	}
	return 0, &bus.NotRecordedError{Lost: lost, Err: fmt.Errorf("spool: write x: %w", syscall.ENOSPC)}
}

// TestReceiver_CountsEventsNotRecorded: on a full disk every export is answered 200, and the
// receiver counts exactly the events neither the bus nor the spool took (recorded + not recorded
// = mapped); Stats.Problem says so and why for a while after the last, and the log says it
// once per bus.LossLogEvery, not once per export. Another publish error loses the whole batch.
func TestReceiver_CountsEventsNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		err       error
	}{
		{"DiskFull", "disk full", nil},
		{"OtherError", "bus: unavailable", errors.New("bus: unavailable")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testlog.Buffer
			pub := &fullDisk{err: tc.err}
			r := New(Config{Publisher: pub, Coster: flatCost{}, Refuse: proxy.Refuser("127.0.0.1:4318"),
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			defer r.Close()
			var clock atomic.Int64
			clock.Store(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC).UnixMilli())
			r.now = func() time.Time { return time.UnixMilli(clock.Load()) }

			body := fixture(t, "claude-code-2.1.197-logs.json")
			const exports = 20
			send := func(n int) {
				t.Helper()
				for i := range n {
					if w := post(t, r, PathLogs, "application/json", "", body); w.Code != 200 {
						t.Fatalf("export %d: status %d: %s", i, w.Code, w.Body)
					}
				}
			}
			// Each batch is mapped and published before the next is counted: wait for that.
			published := func(n int) {
				t.Helper()
				for deadline := time.Now().Add(hangGuard); ; time.Sleep(5 * time.Millisecond) {
					pub.mu.Lock()
					b := pub.batches
					pub.mu.Unlock()
					if b >= n {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d batches published after %v, want %d", b, hangGuard, n)
					}
				}
			}
			send(exports)
			published(exports)
			// A second burst after the log's interval is logged once more.
			clock.Add((bus.LossLogEvery + time.Second).Milliseconds())
			send(exports)
			published(2 * exports)
			r.Close()

			st := r.Stats()
			pub.mu.Lock()
			recorded := pub.recorded
			pub.mu.Unlock()
			if st.Events == 0 || st.NotRecorded == 0 || int64(recorded)+st.NotRecorded != st.Events {
				t.Errorf("%d events mapped; recorded %d + not recorded %d, want all of them", st.Events, recorded, st.NotRecorded)
			}
			if tc.err != nil && st.NotRecorded != st.Events {
				t.Errorf("%d of %d events counted as not recorded after %v, want all", st.NotRecorded, st.Events, tc.err)
			}
			if st.PubErrors != st.NotRecorded {
				t.Errorf("PubErrors %d, want the %d not recorded", st.PubErrors, st.NotRecorded)
			}
			now := time.UnixMilli(clock.Load())
			if st.NotRecordedWhy != tc.why || !st.NotRecordedAt.Equal(now) {
				t.Errorf("NotRecordedWhy %q at %v, want %q at %v", st.NotRecordedWhy, st.NotRecordedAt, tc.why, now)
			}
			if pr, want := st.Problem(now.Add(bus.LossRecently)), "OTLP events may not have been recorded: "+tc.why+" (count in detail)"; pr != want {
				t.Errorf("Problem = %q, want %q", pr, want)
			}
			if pr := st.Problem(now.Add(bus.LossRecently + time.Second)); pr != "" {
				t.Errorf("Problem after %v = %q, want none", bus.LossRecently, pr)
			}
			if n := strings.Count(logs.String(), "otlp: events may not have been recorded"); n != 2 {
				t.Errorf("%d log lines about events not recorded for %d exports in two bursts, want 2:\n%s", n, 2*exports, logs.String())
			}
			t.Logf("%d exports answered; %d events mapped, %d recorded, %d not recorded (%s)", 2*exports, st.Events, recorded, st.NotRecorded, st.NotRecordedWhy)
		})
	}
}
