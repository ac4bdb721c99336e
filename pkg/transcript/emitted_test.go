package transcript

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ file, cwd, root, want string }{
		{"/work/app/src/a.go", "/work/app", "/work/app", "src/a.go"},
		{"src/a.go", "/work/app/cmd", "/work/app", "cmd/src/a.go"},
		{"/etc/hosts", "/work/app", "/work/app", "/etc/hosts"},
		{"/work/app/../other/x", "/work/app", "/work/app", "/work/other/x"},
		{"/work/app/..hidden", "/work/app", "/work/app", "..hidden"},
		{"a/../b.txt", "", "/work/app", "b.txt"},
		{"  ", "/work/app", "/work/app", ""},
	} {
		if got := RelPath(c.file, c.cwd, c.root); got != c.want {
			t.Errorf("RelPath(%q, %q, %q) = %q, want %q", c.file, c.cwd, c.root, got, c.want)
		}
	}
}

// Emitted keeps what is new or changed, and forgets the oldest past its bound.
func TestEmitted_Keep(t *testing.T) {
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ev := func(id, text string) event.Event {
		return event.Event{ID: id, Kind: event.KindMessage, Time: at, Message: &event.Message{Role: "user", Text: text}}
	}
	var seen []string
	var m Emitted
	if got := m.Keep([]event.Event{ev("a", "x"), ev("b", "y")}, &seen, 3); len(got) != 2 {
		t.Fatalf("first read kept %d of 2", len(got))
	}
	got := m.Keep([]event.Event{ev("a", "x"), ev("b", "y2"), ev("c", "z")}, &seen, 3)
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" {
		t.Fatalf("second read kept %v, want the changed b and the new c", got)
	}
	if len(seen) != 3 {
		t.Fatalf("%d fingerprints kept, want the bound 3", len(seen))
	}
	// A new parser on the same State knows the same.
	var again Emitted
	if got := again.Keep([]event.Event{ev("c", "z")}, &seen, 3); len(got) != 0 {
		t.Errorf("a parser on the kept State emitted %v again", got)
	}
	// The oldest (a's) was forgotten past the bound: a is emitted again.
	if got := again.Keep([]event.Event{ev("a", "x")}, &seen, 3); len(got) != 1 {
		t.Errorf("the forgotten a kept %d, want 1", len(got))
	}
}
