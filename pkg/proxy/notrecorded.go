package proxy

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// notRecordedLogEvery bounds the "not recorded" log lines: on a full disk every turn fails.
const notRecordedLogEvery = 10 * time.Second

// NotRecordedRecently is how long after its last lost turn the proxy reports itself degraded.
const NotRecordedRecently = 30 * time.Second

// notRecorded counts the turns the proxy served whose record neither the bus nor the spool took
// (both on a full disk): the client had its answer, the record of it is gone. The user's agent is
// never held up for it; the heartbeat and the log say how many were lost and why.
type notRecorded struct {
	turns    atomic.Int64
	at       atomic.Int64 // when the last was lost (unix ms)
	why      atomic.Pointer[string]
	loggedAt atomic.Int64 // when a loss was last logged (unix ms)
	unlogged atomic.Int64 // turns lost since then
}

// lostBatch counts what PublishBatch could not record of batch: the events its NotRecordedError
// names, or the whole batch for another error.
func (p *Proxy) lostBatch(batch []event.Event, err error) {
	var nr *bus.NotRecordedError
	if errors.As(err, &nr) {
		lost := make([]event.Event, 0, len(nr.Lost))
		for _, i := range nr.Lost {
			if i >= 0 && i < len(batch) {
				lost = append(lost, batch[i])
			}
		}
		batch = lost
	}
	p.lost(batch, err)
}

// lost counts events that were neither published nor spooled, their turns apart, and logs it at
// most every notRecordedLogEvery.
func (p *Proxy) lost(evs []event.Event, err error) {
	p.pubErrors.Add(int64(len(evs)))
	turns := 0
	for i := range evs {
		if evs[i].Kind == event.KindAPITurn {
			turns++
		}
	}
	why := err.Error()
	if bus.IsNoSpace(err) {
		why = "disk full"
	}
	now := time.Now().UnixMilli()
	p.nr.turns.Add(int64(turns))
	p.nr.at.Store(now)
	p.nr.why.Store(&why)
	n := p.nr.unlogged.Add(int64(turns))
	last := p.nr.loggedAt.Load()
	if last != 0 && now-last < notRecordedLogEvery.Milliseconds() || !p.nr.loggedAt.CompareAndSwap(last, now) {
		return
	}
	p.nr.unlogged.Add(-n)
	p.logger.Error("api turns not recorded: the client was served, but neither the bus nor the spool took the record",
		"turns", n, "turns_total", p.nr.turns.Load(), "events", len(evs), "why", why, "err", err,
		"next_log_in", notRecordedLogEvery.String())
}

// fill copies the counters into s.
func (n *notRecorded) fill(s *Stats) {
	s.NotRecorded = n.turns.Load()
	if ms := n.at.Load(); ms > 0 {
		s.NotRecordedAt = time.UnixMilli(ms).UTC()
	}
	if why := n.why.Load(); why != nil {
		s.NotRecordedWhy = *why
	}
}

// Problem says, while turns were lost within NotRecordedRecently of now, how many in all and why
// ("12 turns not recorded: disk full"); else "".
func (s Stats) Problem(now time.Time) string {
	if s.NotRecorded == 0 || now.Sub(s.NotRecordedAt) > NotRecordedRecently {
		return ""
	}
	return fmt.Sprintf("%d turns not recorded: %s", s.NotRecorded, s.NotRecordedWhy)
}
