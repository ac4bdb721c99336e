// Package cli is observerctl: the supervisor, the standalone bus and writer, and the user's
// commands. main only calls Run.
//
// Exit codes (documented in the README and in `observerctl --help`):
//
//	0   success (for hook: the event was published or spooled)
//	1   failure
//	64  usage error: unknown command or flag, bad flag value
//	65  bad input: a hook payload that is not JSON or too large, an unknown event kind, corrupt spool lines
//	69  unavailable: observer is not running, or the bus cannot be reached
//
// No command ever exits 2: Claude Code and Codex read exit code 2 from a hook as "block this tool
// call", and observer must never decide for the user.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/logging"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/config"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 64
	ExitBadInput    = 65
	ExitUnavailable = 69
)

// exitError carries an exit code with a message for the user.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func usageErr(format string, a ...any) error { return withCode(ExitUsage, fmt.Errorf(format, a...)) }

// Version is set by main from the -ldflags stamp.
var Version = "dev"

const exitHelp = `EXIT CODES:
   0   success (hook: the event was published or spooled)
   1   failure
   64  usage error (unknown command or flag, bad value)
   65  bad input (hook payload not JSON or too large, unknown event kind, corrupt spool lines; init: a
       client config it cannot edit)
   69  unavailable (observer is not running, or the bus cannot be reached; init: no client or no
       observer-mcp found)
   observerctl never exits 2, which a client's hook runner reads as "block the tool call".`

// Run runs observerctl with args (args[0] is the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	notFound := false
	app.CommandNotFound = func(c *cli.Context, name string) {
		fmt.Fprintf(c.App.ErrWriter, "observerctl: unknown command %q (see observerctl --help)\n", name)
		notFound = true
	}
	err := app.RunContext(ctx, flagsFirst(app, args))
	if notFound {
		return ExitUsage
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	code := ExitFailure
	if errors.As(err, &ee) {
		code = ee.code
	} else if isUsage(err) {
		code = ExitUsage
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "observerctl: %s\n", msg)
	}
	return code
}

// isUsage recognizes urfave/cli's own errors for bad flags and arguments.
func isUsage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"flag provided but not defined", "invalid value", "Required flag", "No help topic", "flag needs an argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "observerctl",
		Usage:     "run and query observer, the local observability suite for AI coding agents",
		Version:   Version,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "observer's data directory", EnvVars: []string{"OBSERVER_HOME"}, DefaultText: "~/.observer"},
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitHelp + "\n",
		ExitErrHandler:        func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return withCode(ExitUsage, fmt.Errorf("%w (see --help)", err))
		},
		Commands: []*cli.Command{
			upCommand(), downCommand(), statusCommand(), restartCommand(), logsCommand(), tailCommand(),
			costCommand(), scanCommand(), hookCommand(), publishCommand(), busCommand(), writerCommand(), spoolCommand(), versionCommand(),
			initCommand(), uninstallCommand(),
			serviceCommand(),
			doctorCommand(), exportCommand(), pruneCommand(), backfillCommand(), reconcileCommand(),
			discoverCommand(), patternsCommand(), scoreCommand(), suggestCommand(), hubCommand(), teamCommand(),
			summaryCommand(), memoryCommand(),
			blocksCommand(), limitsCommand(), searchCommand(), budgetCommand(), pricesCommand(), statuslineCommand(), metricsCommand(), dashCommand(),
		},
		HideVersion: false,
	}
	return app
}

// env is what a command needs from the global flags: the loaded configuration and a logger.
type env struct {
	cfg    config.Config
	logger *slog.Logger
	stdout io.Writer
	stderr io.Writer
}

// load resolves the home directory and loads its configuration. Under the supervisor (the writer
// it runs as a child) a broken config.toml does not stop the restart: see loadOrLastGood.
func load(c *cli.Context) (*env, error) {
	if config.Supervised() {
		return loadOrLastGood(c)
	}
	home, err := homeDir(c)
	if err != nil {
		return nil, err
	}
	read := config.Load
	if readOnly[commandPath(c)] {
		read = config.Read // a question about the store creates nothing in the home
	}
	cfg, err := read(home)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	readers.UseStore(cfg.StorePath())
	return newEnv(c, cfg), nil
}

// newEnv is the command's environment with cfg, its logger having said cfg.Warnings.
func newEnv(c *cli.Context, cfg config.Config) *env {
	e := &env{cfg: cfg, logger: newLogger(c.App.ErrWriter, cfg.Log.Level), stdout: c.App.Writer, stderr: c.App.ErrWriter}
	for _, w := range cfg.Warnings {
		e.logger.Warn(w)
	}
	return e
}

// readOnly are the commands that only read the store or the configuration: they create neither the
// home directory nor config.toml (the first command that starts or sets up observer writes it).
var readOnly = map[string]bool{
	"cost": true, "export": true, "discover": true, "patterns": true, "score": true, "blocks": true,
	"statusline": true, "doctor": true, "metrics": true, "prices show": true, "prices list": true, "prices diff": true,
	"status": true, "logs": true, "tail": true,
}

// commandPath is the command's name with its parents' ("prices show").
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(slices.Compact(names), " ")
}

// loadOrLastGood is load for the commands that must work while config.toml is broken: the hook
// (an event is published or spooled whatever the file says) and the control commands (status,
// down, restart, logs, tail, spool). They run with the configuration that last loaded, else the
// defaults, and say so on stderr.
func loadOrLastGood(c *cli.Context) (*env, error) {
	home, err := homeDir(c)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(config.Path(home)); errors.Is(err, os.ErrNotExist) && readOnly[commandPath(c)] {
		// Nothing set up yet: the defaults, without creating the home.
		cfg, err := config.Read(home)
		if err != nil {
			return nil, withCode(ExitFailure, err)
		}
		readers.UseStore(cfg.StorePath())
		return newEnv(c, cfg), nil
	}
	cfg, warning, err := config.LoadOrLastGood(home)
	if err != nil {
		return nil, withCode(ExitFailure, err)
	}
	e := newEnv(c, cfg)
	if warning != nil {
		e.logger.Warn(warning.Error())
	}
	return e, nil
}

func homeDir(c *cli.Context) (string, error) {
	home := c.String("home")
	if home == "" {
		h, err := config.HomeDir()
		if err != nil {
			return "", err
		}
		home = h
	}
	return filepath.Abs(home)
}

// newLogger logs text to a terminal and JSON lines elsewhere (a log file, a service manager).
func newLogger(w io.Writer, level string) *slog.Logger { return logging.New(w, level) }

func isTerminal(f *os.File) bool { return logging.IsTerminal(f) }

// flagsFirst moves a subcommand's flags ahead of its positional arguments, so `logs writer -f`
// works like `logs -f writer` (urfave/cli v2 stops parsing flags at the first argument).
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	// Skip global flags to find the command.
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if !strings.Contains(args[i], "=") && (args[i] == "--home" || args[i] == "-home") {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	// A subcommand's flags go after its name too: `prices show MODEL --json`.
	for cmd != nil && len(cmd.Subcommands) > 0 && i+1 < len(args) {
		sub := cmd.Command(args[i+1])
		if sub == nil {
			break
		}
		cmd, i = sub, i+1
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, pos []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && takesValue[name] && j+1 < len(rest) {
			j++
			flags = append(flags, rest[j])
		}
	}
	out := append([]string{}, args[:i+1]...)
	return append(append(out, flags...), pos...)
}
