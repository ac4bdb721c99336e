package bus

import (
	"testing"
	"time"
)

// A report that says the same as the last one sent goes out every QuietBeats intervals; one that
// says something new, or is asked for at once, goes out when it is made.
func TestBeats_HoldBackWhatWasSaidAlready(t *testing.T) {
	idle := Health{Component: "observer-watch", OK: true, Detail: "685 files", Events: 7}
	busy := idle
	busy.Events = 8
	degraded := busy
	degraded.Degraded = []string{"disk: 3 MB free"}
	var b beats
	steps := []struct {
		h         Health
		signalled bool
		want      bool
	}{
		{idle, false, true},      // the first
		{idle, false, false},     // the same, one interval later
		{idle, false, true},      // the same, QuietBeats intervals later
		{idle, false, false},     //
		{busy, false, true},      // a new figure
		{degraded, false, true},  // a new problem
		{degraded, false, false}, //
		{degraded, true, true},   // asked for at once (a catch-up done)
		{degraded, false, false}, //
		{degraded, false, true},  //
	}
	if QuietBeats != 2 {
		t.Fatalf("QuietBeats = %d: the steps below are written for 2", QuietBeats)
	}
	for i, s := range steps {
		h := s.h
		h.Time = time.Unix(int64(i), 0) // when a report was made does not make it new
		h.PID = 100 + i
		if got := b.due(h, s.signalled); got != s.want {
			t.Errorf("step %d (%+v, signalled %v): due = %v, want %v", i, s.h, s.signalled, got, s.want)
		}
	}
}
