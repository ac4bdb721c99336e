package codex

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// A thread_name_updated event_msg (the name /rename, the app server's thread/name/set or Codex's
// own automatic title gave the thread) is the session's title, at the line's time; a fork's copy
// of its parent's names the parent's thread and is not the fork's; a cleared name (null) yields
// nothing.
func TestParser_ThreadName(t *testing.T) {
	const (
		parent = "019b7f94-51b4-7593-922e-ba12b5b73b52"
		fork   = "019b7f95-0000-7000-0000-000000000002"
	)
	path := "/c/sessions/2026/01/02/rollout-2026-01-02T19-00-00-" + fork + ".jsonl"
	p, err := (&Adapter{}).newParser(srcOf(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := run(t, p, [][]byte{
		[]byte(`{"timestamp":"2026-01-02T19:00:00.000Z","type":"session_meta","payload":{"id":"` + fork + `","forked_from_id":"` + parent + `","timestamp":"2026-01-02T19:00:00.000Z","cwd":"/w"}}`),
		// copied from the parent, re-stamped with the fork's time
		[]byte(`{"timestamp":"2026-01-02T19:00:00.000Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_id":"` + parent + `","thread_name":"Parent work"}}`),
		[]byte(`{"timestamp":"2026-01-02T19:05:00.000Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_id":"` + fork + `","thread_name":"  Try the   other fix "}}`),
		[]byte(`{"timestamp":"2026-01-02T19:06:00.000Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_id":"` + fork + `","thread_name":null}}`),
	})
	var titles []event.Event
	for _, e := range evs {
		if e.Session != nil && e.Session.Title != "" {
			titles = append(titles, e)
		}
	}
	if len(titles) != 1 {
		t.Fatalf("titles %+v, want one", titles)
	}
	e := titles[0]
	if e.Session.Title != "Try the other fix" || e.Session.TitleByUser || e.Session.State != "" || e.SessionID != fork ||
		!e.Time.Equal(time.Date(2026, 1, 2, 19, 5, 0, 0, time.UTC)) || e.Session.TranscriptPath != path {
		t.Errorf("title event %+v %+v", e, e.Session)
	}
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
}
