package opencode

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// The session row's title is the session's title: not the placeholder the client gives at
// creation, not a subagent session's. The client sets the generated title (and a rename) in place
// without moving time_updated, after the reader has read the row: a later pass reports the new
// title, once, and nothing else again; a title replacing a reported one is the user's. A deleted
// session leaves the state.
func TestPoll_Titles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := newDB(t, path)
	a := New(nil)
	execT(t, db, insSession, "ses_root", nil, 100, 150)
	execT(t, db, insSession, "ses_child", "ses_root", 200, 200)
	execT(t, db, "UPDATE session SET title = 'Reading files (@explore subagent)' WHERE id = 'ses_child'")
	execT(t, db, insMessage, "msg_a", "ses_root", 120, 150, assistant(10, 4))
	evs, state, _ := poll(t, a, path, nil)
	if f := sumUp(evs); f.Sessions != 1 || f.Usages != 1 || len(f.Titles) != 0 {
		t.Fatalf("first pass %+v: want the session and the usage, no title", f)
	}

	setTitle := func(title string) {
		t.Helper()
		execT(t, db, "UPDATE session SET title = ? WHERE id = 'ses_root'", title)
	}
	titleOf := func(evs []event.Event) event.Event {
		t.Helper()
		if len(evs) != 1 || evs[0].Kind != event.KindSession || evs[0].Session.State != "" {
			t.Fatalf("%d events %+v, want one title event", len(evs), evs)
		}
		e := evs[0]
		if e.SessionID != "ses_root" || !e.Time.Equal(time.UnixMilli(150)) || e.Session.TranscriptPath != path {
			t.Errorf("title event %+v: want ses_root at its time_updated, the database as transcript", e)
		}
		return e
	}

	setTitle("  Fixing   the login\tbug ")
	evs, state, _ = poll(t, a, path, state)
	e := titleOf(evs)
	if e.Session.Title != "Fixing the login bug" || e.Session.TitleByUser || e.ID != event.ID(Client, "session", "ses_root", "title", "150", "Fixing the login bug") {
		t.Errorf("generated title %+v (%s)", e.Session, e.ID)
	}
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Fatalf("pass with no change: %d events", len(evs))
	}

	setTitle("Auth refactor") // the user renames it
	evs, state, _ = poll(t, a, path, state)
	if e := titleOf(evs); e.Session.Title != "Auth refactor" || !e.Session.TitleByUser {
		t.Errorf("renamed title %+v", e.Session)
	}
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Fatalf("pass with no change: %d events", len(evs))
	}

	execT(t, db, "DELETE FROM session WHERE id = 'ses_root'")
	if _, state, _ = poll(t, a, path, state); len(state) == 0 || strings.Contains(string(state), `"titles"`) {
		t.Errorf("state after the session's deletion: %s", state)
	}
}

// TestDefaultTitle checks the placeholder against the client's rule.
func TestDefaultTitle(t *testing.T) {
	for s, want := range map[string]bool{
		"New session - 2026-12-01T19:28:53.778Z":   true,
		"Child session - 2026-12-01T19:28:53.778Z": true,
		"New session - 2026-12-01":                 false,
		"New session about logins":                 false,
		"Greeting":                                 false,
	} {
		if got := defaultTitle.MatchString(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
