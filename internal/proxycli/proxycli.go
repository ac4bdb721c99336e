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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/loopback"
	"github.com/observerhq/observer/pkg/otlp"
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
	defer daemon.StartCPUProfile("observer-proxy", logger)()
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
		stopMemory := keepMemory(ctx, comp, filepath.Join(cfg.RunDir(), "compress-memory"), logger)
		defer stopMemory()
	}
	p, err := proxy.New(proxy.Config{
		AnthropicUpstream: cfg.Proxy.AnthropicUpstream, OpenAIUpstream: cfg.Proxy.OpenAIUpstream, GeminiUpstream: cfg.Proxy.GeminiUpstream,
		Publisher: cl, Coster: pf, Logger: logger, Host: host, User: os.Getenv("USER"),
		ConnectTimeout: cfg.Proxy.ConnectTimeout.D(), ResponseHeaderTimeout: cfg.Proxy.ResponseHeaderTimeout.D(),
		MaxBodyBytes: cfg.Proxy.MaxBodyBytes, ListenAddr: cfg.Proxy.Addr, Compressor: comp,
		JournalDir: filepath.Join(cfg.RunDir(), "proxy-journal"),
	})
	if err != nil {
		return cli.Exit(err, 64)
	}
	defer p.Close()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	rcv := startOTLP(cfg.OTLP, otlp.Config{Publisher: cl, Coster: pf, Logger: logger, Host: host, User: os.Getenv("USER"),
		MaxBodyBytes: cfg.OTLP.MaxBodyBytes, BodyTimeout: cfg.OTLP.BodyTimeout.D()}, logger)
	defer rcv.stop()
	go cl.Heartbeat(ctx, time.Second, func() bus.Health {
		return proxyHealth(time.Now(), ln.Addr().String(), p.Stats(), rcv.stats(), rcv.addrs, rcv.problems)
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

// proxyHealth is the proxy's heartbeat: its counters and the OTLP receiver's (o, nil when it is
// off) in the detail; degraded for each OTLP listener that could not listen (problems), and while
// turns or OTLP events it took could not be recorded (a full disk), and a while after.
func proxyHealth(now time.Time, addr string, st proxy.Stats, o *otlp.Stats, otlpAddrs string, problems []string) bus.Health {
	last := st.LastTurn
	detail := fmt.Sprintf("%s, %d requests, %d turns", addr, st.Requests, st.Turns)
	if o != nil {
		detail += fmt.Sprintf("; otlp %s: %d exports, %d events", otlpAddrs, o.Requests, o.Events)
		if o.LastExport.After(last) {
			last = o.LastExport
		}
	}
	if st.NotRecorded > 0 {
		detail += fmt.Sprintf("; %d turns not confirmed recorded (%s)", st.NotRecorded, st.NotRecordedWhy)
	}
	if o != nil && o.NotRecorded > 0 {
		detail += fmt.Sprintf("; %d otlp events not confirmed recorded (%s)", o.NotRecorded, o.NotRecordedWhy)
	}
	degraded := problems
	if pr := st.Problem(now); pr != "" {
		// Served, but not recorded (a full disk): degraded while it lasts, and a while after.
		degraded = append(append([]string(nil), degraded...), pr)
	}
	if o != nil {
		if pr := o.Problem(now); pr != "" {
			degraded = append(append([]string(nil), degraded...), pr)
		}
	}
	return bus.Health{Component: "proxy", OK: true, LastEvent: last, Events: st.Turns, Detail: detail, Degraded: degraded}
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

// otlpServers are the OTLP receiver and its listeners; a zero value (receiver off) stops nothing.
type otlpServers struct {
	r     *otlp.Receiver
	http  *http.Server
	grpc  *grpc.Server
	addrs string
	// problems names each listener that could not listen, its address and why: the proxy's
	// heartbeat reports them, so that status and doctor show the proxy degraded.
	problems []string
}

// startOTLP starts the OTLP receiver on [otlp] addr (HTTP) and grpc_addr (gRPC). An address that
// cannot be listened on (another collector holds 4318, say) is logged and skipped: the proxy
// serves on without it, and reports itself degraded with what failed.
func startOTLP(c config.OTLP, oc otlp.Config, logger *slog.Logger) *otlpServers {
	s := &otlpServers{}
	if c.Addr == "" && c.GRPCAddr == "" {
		logger.Info("the OTLP receiver is off ([otlp] addr and grpc_addr are empty)")
		return s
	}
	oc.Refuse = proxy.Refuser(c.Addr)
	s.r = otlp.New(oc)
	var addrs []string
	if c.Addr != "" {
		if !loopback.Addr(c.Addr) {
			logger.Warn("the OTLP receiver listens beyond loopback: anyone who reaches it can add turns to your records", "addr", c.Addr)
		}
		ln, err := net.Listen("tcp", c.Addr)
		if err != nil {
			logger.Error("the OTLP/HTTP receiver is not listening (change [otlp] addr or OBSERVER_OTLP_ADDR, empty turns it off)", "addr", c.Addr, "err", err)
			s.problems = append(s.problems, listenProblem("otlp/http", c.Addr, "[otlp] addr", err))
		} else {
			s.http = &http.Server{Handler: s.r, ReadHeaderTimeout: 30 * time.Second}
			go s.http.Serve(ln)
			addrs = append(addrs, "http://"+ln.Addr().String())
		}
	}
	if c.GRPCAddr != "" {
		ln, err := net.Listen("tcp", c.GRPCAddr)
		if err != nil {
			logger.Error("the OTLP/gRPC receiver is not listening (change [otlp] grpc_addr or OBSERVER_OTLP_GRPC_ADDR, empty turns it off)", "addr", c.GRPCAddr, "err", err)
			s.problems = append(s.problems, listenProblem("otlp/grpc", c.GRPCAddr, "[otlp] grpc_addr", err))
		} else {
			s.grpc = grpc.NewServer(s.r.GRPCServerOptions()...)
			s.r.RegisterGRPC(s.grpc)
			go s.grpc.Serve(ln)
			addrs = append(addrs, "grpc://"+ln.Addr().String())
		}
	}
	s.addrs = strings.Join(addrs, " ")
	if s.addrs != "" {
		logger.Info("OTLP receiver is up", "addrs", s.addrs)
	}
	return s
}

// listenProblem says which listener could not listen on addr, and why, in the words of the system
// call ("otlp/http listener 127.0.0.1:4318: address already in use (another program holds the
// port: stop it, or change [otlp] addr)").
func listenProblem(what, addr, key string, err error) string {
	why := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
	}
	hint := "change " + key + ", or set it empty to turn this listener off"
	if errors.Is(err, syscall.EADDRINUSE) {
		hint = "another program holds the port (an OpenTelemetry collector?): stop it, or change " + key
	}
	return fmt.Sprintf("%s listener %s: %s (%s)", what, addr, why, hint)
}

func (s *otlpServers) stats() *otlp.Stats {
	if s.r == nil {
		return nil
	}
	st := s.r.Stats()
	return &st
}

// stop closes the listeners, then lets the receiver publish what it queued.
func (s *otlpServers) stop() {
	if s.r == nil {
		return
	}
	if s.http != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.http.Shutdown(sctx)
		cancel()
	}
	if s.grpc != nil {
		s.grpc.GracefulStop()
	}
	s.r.Close()
}

// keepMemory loads the compressor's memory of decisions from path, and saves it there every five
// minutes and when the proxy stops (the returned func), so that a restarted proxy sends every
// conversation's compressed outputs as before and the prompt caches keep hitting. A file that
// cannot be read is reported and set aside (compression then starts afresh).
func keepMemory(ctx context.Context, comp *compress.Compressor, path string, logger *slog.Logger) func() {
	if data, err := os.ReadFile(path); err == nil {
		if err := comp.UnmarshalMemory(data); err != nil {
			logger.Warn("compression memory not loaded: outputs compressed before this start go as they are", "path", path, "err", err)
		} else {
			logger.Info("compression memory loaded", "path", path, "bytes", len(data))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		logger.Warn("compression memory not read", "path", path, "err", err)
	}
	save := func() {
		err := os.MkdirAll(filepath.Dir(path), 0o700)
		if err == nil {
			err = atomicfile.Write(path, comp.MarshalMemory(), 0o600)
		}
		if err != nil {
			logger.Warn("compression memory not saved", "path", path, "err", err)
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(5 * time.Minute)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				save()
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		save()
	}
}
