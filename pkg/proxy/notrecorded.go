package proxy

import (
	"errors"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

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

// lost counts events that were neither published nor spooled, their turns apart (p.nr logs it at
// most every bus.LossLogEvery). The client had its answer; the user's agent is never held up.
func (p *Proxy) lost(evs []event.Event, err error) {
	p.pubErrors.Add(int64(len(evs)))
	turns := 0
	for i := range evs {
		if evs[i].Kind == event.KindAPITurn {
			turns++
		}
	}
	p.nr.Add(turns, len(evs), err)
}

// Problem says, while turns were lost within bus.LossRecently of now, that turns were lost and
// why ("turns may not have been recorded: disk full (count in detail)"); else "".
func (s Stats) Problem(now time.Time) string {
	return bus.Losses{What: "turns", N: s.NotRecorded, At: s.NotRecordedAt, Why: s.NotRecordedWhy}.Problem(now)
}
