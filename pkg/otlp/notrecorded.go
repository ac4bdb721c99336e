package otlp

import (
	"errors"
	"time"

	"github.com/observerhq/observer/pkg/bus"
)

// lostOf is how many of a batch of n events PublishBatch's err says were not recorded: those a
// bus.NotRecordedError names, or the whole batch for another error (PublishBatch published none).
func lostOf(n int, err error) int {
	var nr *bus.NotRecordedError
	if errors.As(err, &nr) {
		return min(len(nr.Lost), n)
	}
	return n
}

// Problem says, while events were lost within bus.LossRecently of now, that events were lost and
// why ("OTLP events may not have been recorded: disk full (count in detail)"); else "".
func (s Stats) Problem(now time.Time) string {
	return bus.Losses{What: "OTLP events", N: s.NotRecorded, At: s.NotRecordedAt, Why: s.NotRecordedWhy}.Problem(now)
}
