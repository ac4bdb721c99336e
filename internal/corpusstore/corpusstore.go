// Package corpusstore builds, for tests, a store filled from the shared corpus of real client
// transcripts the way `observerctl scan` fills one: gen_history.py lays the corpus out as the
// clients do on disk, the Claude Code and Codex readers and the scanner read it, the session
// lifecycle adds its epochs and states, and the full-text index is built.
package corpusstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/lifecycle"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// Dir is the corpus: $OBSERVER_CORPUS, else ../shared/corpus beside the repository.
func Dir() string {
	if d := os.Getenv("OBSERVER_CORPUS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
}

// Available says why the corpus cannot be used, or "" when it can.
func Available() string {
	if _, err := os.Stat(Dir()); err != nil {
		return fmt.Sprintf("the corpus is absent at %s (set OBSERVER_CORPUS)", Dir())
	}
	return ""
}

// Build fills a new store in dir from the corpus laid out as gen_history.py's layout (small, or
// "scaled N") and returns its path.
func Build(dir string, layout ...string) (string, error) {
	if len(layout) == 0 {
		layout = []string{"small"}
	}
	home := filepath.Join(dir, "home")
	script := filepath.Join(Dir(), "..", "scripts", "gen_history.py")
	args := append([]string{script, layout[0], home}, layout[1:]...)
	if out, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gen_history.py %v: %v\n%s", layout, err, out)
	}
	ctx := context.Background()
	path := filepath.Join(dir, "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		return "", err
	}
	defer st.Close()
	cur, err := ingest.OpenCursors(filepath.Join(dir, "cursors.json"))
	if err != nil {
		return "", err
	}
	defer cur.Close()
	life := lifecycle.New(lifecycle.Config{})
	pub := publisher{st: st, life: life}
	sc := &ingest.Scanner{
		Adapters:  []transcript.Adapter{claudecode.New([]string{filepath.Join(home, ".claude", "projects")}), codex.New(filepath.Join(home, ".codex"))},
		Cursors:   cur,
		Publisher: pub,
	}
	if _, err := sc.Scan(ctx); err != nil {
		return "", err
	}
	if evs, commit := life.Tick(); len(evs) > 0 {
		if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
			return "", err
		}
		commit()
	}
	for _, index := range []func(context.Context, int) (int, error){st.IndexOutputs, st.IndexMessages} {
		for {
			n, err := index(ctx, 5000)
			if err != nil {
				return "", err
			}
			if n == 0 {
				break
			}
		}
	}
	return path, nil
}

// publisher writes a scan's batches straight into the store, with the epochs the lifecycle
// tracker derives from them, as scan's in-process writer would.
type publisher struct {
	st   *store.Store
	life *lifecycle.Tracker
}

func (p publisher) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	extra, commit := p.life.Observe(evs)
	if _, err := p.st.WriteBatch(ctx, append(evs[:len(evs):len(evs)], extra...), nil); err != nil {
		return 0, err
	}
	commit()
	return 0, nil
}
