package writer

import (
	"context"
	"errors"
	"fmt"

	"github.com/observerhq/observer/pkg/event"
)

// Direct hands a run's events to a Writer in the same process, without a bus: the writer a
// one-shot `observerctl scan` hosts when nothing else runs (DESIGN.md, "Processes"). It is an
// ingest.Publisher. PublishBatch returns only once the batch's transaction has committed, so a
// caller that moves its reading positions after it (the scanner does) keeps the bus's guarantee:
// nothing is counted as published before it is stored, and a run killed at any point reads again
// from the last stored batch, whose events the store then takes as duplicates.
//
// The writer's code is the bus path's, less the encoding and decoding: the same transaction, the
// same bulk path and catch-ups, the same pricing. An event that would not encode for the bus
// (event.Validate) is refused with the error the bus client gives.
type Direct struct {
	in      chan directBatch
	stopped chan struct{}
	err     error // why serve returned; set before stopped closes
}

type directBatch struct {
	evs  []event.Event
	done chan error
}

// DirectBatch is how many events a scan gathers for its own writer (ingest.Scanner.Gather), each
// such batch stored in one transaction, and how many may wait meanwhile. Fewer commits rewrite
// the same pages into the log fewer times: BenchmarkHistoryWriter stores the benchmark history
// in 2.65-2.73 s at 2,000 events a transaction (347 MB written to the store's files), 2.25 s at
// 5,000 (215 MB), 2.14-2.20 s at 10,000 (162 MB). A cold scan's peak memory grows with what
// waits: 3,000 took most of the gain for 5-8 MB more, 5,000 cost 15-20 MB more.
const DirectBatch = 3000

// ErrWriterStopped is PublishBatch's error once the writer's Run has returned.
var ErrWriterStopped = errors.New("the writer has stopped")

// NewDirect returns a Direct to set as a Writer's Direct before its Run.
func NewDirect() *Direct {
	return &Direct{in: make(chan directBatch), stopped: make(chan struct{})}
}

// PublishBatch stores evs in one transaction of the writer and returns when it committed (spooled
// is always 0: there is no spool without a bus).
func (d *Direct) PublishBatch(ctx context.Context, evs []event.Event) (spooled int, err error) {
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			return 0, fmt.Errorf("event %d: %w", i, err)
		}
		evs[i].Member = "" // only a hub names members
	}
	b := directBatch{evs: evs, done: make(chan error, 1)}
	select {
	case d.in <- b:
	case <-d.stopped:
		return 0, d.stopErr()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	// Once taken, the batch is written whatever ctx says (as a bus batch once received): its
	// outcome is waited for, so that a cursor never moves past what did not commit.
	return 0, <-b.done
}

func (d *Direct) stopErr() error {
	if d.err != nil {
		return fmt.Errorf("%w: %v", ErrWriterStopped, d.err)
	}
	return ErrWriterStopped
}

// serve stores each batch with write until ctx ends or write fails for good (the store file
// gone: write's error stops Run, as on the bus path).
func (d *Direct) serve(ctx context.Context, write func([]event.Event) error) error {
	defer close(d.stopped)
	for {
		select {
		case <-ctx.Done():
			return nil
		case b := <-d.in:
			err := write(b.evs)
			b.done <- err
			if err != nil && ctx.Err() != nil {
				d.err = err
				return err
			}
		}
	}
}
