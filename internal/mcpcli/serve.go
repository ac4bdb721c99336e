package mcpcli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/mcpserver"
	"github.com/observerhq/observer/pkg/project"
)

// serve runs the stdio MCP server (package mcpserver) on the process's standard input and output
// until the client closes standard input or the process is signalled. The configuration comes from
// --home / OBSERVER_HOME as for the daemons, and logs go to standard error as JSON. The default
// project is that of CLAUDE_PROJECT_DIR (Claude Code sets it for the servers it spawns), else of
// the working directory, which is where the client spawned the server; the default session is the
// client's own when its environment says it (clientSession). The store is opened read-only, and
// only once it exists: before the writer has created it, the tools answer "no data yet" instead of
// the server failing to start.
func serve(c *cli.Context) error {
	ctx, stop, cfg, logger, err := daemon.Start(c)
	if err != nil {
		return err
	}
	defer stop()
	dir := os.Getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
	}
	opts := mcpserver.Options{
		StorePath: cfg.StorePath(),
		Home:      cfg.Home,
		Project:   project.Root(dir),
		Session:   clientSession(),
		Logger:    logger,
		Version:   Version,
	}
	srv := mcpserver.New(opts)
	defer srv.Close()
	logger.Info("observer-mcp serving", "store", opts.StorePath, "project", opts.Project, "session", opts.Session)
	err = srv.Serve(ctx, c.App.Reader, c.App.Writer)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// clientSession returns the session of the client that spawned the server, from the variables
// observer-mcp wrap reads too: Claude Code sets CLAUDE_CODE_SESSION_ID; the Codex names are read
// when present.
func clientSession() string {
	for _, v := range []string{"CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return ""
}
