// Package readers lists the transcript adapters observer-watch and `observerctl scan` use, each on
// its default roots.
package readers

import (
	"fmt"
	"strings"

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

// Roots lists the directories the adapters read, for watching.
func Roots() []string {
	return append(claudecode.DefaultRoots(), codex.DefaultHome()+"/sessions", codex.DefaultHome()+"/archived_sessions")
}
