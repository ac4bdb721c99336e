// Package ingesttest drives transcript adapters through internal/ingest in tests, as `observerctl
// scan` and observer-watch do, so that a reader's tests (pkg/transcript/<client>) can check what a
// scan of its files publishes. Only tests import it: pkg/transcript/transcripttest holds the
// helpers that need nothing above pkg.
package ingesttest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Scan drives adapters through internal/ingest as `observerctl scan` and observer-watch do, with
// cursors of its own, and keeps what they publish.
type Scan struct {
	tb        testing.TB
	scanner   *ingest.Scanner
	Published []event.Event // every event published, in order
}

// NewScan returns a Scan of adapters, with a fresh cursor file that is closed when the test ends.
func NewScan(tb testing.TB, adapters ...transcript.Adapter) *Scan {
	tb.Helper()
	cur, err := ingest.OpenCursors(filepath.Join(tb.TempDir(), "cursors.json"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cur.Close() })
	s := &Scan{tb: tb}
	s.scanner = &ingest.Scanner{Adapters: adapters, Cursors: cur, Publisher: publisher{s}}
	return s
}

// Run scans once, failing the test on an error of the scan or of a file, and returns its summary.
func (s *Scan) Run() ingest.Summary {
	s.tb.Helper()
	sum, err := s.scanner.Scan(context.Background())
	if err != nil || len(sum.Errors) > 0 {
		s.tb.Fatalf("scan: %v %v", err, sum.Errors)
	}
	return sum
}

// Last is the last event published (the zero event when there is none).
func (s *Scan) Last() event.Event {
	if len(s.Published) == 0 {
		return event.Event{}
	}
	return s.Published[len(s.Published)-1]
}

type publisher struct{ s *Scan }

func (p publisher) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	p.s.Published = append(p.s.Published, evs...)
	return 0, nil
}
