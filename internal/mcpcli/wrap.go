package mcpcli

import (
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/mcpwrap"
	"github.com/observerhq/observer/pkg/bus"
)

func wrapCommand() *cli.Command {
	return &cli.Command{
		Name:      "wrap",
		Usage:     "run a stdio MCP server behind a transparent proxy that records its tool calls",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `Runs CMD as a stdio MCP server and relays the client's traffic to it unchanged, recording every
tools/call (tool, sizes, hashes, duration, error) as an mcp_call event, spooled to disk while the bus is
down. Adds the trace tools observer_trace_history, _stats, _search and _replay, scoped to this process.
Configuration: [mcp] in config.toml (call_timeout, raw_payloads, redact, hide, max_tools, history); the
flags below override it. Logs go to standard error only.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "hide", Usage: "hide the tool `NAME` from tools/list and refuse calls to it (repeatable; adds to [mcp] hide)"},
			&cli.IntFlag{Name: "max-tools", Usage: "list at most `N` of the server's tools (0: all; default [mcp] max_tools)"},
			&cli.DurationFlag{Name: "call-timeout", Usage: "answer a request the server has not answered after `D` with an error (default [mcp] call_timeout)"},
			&cli.BoolFlag{Name: "raw-payloads", Usage: "let the trace tools return the calls' (redacted) arguments and results (default [mcp] raw_payloads)"},
			&cli.StringFlag{Name: "name", Usage: "the server's `NAME` in the events (default: its serverInfo.name)"},
		},
		Action: wrap,
	}
}

func wrap(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.Exit("wrap needs the server's command: observer-mcp wrap -- CMD [ARGS...]", 64)
	}
	ctx, stop, cfg, logger, err := daemon.Start(c)
	if err != nil {
		return err
	}
	defer stop()
	// Standard output is the client's pipe: once the client is gone, a write must fail with EPIPE
	// (the proxy then stops) rather than kill the process before it publishes what it recorded.
	// Notify rather than Ignore, so that the server does not inherit an ignored SIGPIPE.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)

	m := cfg.MCP
	if c.IsSet("max-tools") {
		m.MaxTools = c.Int("max-tools")
	}
	timeout := m.CallTimeout.D()
	if c.IsSet("call-timeout") {
		timeout = c.Duration("call-timeout")
	}
	if c.IsSet("raw-payloads") {
		m.RawPayloads = c.Bool("raw-payloads")
	}
	var redact []*regexp.Regexp
	for _, expr := range m.Redact {
		re, err := regexp.Compile(expr)
		if err != nil {
			return cli.Exit(fmt.Sprintf("[mcp] redact: pattern %q is not a valid regular expression (Go RE2 syntax): %v", expr, err), 64)
		}
		redact = append(redact, re)
	}

	cl, err := bus.Connect(ctx, bus.Options{URL: cfg.BusURL(), TokenFile: cfg.TokenPath(), Name: "observer-mcp-wrap",
		SpoolDir: cfg.SpoolDir(), Timeout: 5 * time.Second, Logger: logger})
	if err != nil {
		return err
	}
	defer cl.Close()

	host, _ := os.Hostname()
	p, err := mcpwrap.New(mcpwrap.Options{
		Command: c.Args().Slice(), Name: c.String("name"),
		Hide: append(append([]string{}, m.Hide...), c.StringSlice("hide")...), MaxTools: m.MaxTools,
		CallTimeout: timeout, RawPayloads: m.RawPayloads, Redact: redact, History: m.History,
		SessionID: mcpwrap.SessionFromEnv(os.Getenv), Project: mcpwrap.ProjectFromEnv(os.Getenv),
		Host: host, User: os.Getenv("USER"),
		Publisher: cl, Logger: logger, Stderr: c.App.ErrWriter,
	})
	if err != nil {
		return cli.Exit(err, 64)
	}
	return p.Run(ctx, c.App.Reader, c.App.Writer)
}
