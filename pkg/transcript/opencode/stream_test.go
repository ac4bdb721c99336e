package opencode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// PollEach hands a pass's events over in batches of at most max while it reads the rows (the
// first batch goes before the last row is read), in Poll's order; a failing emit ends the pass
// and leaves the watermark, so the next pass hands everything over again.
func TestPollEach_Streams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := newDB(t, path)
	execT(t, db, insSession, "ses_root", nil, 100, 100)
	const n = 30
	for i := range n {
		msg := fmt.Sprintf("msg_%02d", i)
		execT(t, db, insMessage, msg, "ses_root", 1000+i, 1000+i, assistant(int64(10+i), 3))
		execT(t, db, insPart, fmt.Sprintf("prt_%02d", i), msg, "ses_root", 2000+i, 2000+i,
			`{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"output":"x","time":{"start":5,"end":6}}}`)
	}
	a := New(nil)
	src := transcript.Source{Client: Client, Path: path, Database: true}
	want, wantState, _ := poll(t, a, path, nil)
	if len(want) != 1+3*n { // the session; per message its usage, its tool call's action and message
		t.Fatalf("Poll: %d events, want %d", len(want), 1+3*n)
	}

	pr, _ := a.NewParser(src, nil)
	p := pr.(*Parser)
	const max = 7
	var got []event.Event
	var batches int
	var linesAtFirst int64 = -1
	err := p.PollEach(context.Background(), max, func(evs []event.Event) error {
		if len(evs) == 0 || len(evs) > max {
			t.Errorf("a batch of %d events; want 1 to %d", len(evs), max)
		}
		if batches++; batches == 1 {
			linesAtFirst = p.stats.Lines
		}
		got = append(got, evs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if batches != (len(want)+max-1)/max || !slices.EqualFunc(got, want, func(a, b event.Event) bool { return a.ID == b.ID }) {
		t.Errorf("%d batches, %d events; want %d batches of Poll's %d events in its order", batches, len(got), (len(want)+max-1)/max, len(want))
	}
	if linesAtFirst < 0 || linesAtFirst >= 2*n {
		t.Errorf("the first batch went after %d of the %d rows were read; want before the last", linesAtFirst, 2*n)
	}
	if !bytes.Equal(p.State(), wantState) || p.Stats().Events != int64(len(want)) || p.Stats().Lines != 2*n {
		t.Errorf("state %s, stats %+v; want Poll's state %s, %d events, %d rows", p.State(), p.Stats(), wantState, len(want), 2*n)
	}

	// A failing emit (the bus refused a batch) ends the pass and moves nothing.
	pr, _ = a.NewParser(src, nil)
	p = pr.(*Parser)
	before := p.State()
	boom := errors.New("boom")
	sent := 0
	err = p.PollEach(context.Background(), max, func(evs []event.Event) error {
		if sent += len(evs); sent > 2*max {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !bytes.Equal(p.State(), before) || p.Stats().Lines != 0 {
		t.Fatalf("emit failed: %v, state %s, stats %+v; want boom, the state as it was, nothing counted", err, p.State(), p.Stats())
	}
	got = nil
	if err := p.PollEach(context.Background(), max, func(evs []event.Event) error { got = append(got, evs...); return nil }); err != nil || len(got) != len(want) {
		t.Errorf("the next pass: %d events, %v; want all %d again", len(got), err, len(want))
	}
}
