// Command observer-watch follows Claude Code and Codex transcripts and publishes their events.
// See package watchcli.
package main

import (
	"context"
	"os"

	"github.com/observerhq/observer/internal/watchcli"
)

var version = "dev"

func main() {
	watchcli.Version = version
	os.Exit(watchcli.Run(context.Background(), os.Args, os.Stdout, os.Stderr))
}
