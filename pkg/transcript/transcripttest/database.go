package transcripttest

import (
	"context"
	"os"
	"testing"
	"time"

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
