// Package proxycli is the observer-proxy command: it loads the configuration, connects to the bus
// (spooling to disk while it is down), serves the proxy and reports its health to the supervisor.
// Turns are priced with the built-in table and config.toml's price overrides, which it follows
// while it runs (internal/prices): a change applies to the next turn, without a restart.
//
// OBSERVER_PROXY_CPUPROFILE=FILE (unset by default) writes a CPU profile of the run to FILE on
// shutdown: the way to see what the request path costs under `observerctl up`.
package proxycli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/loopback"
	"github.com/observerhq/observer/pkg/proxy"
)

// Version is set by main.
var Version = "dev"

// Run runs observer-proxy and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return daemon.Run(ctx, &cli.App{
		Name:  "observer-proxy",
		Usage: "reverse proxy for the model APIs that records the exact usage of every turn",
		Description: `Point clients at it:
   Claude Code:  ANTHROPIC_BASE_URL=http://127.0.0.1:8820
   OpenAI SDKs:  OPENAI_BASE_URL=http://127.0.0.1:8820/v1
   Gemini CLI:   GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8820
   Codex:        a custom provider (it ignores OPENAI_BASE_URL), see the README.

   Profiling (off by default): OBSERVER_PROXY_CPUPROFILE=FILE writes a CPU profile of the whole
   run to FILE when the proxy stops (go tool pprof FILE).`,
		Version: Version,
		Flags: []cli.Flag{
			daemon.HomeFlag,
			&cli.StringFlag{Name: "addr", Usage: "listen address (default: [proxy] addr)"},
			&cli.StringFlag{Name: "anthropic-upstream", Usage: "where Anthropic requests go (default: [proxy] anthropic_upstream)"},
			&cli.StringFlag{Name: "openai-upstream", Usage: "where OpenAI requests go (default: [proxy] openai_upstream)"},
			&cli.StringFlag{Name: "gemini-upstream", Usage: "where Gemini API requests go (default: [proxy] gemini_upstream)"},
		},
		Action: serve,
	}, args, stdout, stderr)
}

func serve(c *cli.Context) error {
	ctx, stop, cfg, logger, err := daemon.Start(c)
	if err != nil {
		return err
	}
	defer stop()
	defer startCPUProfile(logger)()
	for flag, dst := range map[string]*string{"addr": &cfg.Proxy.Addr, "anthropic-upstream": &cfg.Proxy.AnthropicUpstream, "openai-upstream": &cfg.Proxy.OpenAIUpstream,
		"gemini-upstream": &cfg.Proxy.GeminiUpstream} {
		if c.IsSet(flag) {
			*dst = c.String(flag)
		}
	}

	pf, err := prices.Follow(cfg.Home, logger)
	if err != nil {
		return cli.Exit(err, 64)
	}
	go pf.Run(ctx)
	if !loopback.Addr(cfg.Proxy.Addr) {
		logger.Warn("the proxy listens beyond loopback: anyone who reaches it can spend your API keys' credit through it", "addr", cfg.Proxy.Addr)
	}
	ln, err := net.Listen("tcp", cfg.Proxy.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (change [proxy] addr or OBSERVER_PROXY_ADDR): %w", cfg.Proxy.Addr, err)
	}
	host, _ := os.Hostname()
	cl, err := bus.Connect(ctx, bus.Options{URL: cfg.BusURL(), TokenFile: cfg.TokenPath(), Name: "observer-proxy",
		SpoolDir: cfg.SpoolDir(), DrainEvery: 5 * time.Second, Logger: logger})
	if err != nil {
		return err
	}
	defer cl.Close()
	comp, err := compressorOf(cfg.Compression)
	if err != nil {
		return cli.Exit(err, 64)
	}
	if comp != nil {
		logger.Info("request compression is on", "mode", comp.Mode(), "compressors", strings.Join(cfg.Compression.Compressors, ","),
			"trim_tools", cfg.Compression.TrimTools, "stash", cfg.Compression.Stash)
	}
	p, err := proxy.New(proxy.Config{
		AnthropicUpstream: cfg.Proxy.AnthropicUpstream, OpenAIUpstream: cfg.Proxy.OpenAIUpstream, GeminiUpstream: cfg.Proxy.GeminiUpstream,
		Publisher: cl, Coster: pf, Logger: logger, Host: host, User: os.Getenv("USER"),
		ConnectTimeout: cfg.Proxy.ConnectTimeout.D(), ResponseHeaderTimeout: cfg.Proxy.ResponseHeaderTimeout.D(),
		MaxBodyBytes: cfg.Proxy.MaxBodyBytes, ListenAddr: cfg.Proxy.Addr, Compressor: comp,
	})
	if err != nil {
		return cli.Exit(err, 64)
	}
	defer p.Close()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go cl.Heartbeat(ctx, time.Second, func() bus.Health {
		st := p.Stats()
		return bus.Health{Component: "proxy", OK: true, LastEvent: st.LastTurn, Events: st.Turns,
			Detail: fmt.Sprintf("%s, %d requests, %d turns", ln.Addr(), st.Requests, st.Turns)}
	})
	logger.Info("proxy is up", "addr", ln.Addr().String(), "anthropic", cfg.Proxy.AnthropicUpstream, "openai", cfg.Proxy.OpenAIUpstream,
		"gemini", cfg.Proxy.GeminiUpstream)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	srv.Shutdown(sctx)
	return nil
}

// compressorOf makes the request compressor [compression] describes, or nil when it is off.
func compressorOf(c config.Compression) (*compress.Compressor, error) {
	if !c.Enabled {
		return nil, nil
	}
	kinds := make([]compress.Kind, 0, len(c.Compressors))
	for _, k := range c.Compressors {
		kinds = append(kinds, compress.Kind(k))
	}
	return compress.New(compress.Options{Mode: c.Mode, TargetRatio: c.TargetRatio, PreserveTail: c.PreserveTail,
		Kinds: kinds, MinBytes: c.MinBytes, TrimTools: c.TrimTools, Stash: c.Stash})
}
