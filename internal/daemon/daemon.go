// Package daemon holds what observer's long-running binaries (observer-proxy, observer-watch)
// share around their own work: the command line, the configuration, the logger, the signals.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/logging"
	"github.com/observerhq/observer/pkg/config"
)

// HomeFlag is the --home flag every binary takes.
var HomeFlag = &cli.StringFlag{Name: "home", EnvVars: []string{"OBSERVER_HOME"}, Usage: "observer's data directory", DefaultText: "~/.observer"}

// Run runs app with args and returns the exit code, printing an error as "<name>: <error>".
func Run(ctx context.Context, app *cli.App, args []string, stdout, stderr io.Writer) int {
	app.Writer, app.ErrWriter = stdout, stderr
	app.ExitErrHandler = func(*cli.Context, error) {}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", app.Name, err)
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

// Start loads the configuration of --home, makes a JSON logger at its level, and returns a context
// that ends on SIGINT, SIGTERM, or when the supervisor that started the process is gone.
func Start(c *cli.Context) (context.Context, context.CancelFunc, config.Config, *slog.Logger, error) {
	home := c.String("home")
	if home == "" {
		h, err := config.HomeDir()
		if err != nil {
			return nil, nil, config.Config{}, nil, err
		}
		home = h
	}
	home, _ = filepath.Abs(home)
	// A component the supervisor (re)starts runs on the last good configuration when config.toml
	// broke while the suite ran; started by hand or by a service manager, it refuses a bad file.
	var warning error
	cfg, err := config.Load(home)
	if err != nil && config.Supervised() {
		cfg, warning, err = config.LoadOrLastGood(home)
	}
	if err != nil {
		return nil, nil, cfg, nil, cli.Exit(err, 64)
	}
	logger := logging.New(c.App.ErrWriter, cfg.Log.Level)
	if warning != nil {
		logger.Warn(warning.Error())
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := WatchParent(ctx)
	go TrimMemory(ctx)
	return ctx, func() { cancel(); stop() }, cfg, logger, nil
}
