package otlp

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/bus"
)

// notRecordedLogEvery bounds the "not recorded" log lines: on a full disk every export fails.
const notRecordedLogEvery = 10 * time.Second

// NotRecordedRecently is how long after its last lost event the receiver reports a problem
// (Stats.Problem), so that its host shows itself degraded.
const NotRecordedRecently = 30 * time.Second

// notRecorded counts the events mapped from exports that neither the bus nor the spool took (both
// on a full disk). The exporter was answered 200 before they were published and will not send
// them again: they are lost, and the host's heartbeat and the log say how many and why.
type notRecorded struct {
	events   atomic.Int64
	at       atomic.Int64 // when the last was lost (unix ms)
	why      atomic.Pointer[string]
	loggedAt atomic.Int64 // when a loss was last logged (unix ms)
	unlogged atomic.Int64 // events lost since then
}

// lostOf is how many of a batch of n events PublishBatch's err says were not recorded: those a
// bus.NotRecordedError names, or the whole batch for another error (PublishBatch published none).
func lostOf(n int, err error) int {
	var nr *bus.NotRecordedError
	if errors.As(err, &nr) {
		return min(len(nr.Lost), n)
	}
	return n
}

// lost counts n events of a batch of batch as not recorded, and logs it at most every
// notRecordedLogEvery.
func (r *Receiver) lost(n, batch int, err error) {
	if n <= 0 {
		return
	}
	why := err.Error()
	if bus.IsNoSpace(err) {
		why = "disk full"
	}
	now := r.now().UnixMilli()
	r.nr.events.Add(int64(n))
	r.nr.at.Store(now)
	r.nr.why.Store(&why)
	pending := r.nr.unlogged.Add(int64(n))
	last := r.nr.loggedAt.Load()
	if last != 0 && now-last < notRecordedLogEvery.Milliseconds() || !r.nr.loggedAt.CompareAndSwap(last, now) {
		return
	}
	r.nr.unlogged.Add(-pending)
	r.logger.Error("otlp: events not recorded: the exporter was answered, but neither the bus nor the spool took them",
		"events", pending, "events_total", r.nr.events.Load(), "batch", batch, "why", why, "err", err,
		"next_log_in", notRecordedLogEvery.String())
}

// fill copies the counters into s.
func (n *notRecorded) fill(s *Stats) {
	s.NotRecorded = n.events.Load()
	if ms := n.at.Load(); ms > 0 {
		s.NotRecordedAt = time.UnixMilli(ms).UTC()
	}
	if why := n.why.Load(); why != nil {
		s.NotRecordedWhy = *why
	}
}

// Problem says, while events were lost within NotRecordedRecently of now, how many in all and
// why ("12 OTLP events not recorded: disk full"); else "".
func (s Stats) Problem(now time.Time) string {
	if s.NotRecorded == 0 || now.Sub(s.NotRecordedAt) > NotRecordedRecently {
		return ""
	}
	return fmt.Sprintf("%d OTLP events not recorded: %s", s.NotRecorded, s.NotRecordedWhy)
}
