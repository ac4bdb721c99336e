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
	os.Exit(cli.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
