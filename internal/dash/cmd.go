package dash

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/pkg/bus"
)

// Version is set by main.
var Version = "dev"

// Run runs observer-dash and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return daemon.Run(ctx, &cli.App{
		Name:  "observer-dash",
		Usage: "the dashboard: a local web page over the store, with a live tail",
		Description: `Serves http://127.0.0.1:8081 by default ([dash] addr, OBSERVER_DASH_ADDR). Listening beyond loopback
needs [dash] token (OBSERVER_DASH_TOKEN); open the page once with ?token=<token>.`,
		Version: Version,
		Flags: []cli.Flag{
			daemon.HomeFlag,
			&cli.StringFlag{Name: "addr", Usage: "listen address (default: [dash] addr)"},
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
	defer daemon.StartCPUProfile("observer-dash", logger)()
	if c.IsSet("addr") {
		cfg.Dash.Addr = c.String("addr")
	}
	pr := prices.FollowOrDefault(cfg.Home, logger)
	go pr.Run(ctx)
	s, err := New(Options{Addr: cfg.Dash.Addr, Token: cfg.Dash.Token, StorePath: cfg.StorePath(), Home: cfg.Home, Version: Version, Logger: logger,
		PriceTable: pr.Table, PriceSet: pr.Current, Plans: followPlans(cfg, logger)})
	if err != nil {
		return cli.Exit(err, 64)
	}
	defer s.Close()
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	cl, err := bus.Connect(ctx, bus.Options{URL: cfg.BusURL(), TokenFile: cfg.TokenPath(), Name: "observer-dash", Logger: logger})
	if err != nil {
		ln.Close()
		return err
	}
	defer cl.Close()
	go s.Live().Follow(ctx, cl, logger)
	go s.FollowAlerts(ctx, cl, logger)
	go cl.Heartbeat(ctx, time.Second, func() bus.Health {
		h := bus.Health{Component: "dash", OK: true, Events: s.Live().Published(), LastEvent: s.Live().LastEvent(),
			Detail: fmt.Sprintf("http://%s, %d requests, %d live views", ln.Addr(), s.Requests(), s.Live().Clients())}
		if !s.Live().Connected() {
			h.Detail += ", not following the store's changes yet"
		}
		return h
	})
	logger.Info("dashboard is up", "url", "http://"+ln.Addr().String(), "store", cfg.StorePath())
	return s.Serve(ctx, ln)
}

// followPlans gives [plans] of cfg's home as config.toml says at each call: the file is read
// again when its size or time changed, at most every two seconds. A file that does not load
// keeps the plans last read (the dashboard runs on, as with prices), with a warning.
func followPlans(cfg config.Config, logger *slog.Logger) func() map[string]query.Plan {
	var mu sync.Mutex
	plans := plansOf(cfg.Plans)
	var checked time.Time
	seen, _ := os.Stat(config.Path(cfg.Home)) // the file cfg was loaded from, or nil
	return func() map[string]query.Plan {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(checked) < 2*time.Second {
			return plans
		}
		checked = time.Now()
		fi, err := os.Stat(config.Path(cfg.Home))
		if err != nil || seen != nil && fi.Size() == seen.Size() && fi.ModTime().Equal(seen.ModTime()) {
			return plans
		}
		seen = fi
		c, err := config.Read(cfg.Home)
		if err != nil {
			logger.Warn("config.toml not applied; the plan values keep the plans last read", "err", err)
			return plans
		}
		plans = plansOf(c.Plans)
		return plans
	}
}

// plansOf is [plans] as the read model takes them.
func plansOf(p config.Plans) map[string]query.Plan {
	out := map[string]query.Plan{}
	for provider, plan := range p.ByProvider() {
		out[provider] = query.Plan{Name: plan.Name, USDMonth: plan.USDMonth}
	}
	return out
}
