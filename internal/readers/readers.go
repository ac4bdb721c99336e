// Package readers lists the transcript adapters observer-watch and `observerctl scan` use, each on
// its default roots.
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
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/aider"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/cline"
	"github.com/observerhq/observer/pkg/transcript/codex"
	"github.com/observerhq/observer/pkg/transcript/copilot"
	"github.com/observerhq/observer/pkg/transcript/crush"
	"github.com/observerhq/observer/pkg/transcript/cursor"
	"github.com/observerhq/observer/pkg/transcript/gemini"
	"github.com/observerhq/observer/pkg/transcript/goose"
	"github.com/observerhq/observer/pkg/transcript/openclaw"
	"github.com/observerhq/observer/pkg/transcript/opencode"
	"github.com/observerhq/observer/pkg/transcript/pi"
)

// All returns every adapter on its default roots.
func All() []transcript.Adapter {
	return []transcript.Adapter{claudecode.New(claudecode.DefaultRoots()), codex.New(codex.DefaultHome()),
		gemini.New(gemini.DefaultRoots()), gemini.NewQwen(gemini.DefaultQwenRoots()), pi.New(pi.DefaultRoots()),
		opencode.New(opencode.DefaultDirs()), opencode.NewKilo(opencode.DefaultKiloDirs()),
		cline.New(cline.DefaultRoots()), cline.NewVSCode(cline.ClientVSCode, cline.DefaultGlobalStorage()),
		cline.NewVSCode(cline.ClientRoo, cline.DefaultGlobalStorage()), cline.NewVSCode(cline.ClientKilo, cline.DefaultGlobalStorage()),
		crush.New(crush.DefaultDirs()), copilot.New(copilot.DefaultRoots()), copilot.NewVSCode(copilot.DefaultVSCodeUserDirs()),
		goose.New(goose.DefaultRoots()), cursor.New(cursor.DefaultDirs()), aiderAdapter(), openclaw.NewDefault()}
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

// aliases are the short names --client also accepts.
var aliases = map[string]string{"claude": claudecode.Client, "gemini": gemini.Client, "qwen": gemini.QwenClient, "roo": cline.ClientRoo,
	"copilot": copilot.ClientCLI}

// Select returns every adapter, or only the one for client (its name or its alias: claude, gemini,
// qwen, roo, copilot).
func Select(client string) ([]transcript.Adapter, error) {
	all := All()
	if client == "" {
		return all, nil
	}
	if full, ok := aliases[client]; ok {
		client = full
	}
	var names []string
	for _, a := range all {
		if a.Client() == client {
			return []transcript.Adapter{a}, nil
		}
		names = append(names, a.Client())
	}
	return nil, fmt.Errorf("no transcript reader for client %q: choose among %s", client, strings.Join(names, ", "))
}

// WithPrices makes the adapters among ads price usage with the table prices returns when each
// line is read (internal/prices.Follower.Table), and returns ads.
func WithPrices(ads []transcript.Adapter, prices func() *pricing.Table) []transcript.Adapter {
	for _, a := range ads {
		switch a := a.(type) {
		case *claudecode.Adapter:
			a.CurrentPrices = prices
		case *codex.Adapter:
			a.CurrentPrices = prices
		case *gemini.Adapter:
			a.CurrentPrices = prices
		case *pi.Adapter:
			a.CurrentPrices = prices
		case *opencode.Adapter:
			a.CurrentPrices = prices
		case *cline.Adapter:
			a.CurrentPrices = prices
		case *crush.Adapter:
			a.CurrentPrices = prices
		case *copilot.Adapter:
			a.CurrentPrices = prices
		case *goose.Adapter:
			a.CurrentPrices = prices
		case *aider.Adapter:
			a.CurrentPrices = prices
		case *cursor.Adapter:
			a.CurrentPrices = prices
		case *openclaw.Adapter:
			a.CurrentPrices = prices
		}
	}
	return ads
}

// Roots lists the directories the adapters read, for watching.
func Roots() []string {
	roots := append(claudecode.DefaultRoots(), codex.DefaultHome()+"/sessions", codex.DefaultHome()+"/archived_sessions")
	roots = append(roots, gemini.New(gemini.DefaultRoots()).WatchDirs()...)
	roots = append(roots, gemini.NewQwen(gemini.DefaultQwenRoots()).WatchDirs()...)
	roots = append(roots, opencode.DefaultDirs()...)
	roots = append(roots, opencode.DefaultKiloDirs()...)
	roots = append(roots, cline.New(cline.DefaultRoots()).WatchDirs()...)
	for _, a := range cline.VSCodeAdapters() {
		roots = append(roots, a.WatchDirs()...)
	}
	roots = append(roots, crush.New(crush.DefaultDirs()).WatchDirs()...)
	roots = append(roots, copilot.New(copilot.DefaultRoots()).WatchDirs()...)
	roots = append(roots, copilot.NewVSCode(copilot.DefaultVSCodeUserDirs()).WatchDirs()...)
	roots = append(roots, goose.New(goose.DefaultRoots()).WatchDirs()...)
	roots = append(roots, cursor.New(cursor.DefaultDirs()).WatchDirs()...)
	roots = append(roots, aiderAdapter().WatchDirs()...)
	roots = append(roots, openclaw.NewDefault().WatchDirs()...)
	return append(roots, pi.New(pi.DefaultRoots()).WatchDirs()...)
}
