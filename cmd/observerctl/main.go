// Command observerctl runs observer (the supervisor, the bus, the writer) and queries it.
package main

import (
	"context"
	"os"

	"github.com/observerhq/observer/internal/cli"
)

var version = "dev"

func main() {
	cli.Version = version
	stop := cli.StartProfiles(os.Stderr) // OBSERVER_CPUPROFILE, OBSERVER_MEMPROFILE; off by default
	code := cli.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
