// Package mcpcli is the observer-mcp command. Without a subcommand it serves observer's read-only
// query tools over stdio (package mcpserver); `observer-mcp wrap -- CMD [ARGS...]` runs CMD as a
// stdio MCP server behind a transparent proxy that records every tools/call (package mcpwrap).
//
// Standard output carries the MCP protocol and nothing else: every log line goes to standard error.
package mcpcli

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
)

// Version is set by main.
var Version = "dev"

// Run runs observer-mcp and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:    "observer-mcp",
		Usage:   "observer's MCP server: query tools for the agents, and a transparent MCP proxy",
		Version: Version,
		Description: `Without a command, serves observer's read-only tools over stdio for the AI client that
spawned it (register it with ` + "`observerctl init --mcp`" + `). It reads the store only, so it works while the rest
of the suite is down. Logs go to standard error only.`,
		Flags:    []cli.Flag{daemon.HomeFlag},
		Reader:   stdin,
		Action:   serve,
		Commands: []*cli.Command{wrapCommand()},
	}
	return daemon.Run(ctx, app, args, stdout, stderr)
}
