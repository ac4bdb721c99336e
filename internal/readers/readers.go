// Package readers lists the transcript adapters observer-watch and `observerctl scan` use, each on
// its default roots.
package readers

import (
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// All returns every adapter on its default roots.
func All() []transcript.Adapter {
	return []transcript.Adapter{claudecode.New(claudecode.DefaultRoots()), codex.New(codex.DefaultHome())}
}

// Select returns every adapter, or only the one for client.
func Select(client string) ([]transcript.Adapter, error) {
	all := All()
	if client == "" {
		return all, nil
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

// WithPrices makes the Claude Code and Codex adapters among ads price usage with the table prices
// returns when each line is read (internal/prices.Follower.Table), and returns ads.
func WithPrices(ads []transcript.Adapter, prices func() *pricing.Table) []transcript.Adapter {
	for _, a := range ads {
		switch a := a.(type) {
		case *claudecode.Adapter:
			a.CurrentPrices = prices
		case *codex.Adapter:
			a.CurrentPrices = prices
		}
	}
	return ads
}

// Roots lists the directories the adapters read, for watching.
func Roots() []string {
	return append(claudecode.DefaultRoots(), codex.DefaultHome()+"/sessions", codex.DefaultHome()+"/archived_sessions")
}
