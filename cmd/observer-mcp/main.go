// Command observer-mcp is observer's MCP server (stdio, spawned by the AI client) and, with `wrap`,
// a transparent proxy in front of another stdio MCP server. See package mcpcli.
package main

import (
	"context"
	"os"

	"github.com/observerhq/observer/internal/mcpcli"
)

var version = "dev"

func main() {
	mcpcli.Version = version
	os.Exit(mcpcli.Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
