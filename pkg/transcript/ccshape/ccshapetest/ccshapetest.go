// Package ccshapetest holds the test helpers of the readers built on package ccshape (iflow,
// qoder), which read their fixtures alike.
package ccshapetest

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Read feeds lines to a parser of a for src, resumed from state, and returns the events, checked
// (transcripttest.CheckEvents), and the new state. A line that fails fails the test.
func Read(tb testing.TB, a transcript.Adapter, src transcript.Source, lines [][]byte, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := a.NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []event.Event
	for i, l := range lines {
		got, err := p.Record(int64(i), l)
		if err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
		evs = append(evs, got...)
	}
	transcripttest.CheckEvents(tb, evs)
	return evs, p.State()
}

// ByKind returns the events of kind k, in order.
func ByKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// ActionsByType returns the merged tool-call actions (transcripttest.ActionsOf) by type: of a
// type seen twice, the last.
func ActionsByType(evs []event.Event) map[event.ActionType]*event.Action {
	out := map[event.ActionType]*event.Action{}
	for _, a := range transcripttest.ActionsOf(evs) {
		out[a.Type] = a
	}
	return out
}
