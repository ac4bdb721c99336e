package readers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Aider keeps its history in the repository it ran in: observer looks in every project its store
// knows (a session of any client there) and in $OBSERVER_AIDER_DIRS, and watches those folders.
func TestReaders_AiderInKnownProjects(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AIDER_CHAT_HISTORY_FILE", "")
	known, listed := filepath.Join(home, "known"), filepath.Join(home, "listed")
	for _, d := range []string{known, listed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		history, err := os.ReadFile("../../pkg/transcript/aider/testdata/repo/.aider.chat.history.md")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, ".aider.chat.history.md"), history, 0o644)
	}
	dbPath := filepath.Join(home, "observer.db")
	st, err := store.OpenWriter(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ev := event.New(event.KindAction, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = "a1", "claude-code", "s1", known, time.Now()
	ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: "hello"}
	if _, err := st.WriteBatch(context.Background(), []event.Event{ev}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Setenv(EnvAiderDirs, listed)
	UseStore(dbPath)
	t.Cleanup(func() { UseStore("") })
	storePath.Lock()
	storePath.knownAt = time.Time{}
	storePath.Unlock()

	ads, err := Select("aider")
	if err != nil || len(ads) != 1 {
		t.Fatalf("Select(aider) = %v, %v", ads, err)
	}
	srcs, err := ads[0].Discover()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, s := range srcs {
		dirs = append(dirs, filepath.Dir(s.Path))
	}
	slices.Sort(dirs)
	if !slices.Equal(dirs, []string{known, listed}) {
		t.Errorf("aider histories found in %v, want %s and %s", dirs, known, listed)
	}
	roots := Roots()
	if !slices.Contains(roots, known) || !slices.Contains(roots, listed) {
		t.Errorf("watched roots %v lack the projects", roots)
	}
}
