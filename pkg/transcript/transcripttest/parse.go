package transcripttest

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Check is what a test asks of the events a parser returns for one record: CheckEvents, and
// whatever else the reader promises (its client, its component, a session id).
type Check func(tb testing.TB, evs []event.Event)

// Envelope returns the Check of a reader whose events all carry its client and component (the
// event's Source): CheckEvents, and no event of another.
func Envelope(client, component string) Check {
	return func(tb testing.TB, evs []event.Event) {
		tb.Helper()
		CheckEvents(tb, evs)
		for i := range evs {
			if e := &evs[i]; e.Client != client || e.Source != component {
				tb.Fatalf("envelope %+v", e)
			}
		}
	}
}

// Feed hands recs to p in order as internal/ingest hands a file's lines: each at the offset of
// the one before plus its length and a newline. It logs a record's error (a malformed line is no
// failure), passes each record's events to check, and returns all the events.
func Feed(tb testing.TB, p transcript.Parser, recs [][]byte, check Check) []event.Event {
	tb.Helper()
	var out []event.Event
	var off int64
	for _, rec := range recs {
		evs, err := p.Record(off, rec)
		if err != nil {
			tb.Logf("record at %d: %v", off, err)
		}
		off += int64(len(rec)) + 1
		check(tb, evs)
		out = append(out, evs...)
	}
	return out
}

// ParseFile reads src's file in one pass with the parser newParser makes of src (a reader's
// newParser, which returns its own parser type P), as Feed does: a Document whole as one record,
// any other file a line at a time (ReadLines). It returns the events and the parser.
func ParseFile[P transcript.Parser](tb testing.TB, newParser func(transcript.Source, []byte) (P, error), src transcript.Source, check Check) ([]event.Event, P) {
	tb.Helper()
	p := mustParser(tb, newParser, src, nil)
	if src.Document {
		data, err := os.ReadFile(src.Path)
		if err != nil {
			tb.Fatal(err)
		}
		return Feed(tb, p, [][]byte{data}, check), p
	}
	return Feed(tb, p, ReadLines(tb, src.Path), check), p
}

// ParseLines reads lines given as strings, as the lines of src's file, in one pass with the
// parser newParser makes of src, as Feed does. It returns the events and the parser.
func ParseLines[P transcript.Parser](tb testing.TB, newParser func(transcript.Source, []byte) (P, error), src transcript.Source, check Check, lines ...string) ([]event.Event, P) {
	tb.Helper()
	p := mustParser(tb, newParser, src, nil)
	recs := make([][]byte, 0, len(lines))
	for _, l := range lines {
		recs = append(recs, []byte(l))
	}
	return Feed(tb, p, recs, check), p
}

// Resumed reads src's file a line at a time, each line with a fresh parser of a resumed from the
// state the one before left, as observer-watch reads a file that grows: what it returns must be
// what one pass returns. It returns the events and the lines' errors, joined.
func Resumed(tb testing.TB, a transcript.Adapter, src transcript.Source) ([]event.Event, error) {
	tb.Helper()
	var out []event.Event
	var errs []error
	var state []byte
	var off int64
	for _, line := range ReadLines(tb, src.Path) {
		p := mustParser(tb, a.NewParser, src, state)
		evs, err := p.Record(off, line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line at %d: %w", off, err))
		}
		off += int64(len(line)) + 1
		out = append(out, evs...)
		state = p.State()
	}
	return out, errors.Join(errs...)
}

// mustParser returns the parser newParser makes of src from state, failing the test on an error.
func mustParser[P transcript.Parser](tb testing.TB, newParser func(transcript.Source, []byte) (P, error), src transcript.Source, state []byte) P {
	tb.Helper()
	p, err := newParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
