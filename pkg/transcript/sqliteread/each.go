package sqliteread

import (
	"context"
	"database/sql"
	"slices"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Collect is the Poll of a reader that streams (a transcript.StreamPoller): it calls each, the
// reader's PollEach, with no bound on a batch and returns every event handed over, or nil and
// the error.
func Collect(ctx context.Context, each func(context.Context, int, func([]event.Event) error) error) ([]event.Event, error) {
	var out []event.Event
	err := each(ctx, 1<<30, func(evs []event.Event) error {
		out = append(out, evs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PassEach is Pass for a transcript.StreamPoller's PollEach. Each attempt calls read with a copy
// of *st (clone makes it), which read advances, and a Batcher that hands read's events to emit,
// at most max at a time (at least one). read counts what it reads in *stats, and each attempt
// counts from the committed figures, so that a thrown-away attempt counts nothing. When the pass
// succeeds, *st takes the copy and stats.Events counts the events handed over; on an error, *st
// and *stats are as they were, though emit may have had some batches (the next pass, from the
// same state, hands them over again under the same ids).
func PassEach[S any](ctx context.Context, path string, st *S, clone func(S) S, stats *transcript.Stats, max int,
	emit func([]event.Event) error, read func(context.Context, *sql.DB, *S, *Batcher) error) error {
	if max <= 0 {
		max = 1
	}
	committed := stats.Clone()
	var b *Batcher
	work, _, err := Pass(ctx, path, func() S { return clone(*st) }, func(ctx context.Context, db *sql.DB, work *S) (struct{}, error) {
		*stats = committed.Clone()
		b = &Batcher{ctx: ctx, max: max, emit: emit}
		if err := read(ctx, db, work, b); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, b.flush()
	})
	if err != nil {
		*stats = committed
		return err
	}
	*st = work
	stats.Events += b.n
	return nil
}

// Batcher gathers the events of an attempt of PassEach and hands them over max at a time, so
// that a reader holds one batch, never the pass's events.
type Batcher struct {
	ctx  context.Context
	max  int
	emit func([]event.Event) error
	evs  []event.Event
	n    int64 // events handed over
}

// Add gathers evs, and hands over each full batch.
func (b *Batcher) Add(evs ...event.Event) error {
	b.evs = append(b.evs, evs...)
	for len(b.evs) >= b.max {
		if err := b.send(b.evs[:b.max]); err != nil {
			return err
		}
		b.evs = slices.Delete(b.evs, 0, b.max)
	}
	return nil
}

func (b *Batcher) flush() error {
	if len(b.evs) == 0 {
		return nil
	}
	err := b.send(b.evs)
	b.evs = nil
	return err
}

// send hands a batch over, a copy the emit function may keep, if the database was not changed
// under the read (Unchanged): what was read from a database that changed may mix two states of
// it, and the attempt is thrown away.
func (b *Batcher) send(evs []event.Event) error {
	if err := Unchanged(b.ctx); err != nil {
		return err
	}
	b.n += int64(len(evs))
	return b.emit(slices.Clone(evs))
}
