// Command observer-proxy is the reverse proxy in front of the model APIs that records the exact
// usage of every turn. See package proxy.
package main

import (
	"context"
	"os"

	"github.com/observerhq/observer/internal/proxycli"
)

var version = "dev"

func main() {
	proxycli.Version = version
	os.Exit(proxycli.Run(context.Background(), os.Args, os.Stdout, os.Stderr))
}
