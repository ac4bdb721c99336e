package openhands

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.Reasoning < 0 || u.Reasoning > u.Output ||
		u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord feeds an arbitrary event file to the events parser's reader and an arbitrary
// base_state.json to the usage parser: neither panics, what they emit validates, the same input
// gives the same events, the state left loads again, and a re-read of the same base_state.json
// from it emits nothing.
func FuzzRecord(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join(fixtureDir(f), EventsDirName))
	// A small base_state.json (the fixture's, cut down): the fuzzer minimizes every input it finds
	// interesting, which takes long on a document of several kilobytes.
	base := []byte(`{"workspace":{"working_dir":"/nonexistent-observer/api"},"agent":{"llm":{"model":"anthropic/claude-sonnet-4-5"}},"stats":{"usage_to_metrics":{"agent":{"model_name":"anthropic/claude-sonnet-4-5","token_usages":[{"prompt_tokens":9310,"completion_tokens":188,"cache_read_tokens":8300,"cache_write_tokens":880,"reasoning_tokens":40,"response_id":"r1"},{"prompt_tokens":5,"response_id":"r9"}]}}}}`)
	for i, e := range ents {
		data, err := os.ReadFile(filepath.Join(fixtureDir(f), EventsDirName, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		if i%4 == 0 {
			f.Add(data, base)
		} else {
			f.Add(data, []byte(`{}`))
		}
	}
	f.Add([]byte(`{"kind":"Condensation","timestamp":"2026-03-04T10:15:00","summary":"s","id":"c"}`),
		[]byte(`{"stats":{"usage_to_metrics":{"a":{"token_usages":[{"prompt_tokens":"5","cache_read_tokens":9,"completion_tokens":-3,"reasoning_tokens":99,"response_id":"r1"}]}}}}`))
	f.Add([]byte(`{"kind":"ObservationEvent","tool_call_id":"x","tool_name":"terminal","observation":{"exit_code":1e300,"error":true,"content":"e"}}`),
		[]byte(`{"stats":{"usage_to_metrics":{"b":{"token_usages":[{},{"model":"gpt-5"}]}}}}`))
	f.Fuzz(func(t *testing.T, file, baseState []byte) {
		src := transcript.Source{Client: Client, Path: "/nonexistent-observer/convs/c1/events", SessionID: "c1", Database: true}
		run := func() []event.Event {
			p := newEventsParser(src, nil)
			var ev rawEvent
			if decodeEvent(file, &ev) != nil {
				return nil
			}
			r := &eventReader{p: p, st: &p.st, stats: &p.stats, idx: 3}
			evs := r.read(&ev)
			if _, err := newEventsParser(src, p.State()).Poll(t.Context()); err != nil {
				t.Fatalf("state %s: %v", p.State(), err)
			}
			return evs
		}
		a, b := run(), run()
		transcripttest.CheckFuzzed(t, a, badUsage)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("events parser not deterministic")
		}

		ssrc := transcript.Source{Client: Client, Path: "/nonexistent-observer/convs/c1/base_state.json", SessionID: "c1", Document: true}
		usage := func(state []byte) ([]event.Event, []byte) {
			p := newStateParser(ssrc, state, func() *pricing.Table { return pricing.Default() })
			p.first = time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
			p.times["r1"] = p.first.Add(time.Minute)
			evs, _ := p.Record(0, baseState)
			return evs, p.State()
		}
		u1, st := usage(nil)
		u2, _ := usage(nil)
		transcripttest.CheckFuzzed(t, u1, badUsage)
		if !reflect.DeepEqual(u1, u2) {
			t.Fatalf("usage parser not deterministic")
		}
		if again, _ := usage(st); len(again) != 0 {
			t.Fatalf("a re-read from state %s emitted %d events", st, len(again))
		}
	})
}
