package transcripttest

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// SeedLines adds to f's seed corpus the first n lines of each file at paths that exists, but the
// lines of maxLen bytes or more.
func SeedLines(f *testing.F, n, maxLen int, paths ...string) {
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := bytes.Split(data, []byte("\n"))
		for i := 0; i < len(lines) && i < n; i++ {
			if len(lines[i]) < maxLen {
				f.Add(lines[i])
			}
		}
	}
}

// CheckFuzzed fails the test on an event a fuzzed parser must never return: one that does not
// validate, has an action of an unknown type, has a usage bad reports (each reader says which
// figures its format can get wrong; nil: none), or does not encode as JSON.
func CheckFuzzed(tb testing.TB, evs []event.Event, bad func(*event.TokenUsage) bool) {
	tb.Helper()
	for i := range evs {
		e := &evs[i]
		if err := e.Validate(); err != nil {
			tb.Fatalf("invalid event %+v: %v", e, err)
		}
		if e.Action != nil && !e.Action.Type.Valid() {
			tb.Fatalf("action type %q", e.Action.Type)
		}
		if u := e.TokenUsage; u != nil && bad != nil && bad(u) {
			tb.Fatalf("bad usage %+v", u)
		}
		if _, err := json.Marshal(e); err != nil {
			tb.Fatal(err)
		}
	}
}

// FuzzLines is the body of a line reader's fuzz test: a fresh parser of a reads data split at
// "\n", line i at offset i. It must not panic, every line's events must pass CheckFuzzed with
// bad, the parser's state must load again, and no more lines be malformed than read. It returns
// the events.
func FuzzLines(tb testing.TB, a transcript.Adapter, src transcript.Source, data []byte, bad func(*event.TokenUsage) bool) []event.Event {
	tb.Helper()
	p := mustParser(tb, a.NewParser, src, nil)
	var out []event.Event
	for i, line := range bytes.Split(data, []byte("\n")) {
		evs, _ := p.Record(int64(i), line)
		CheckFuzzed(tb, evs, bad)
		out = append(out, evs...)
	}
	state := p.State()
	if _, err := a.NewParser(src, state); err != nil {
		tb.Fatalf("state %s does not load: %v", state, err)
	}
	if st := p.Stats(); st.Malformed > st.Lines {
		tb.Fatalf("stats %+v", st)
	}
	return out
}

// SameEvents fails the test unless two reads of the same input returned events that encode
// alike: a parser is deterministic.
func SameEvents(tb testing.TB, first, second []event.Event) {
	tb.Helper()
	if !bytes.Equal(MustJSON(tb, first), MustJSON(tb, second)) {
		tb.Fatalf("not deterministic: %d events, then %d", len(first), len(second))
	}
}
