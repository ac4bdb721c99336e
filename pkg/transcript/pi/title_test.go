package pi

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

func titles(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Session != nil && e.Session.Title != "" {
			out = append(out, e)
		}
	}
	return out
}

// A session_info entry names the session (/name, the RPC set_session_name, a rename in the
// session selector): the user's title, at the entry's time. An empty name (pi's way to clear it)
// yields nothing. The real pi 0.73.1 wrote the RPC fixture's "rpc test"; its /fork copies the
// entry, and the fork's session gets the name too, under its own id.
func TestParser_SessionName(t *testing.T) {
	const path = "/s/2026-01-02T10-00-00-000Z_0b1c2d3e-0000-4000-8000-0000000000aa.jsonl"
	evs, _ := parseLines(t, New(nil), path,
		`{"type":"session","version":3,"id":"0b1c2d3e-0000-4000-8000-0000000000aa","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w"}`,
		`{"type":"session_info","id":"a1","parentId":null,"timestamp":"2026-01-02T10:05:00.000Z","name":"  Refactor   auth module "}`,
		`{"type":"session_info","id":"a2","parentId":"a1","timestamp":"2026-01-02T10:06:00.000Z","name":""}`,
	)
	ts := titles(evs)
	if len(ts) != 1 {
		t.Fatalf("titles %+v, want one", ts)
	}
	e := ts[0]
	if e.Session.Title != "Refactor auth module" || !e.Session.TitleByUser || e.Session.State != "" ||
		e.SessionID != "0b1c2d3e-0000-4000-8000-0000000000aa" || !e.Time.Equal(time.Date(2026, 1, 2, 10, 5, 0, 0, time.UTC)) {
		t.Errorf("title event %+v %+v", e, e.Session)
	}

	rpc, _ := parseFile(t, New(nil), srcOf(fixRPC))
	fork, _ := parseFile(t, New(nil), srcOf(fixFork))
	a, b := titles(rpc), titles(fork)
	if len(a) != 1 || len(b) != 1 || a[0].Session.Title != "rpc test" || b[0].Session.Title != "rpc test" ||
		a[0].ID == b[0].ID || a[0].SessionID == b[0].SessionID || !a[0].Time.Equal(b[0].Time) {
		t.Errorf("fixture titles %+v / %+v", a, b)
	}
}
