package dash

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
)

// TestChanges_TickAfterTheCommit: /api/changes says nothing when an event is published, and sends a
// "changed" tick naming its kind, client, project and session once the writer has stored it; the
// store then holds the event. Its hello carries the number of the last tick.
func TestChanges_TickAfterTheCommit(t *testing.T) {
	pub, srv, st := liveSuite(t)
	r := openSSE(t, srv.URL+"/api/changes")
	hello := r.next(t, 2*time.Second)
	if hello.name != "hello" || !strings.Contains(hello.data, `"changes":0`) {
		t.Fatalf("first event %+v, want hello at tick 0", hello)
	}
	following(t, srv, 1)
	ev := liveAction("s-changes", "go test ./...", time.Now())
	publish(t, pub, ev)
	got := r.next(t, 2*time.Second)
	if got.name != "changed" {
		t.Fatalf("got %+v, want a changed tick (no event on /api/changes)", got)
	}
	// The tick comes after the commit: the row is there.
	if n := count(t, st, "SELECT count(*) FROM actions WHERE session_id = 's-changes'"); n != 1 {
		t.Fatalf("the tick came before the commit: %d rows", n)
	}
	var tick changeTick
	if err := json.Unmarshal([]byte(got.data), &tick); err != nil {
		t.Fatal(err)
	}
	if tick.Seq != 1 || tick.Events != 1 || strings.Join(tick.Kinds, ",") != "action" || strings.Join(tick.Clients, ",") != "claude-code" ||
		strings.Join(tick.Projects, ",") != liveProject || strings.Join(tick.Sessions, ",") != "s-changes" {
		t.Fatalf("tick %+v", tick)
	}
	// Every API answer says which tick its data includes.
	resp, err := http.Get(srv.URL + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get("X-Observer-Changes"); h != "1" {
		t.Errorf("X-Observer-Changes %q after the first tick, want 1", h)
	}
	// The Live tab's stream is not told about ticks, and /api/changes takes no parameter.
	live := openSSE(t, srv.URL+"/api/live")
	if e := live.next(t, time.Second); e.name != "hello" || !strings.Contains(e.data, `"changes":1`) {
		t.Fatalf("live hello %+v", e)
	}
	if code := get(t, srv.URL, "/api/changes?client=codex", nil); code != 400 {
		t.Errorf("/api/changes?client=codex: %d, want 400", code)
	}
}

// TestChanges_Coalesced: notes arriving together go out as one tick, the next one no sooner than
// changesEvery later, with the union of what they changed.
func TestChanges_Coalesced(t *testing.T) {
	h := NewHub()
	s := &liveSub{ch: make(chan []byte, liveBuffer), changes: true}
	h.add(s)
	h.Changed(bus.StoredNote{Events: 1, Kinds: []string{"action"}, Clients: []string{"codex"}})
	first := time.Now()
	for i := 0; i < 50; i++ {
		h.Changed(bus.StoredNote{Events: 1, Kinds: []string{"token_usage"}, Clients: []string{"claude-code"}})
	}
	h.Changed(bus.StoredNote{Analysis: true})
	var ticks []changeTick
	for deadline := time.After(30 * time.Second); len(ticks) < 2; {
		select {
		case data := <-s.ch:
			var tk changeTick
			json.Unmarshal(data, &tk)
			ticks = append(ticks, tk)
			if len(ticks) == 2 && time.Since(first) < changesEvery-10*time.Millisecond {
				t.Errorf("second tick after %v, want at least %v", time.Since(first), changesEvery)
			}
		case <-deadline:
			t.Fatalf("ticks %+v, want 2", ticks)
		}
	}
	a, b := ticks[0], ticks[1]
	if a.Seq != 1 || a.Events != 1 || b.Seq != 2 || b.Events != 50 || !b.Analysis ||
		strings.Join(b.Kinds, ",") != "token_usage" || strings.Join(b.Clients, ",") != "claude-code" {
		t.Fatalf("ticks %+v, %+v", a, b)
	}
	select {
	case data := <-s.ch:
		t.Fatalf("a third tick: %s", data)
	case <-time.After(2 * changesEvery):
	}
}
