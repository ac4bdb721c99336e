// Package readers opens the transcript adapters observer-watch and `observerctl scan` use, each on
// its default roots: one per client of the registry (pkg/client), opened by its line in
// registry.go.
package readers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/aider"
)

// All returns every client's adapter on its default roots, in registry order (pkg/client).
func All() []transcript.Adapter {
	var out []transcript.Adapter
	for _, c := range client.All() {
		if open, ok := registry[c.Name]; ok {
			out = append(out, open())
		}
	}
	return out
}

// EnvAiderDirs lists directories (separated by the OS's path list separator, : or ;) whose
// .aider.chat.history.md observer reads besides the projects it already knows.
const EnvAiderDirs = "OBSERVER_AIDER_DIRS"

var storePath struct {
	sync.Mutex
	path    string
	known   []string  // the last answer of knownProjects
	knownAt time.Time // when it was read
}

// UseStore names the store whose known projects are searched for Aider's chat histories (the
// commands and observer-watch call it with their configuration's store).
func UseStore(path string) {
	storePath.Lock()
	storePath.path = path
	storePath.Unlock()
}

// aiderAdapter reads .aider.chat.history.md in every project observer already knows that has one
// (the store's sessions, read at most once a minute; the watcher makes its adapters at start, so
// a project's first Aider history is found at its next start or by `observerctl scan`) and in
// $OBSERVER_AIDER_DIRS, and the file $AIDER_CHAT_HISTORY_FILE names.
func aiderAdapter() *aider.Adapter {
	var roots []string
	for _, d := range filepath.SplitList(os.Getenv(EnvAiderDirs)) {
		if d = strings.TrimSpace(d); d != "" {
			roots = append(roots, transcript.ExpandHome(d))
		}
	}
	roots = append(roots, knownProjects()...)
	a := aider.New(transcript.DedupePaths(roots))
	a.Files = aider.DefaultFiles()
	return a
}

// knownProjects lists the project directories of the sessions in the store (none when there is
// no store yet or it cannot be read: Aider's files are then found through $OBSERVER_AIDER_DIRS).
func knownProjects() []string {
	storePath.Lock()
	defer storePath.Unlock()
	path := storePath.path
	if path == "" {
		return nil
	}
	// Roots() is asked often: read the store at most once a minute.
	if time.Since(storePath.knownAt) < time.Minute {
		return storePath.known
	}
	storePath.known, storePath.knownAt = readProjects(path), time.Now()
	return storePath.known
}

func readProjects(path string) []string {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := store.OpenReader(ctx, path)
	if err != nil {
		return nil
	}
	defer st.Close()
	projects, err := query.Projects(ctx, st.DB, 5000)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range projects {
		// Only the projects Aider ran in: watching every project's folder would wake the watcher
		// at every file an agent writes there.
		if filepath.IsAbs(p) {
			if _, err := os.Stat(filepath.Join(p, aider.ChatHistoryFile)); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Select returns every adapter, or only the one for name (a client's name or one of its aliases:
// claude, gemini, qwen, roo, copilot).
func Select(name string) ([]transcript.Adapter, error) {
	all := All()
	if name == "" {
		return all, nil
	}
	name = client.Resolve(name)
	var names []string
	for _, a := range all {
		if a.Client() == name {
			return []transcript.Adapter{a}, nil
		}
		names = append(names, a.Client())
	}
	return nil, fmt.Errorf("no transcript reader for client %q: choose among %s", name, strings.Join(names, ", "))
}

// WithPrices makes the adapters among ads that price usage (transcript.Priced) price it with the
// table prices returns when each line is read (internal/prices.Follower.Table), and returns ads.
func WithPrices(ads []transcript.Adapter, prices func() *pricing.Table) []transcript.Adapter {
	for _, a := range ads {
		if p, ok := a.(transcript.Priced); ok {
			p.UsePrices(prices)
		}
	}
	return ads
}

// Roots lists the directories the adapters read, for watching (transcript.Watched).
func Roots() []string { return RootsOf(All()) }

// RootsOf lists the directories ads read, for watching (transcript.Watched).
func RootsOf(ads []transcript.Adapter) []string {
	var roots []string
	for _, a := range ads {
		if w, ok := a.(transcript.Watched); ok {
			roots = append(roots, w.WatchDirs()...)
		}
	}
	return roots
}
