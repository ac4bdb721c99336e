package transcripttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Poll runs one pass of a fresh parser of a (a Database source's, a transcript.Poller) from
// state, fails the test on an error or an event CheckEvents rejects, and returns the events, the
// new state and the pass's stats.
func Poll(tb testing.TB, a transcript.Adapter, src transcript.Source, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	p, err := a.NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.(transcript.Poller).Poll(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	CheckEvents(tb, evs)
	return evs, p.State(), p.Stats()
}

// PollUntil polls src with fresh parsers of a, carrying the state from one successful pass to the
// next and pausing between passes, until done is closed, then once more: the way observer-watch
// reads a database a client is writing. A pass that fails is logged and retried at the next one.
// It returns the last event read under each id.
func PollUntil(tb testing.TB, a transcript.Adapter, src transcript.Source, done <-chan struct{}, pause time.Duration) map[string]event.Event {
	tb.Helper()
	final := map[string]event.Event{}
	var state []byte
	pollOnce := func() {
		p, _ := a.NewParser(src, state)
		evs, err := p.(transcript.Poller).Poll(context.Background())
		if err != nil {
			tb.Logf("poll failed (retried): %v", err)
			return
		}
		state = p.State()
		for _, e := range evs {
			final[e.ID] = e
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			pollOnce()
			time.Sleep(pause)
		}
	}
	pollOnce()
	return final
}

// DirFiles lists the names of the files in dir.
func DirFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

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
