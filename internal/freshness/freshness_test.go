package freshness

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a project directory and a tracker whose clock stands still.
type fixture struct {
	tb      testing.TB
	project string
	tr      *Tracker
	n       int
}

func newFixture(tb testing.TB) *fixture {
	tr := New()
	tr.Now = func() time.Time { return now }
	return &fixture{tb: tb, project: tb.TempDir(), tr: tr}
}

func (f *fixture) write(rel, content string) {
	f.tb.Helper()
	p := filepath.Join(f.project, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.tb.Fatal(err)
	}
}

// result is a tool result of session s1, at the clock's time unless told.
func (f *fixture) result(typ event.ActionType, target string, ok bool, errText string) event.Event {
	f.n++
	return event.Event{ID: event.ID("t", string(rune('a'+f.n))), Kind: event.KindAction, Time: now.Add(-time.Second),
		Client: "claude-code", SessionID: "s1", Project: f.project, V: event.SchemaVersion,
		Action: &event.Action{Type: typ, Target: target, Success: &ok, Error: errText}}
}

// do annotates the events, commits, and returns their actions.
func (f *fixture) do(evs ...event.Event) []*event.Action {
	f.tb.Helper()
	f.tr.Annotate(evs)()
	out := make([]*event.Action, len(evs))
	for i := range evs {
		out[i] = evs[i].Action
	}
	return out
}

// read runs one successful read of rel and returns its class.
func (f *fixture) read(rel string) *event.Action {
	f.tb.Helper()
	return f.do(f.result(event.ActionReadFile, rel, true, ""))[0]
}

func (f *fixture) command() { f.do(f.result(event.ActionRunCommand, "sed -i s/a/b/ x", true, "")) }

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func wantClass(tb testing.TB, what string, a *event.Action, class, content string) {
	tb.Helper()
	if a.Freshness != class {
		tb.Errorf("%s: freshness %q, want %q", what, a.Freshness, class)
	}
	wantHash := ""
	if class != event.FreshnessMissing {
		wantHash = sum(content)
	}
	if a.ContentHash != wantHash || a.ContentSize != int64(len(content)) && class != event.FreshnessMissing {
		tb.Errorf("%s: hash %s size %d, want %s size %d", what, a.ContentHash, a.ContentSize, wantHash, len(content))
	}
}

func TestAnnotate_FreshThenChangedElsewhere(t *testing.T) {
	f := newFixture(t)
	f.write("src/a.go", "v1")
	wantClass(t, "first read", f.read("src/a.go"), event.FreshnessFresh, "v1")
	wantClass(t, "unchanged re-read", f.read("src/a.go"), event.FreshnessFresh, "v1")
	f.write("src/a.go", "v2 by the user")
	wantClass(t, "changed with no edit or command", f.read("src/a.go"), event.FreshnessChangedElsewhere, "v2 by the user")
	wantClass(t, "then unchanged", f.read("src/a.go"), event.FreshnessFresh, "v2 by the user")
	// An absolute target names the file itself.
	wantClass(t, "absolute target", f.read(filepath.Join(f.project, "src/a.go")), event.FreshnessFresh, "v2 by the user")
}

func TestAnnotate_StaleAfterCommands(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "before")
	wantClass(t, "first read", f.read("a.txt"), event.FreshnessFresh, "before")
	f.command() // say, a formatter
	f.write("a.txt", "after the command")
	wantClass(t, "changed after a command", f.read("a.txt"), event.FreshnessStale, "after the command")
	// A command that changed nothing leaves the next read fresh.
	f.command()
	wantClass(t, "command, no change", f.read("a.txt"), event.FreshnessFresh, "after the command")
}

func TestAnnotate_ChangedByAgent(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "v1")
	wantClass(t, "first read", f.read("a.go"), event.FreshnessFresh, "v1")
	f.write("a.go", "v2 by the Edit tool")
	edit := f.do(f.result(event.ActionEditFile, "a.go", true, ""))[0]
	if edit.ContentHash != sum("v2 by the Edit tool") || edit.Freshness != "" {
		t.Errorf("edit: hash %s freshness %q, want the edited content's hash and no class", edit.ContentHash, edit.Freshness)
	}
	wantClass(t, "read after own edit", f.read("a.go"), event.FreshnessChangedByAgent, "v2 by the Edit tool")
	wantClass(t, "read again", f.read("a.go"), event.FreshnessFresh, "v2 by the Edit tool")

	// Own edit, then a command rewrites the file: stale, not changed_by_agent.
	f.write("a.go", "v3 by the Edit tool")
	f.do(f.result(event.ActionEditFile, "a.go", true, ""))
	f.command()
	f.write("a.go", "v4 by gofmt")
	wantClass(t, "edit then command", f.read("a.go"), event.FreshnessStale, "v4 by gofmt")

	// Own edit, then someone else changes it: changed_elsewhere.
	f.write("a.go", "v5 by the Write tool")
	f.do(f.result(event.ActionWriteFile, "a.go", true, ""))
	f.write("a.go", "v6 by the user")
	wantClass(t, "write then the user", f.read("a.go"), event.FreshnessChangedElsewhere, "v6 by the user")

	// A failed edit is not the agent's content.
	f.write("a.go", "v7")
	f.do(f.result(event.ActionEditFile, "a.go", false, "old_string not found"))
	wantClass(t, "after a failed edit", f.read("a.go"), event.FreshnessChangedElsewhere, "v7")

	// A file the agent wrote and never read: its first read is fresh.
	f.write("new.go", "created")
	f.do(f.result(event.ActionWriteFile, "new.go", true, ""))
	wantClass(t, "first read of an own write", f.read("new.go"), event.FreshnessFresh, "created")
}

func TestAnnotate_Missing(t *testing.T) {
	f := newFixture(t)
	// The read failed: the file did not exist.
	a := f.do(f.result(event.ActionReadFile, "gone.go", false, "File does not exist."))[0]
	wantClass(t, "failed read, not found", a, event.FreshnessMissing, "")
	// The read succeeded but the file is gone by the time the result is seen.
	wantClass(t, "deleted since", f.read("gone.go"), event.FreshnessMissing, "")
	// The agent creates it, and reads it back: it changed since the read, as its write left it.
	f.write("gone.go", "now here")
	f.do(f.result(event.ActionWriteFile, "gone.go", true, ""))
	wantClass(t, "after own write", f.read("gone.go"), event.FreshnessChangedByAgent, "now here")
}

func TestAnnotate_NotClassified(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "v1")
	old := f.result(event.ActionReadFile, "a.go", true, "")
	old.Time = now.Add(-LiveWithin - time.Second)
	call := f.result(event.ActionReadFile, "a.go", true, "")
	call.Action.Success = nil
	denied := f.result(event.ActionReadFile, "a.go", false, "EACCES: permission denied")
	noProject := f.result(event.ActionReadFile, "a.go", true, "")
	noProject.Project = ""
	dir := f.result(event.ActionReadFile, ".", true, "")
	grep := f.result(event.ActionSearchText, "a.go", true, "")
	acts := f.do(old, call, denied, noProject, dir, grep)
	for i, a := range acts {
		if a.Freshness != "" || a.ContentHash != "" {
			t.Errorf("action %d (%s %q): freshness %q hash %q, want none", i, a.Type, a.Target, a.Freshness, a.ContentHash)
		}
	}
	// None of them counted as a read: the next one is the first.
	wantClass(t, "first live read", f.read("a.go"), event.FreshnessFresh, "v1")
}

// What Annotate learns counts only once committed.
func TestAnnotate_Uncommitted(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "v1")
	f.read("a.go")
	f.write("a.go", "v2")
	ev := f.result(event.ActionReadFile, "a.go", true, "")
	f.tr.Annotate([]event.Event{ev}) // publication failed: no commit
	wantClass(t, "first try", ev.Action, event.FreshnessChangedElsewhere, "v2")
	again := f.result(event.ActionReadFile, "a.go", true, "")
	f.do(again)
	wantClass(t, "retry", again.Action, event.FreshnessChangedElsewhere, "v2")
}

// Sessions do not share what they saw.
func TestAnnotate_PerSession(t *testing.T) {
	f := newFixture(t)
	f.write("a.go", "v1")
	f.read("a.go")
	f.write("a.go", "v2")
	other := f.result(event.ActionReadFile, "a.go", true, "")
	other.SessionID = "s2"
	wantClass(t, "another session's first read", f.do(other)[0], event.FreshnessFresh, "v2")
}

func TestHashFile_Cap(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o600)
	if h, n, err := HashFile(small); err != nil || h != sum("hello") || n != 5 {
		t.Errorf("HashFile(small) = %s, %d, %v", h, n, err)
	}
	// A sparse file past the cap: its hash changes with its size and its modification time,
	// though the first MaxHashBytes do not change.
	big := filepath.Join(dir, "big")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	fh.Truncate(MaxHashBytes + 10)
	fh.Close()
	h1, n1, err := HashFile(big)
	if err != nil || n1 != MaxHashBytes+10 {
		t.Fatalf("HashFile(big) = %s, %d, %v", h1, n1, err)
	}
	os.Truncate(big, MaxHashBytes+20)
	h2, _, _ := HashFile(big)
	os.Chtimes(big, now, now)
	h3, _, _ := HashFile(big)
	if h1 == h2 || h2 == h3 {
		t.Errorf("hashes past the cap did not follow size and time: %s %s %s", h1, h2, h3)
	}
	if _, _, err := HashFile(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("HashFile(missing) error %v, want not exist", err)
	}
}
