package bus

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// LossLogEvery bounds a LossCounter's log lines: on a full disk every publish fails.
const LossLogEvery = 10 * time.Second

// LossRecently is how long after its last loss a LossCounter's reading has a Problem, so that the
// producer's heartbeat shows it degraded.
const LossRecently = 30 * time.Second

// LossCounter counts what a producer took from a client (a proxy's turns, an OTLP receiver's
// events) but could not confirm recorded: PublishBatch or Publish failed for it, neither the bus
// acknowledged it nor the spool took it (a NotRecordedError, or another error for the whole
// batch). The client was answered and will not send it again. The count may be too high (see
// NotRecordedError: a slow stream may still store an event whose ack came too late), hence "may
// not have been recorded" in what it says. The counter keeps the total, when the last was lost and
// why, and logs at most once every LossLogEvery. Set its fields before the first Add; the zero
// value is silent and counts.
type LossCounter struct {
	What   string           // what is counted, plural ("turns", "OTLP events"): the Problem's noun
	Key    string           // the log attribute of the count ("turns"; Key+"_total" the total)
	Msg    string           // the log line's message
	Logger *slog.Logger     // nil: no log
	Now    func() time.Time // nil: time.Now

	n        atomic.Int64
	at       atomic.Int64 // when the last was lost (unix ms)
	why      atomic.Pointer[string]
	loggedAt atomic.Int64 // when a loss was last logged (unix ms)
	unlogged atomic.Int64 // counted since then
}

// Add counts n of a batch of batch events as lost for err, and logs it unless a loss was logged
// less than LossLogEvery ago. n may be 0 (the lost events held nothing counted): the loss is still
// noted and logged.
func (c *LossCounter) Add(n, batch int, err error) {
	if n <= 0 && batch <= 0 {
		return
	}
	why := "unknown error"
	if err != nil {
		why = err.Error()
	}
	if IsNoSpace(err) {
		why = "disk full"
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ms := now().UnixMilli()
	c.n.Add(int64(n))
	c.at.Store(ms)
	c.why.Store(&why)
	pending := c.unlogged.Add(int64(n))
	last := c.loggedAt.Load()
	if last != 0 && ms-last < LossLogEvery.Milliseconds() || !c.loggedAt.CompareAndSwap(last, ms) {
		return
	}
	c.unlogged.Add(-pending)
	if c.Logger != nil {
		c.Logger.Error(c.Msg, c.Key, pending, c.Key+"_total", c.n.Load(), "batch", batch, "why", why, "err", err,
			"next_log_in", LossLogEvery.String())
	}
}

// Losses reads the counter.
func (c *LossCounter) Losses() Losses {
	l := Losses{What: c.What, N: c.n.Load()}
	if ms := c.at.Load(); ms > 0 {
		l.At = time.UnixMilli(ms).UTC()
	}
	if why := c.why.Load(); why != nil {
		l.Why = *why
	}
	return l
}

// Losses is a LossCounter's reading: N lost in all, the last At, and Why.
type Losses struct {
	What string
	N    int64
	At   time.Time
	Why  string
}

// Problem says, while a loss happened within LossRecently of now, what was lost and why
// ("turns may not have been recorded: disk full (count in detail)"); else "". It holds no count: a heartbeat's
// problems are compared from one beat to the next (the supervisor logs a change), and a running
// total would change at nearly every beat. The count goes in the heartbeat's detail.
func (l Losses) Problem(now time.Time) string {
	if l.N == 0 || now.Sub(l.At) > LossRecently {
		return ""
	}
	return fmt.Sprintf("%s may not have been recorded: %s (count in detail)", l.What, l.Why)
}
