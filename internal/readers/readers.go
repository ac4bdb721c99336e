// Package readers lists the transcript adapters observer-watch and `observerctl scan` use, each on
// its default roots.
package readers

import (
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/cline"
	"github.com/observerhq/observer/pkg/transcript/codex"
	"github.com/observerhq/observer/pkg/transcript/crush"
	"github.com/observerhq/observer/pkg/transcript/gemini"
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
		crush.New(crush.DefaultDirs())}
}

// aliases are the short names --client also accepts.
var aliases = map[string]string{"claude": claudecode.Client, "gemini": gemini.Client, "qwen": gemini.QwenClient, "roo": cline.ClientRoo}

// Select returns every adapter, or only the one for client (its name or its alias: claude, gemini,
// qwen, roo).
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
	return append(roots, pi.New(pi.DefaultRoots()).WatchDirs()...)
}
