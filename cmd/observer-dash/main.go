// Command observer-dash serves the dashboard. See package dash.
package main

import (
	"context"
	"os"

	"github.com/observerhq/observer/internal/dash"
)

var version = "dev"

func main() {
	dash.Version = version
	os.Exit(dash.Run(context.Background(), os.Args, os.Stdout, os.Stderr))
}
