package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/pkg/config"
)

const initDescription = `Edits the AI clients' own configuration for observer. With no --hooks, --mcp, --wrap or --otel
it does --hooks; the flags combine.

  --hooks       registers observerctl's hook handler (` + "`observerctl hook --client NAME`" + `, by the absolute
                path of this observerctl, with --home when observer's home is not ~/.observer) for
                the clients' lifecycle and tool events: Claude Code ($CLAUDE_CONFIG_DIR/settings.json,
                default ~/.claude/settings.json: SessionStart, UserPromptSubmit, PreToolUse,
                PostToolUse, Notification, PreCompact, SubagentStop, Stop, SessionEnd), Codex
                ($CODEX_HOME/hooks.json, default ~/.codex/hooks.json: the same and PostCompact,
                SubagentStart) and Cursor (~/.cursor/hooks.json: sessionStart, postToolUse,
                afterShellExecution, afterMCPExecution, afterFileEdit, preCompact, subagentStop,
                stop, sessionEnd). One entry is appended to each event's list; the entries hold a
                command only. The handler only observes: it prints nothing, never blocks or decides
                anything, and exits 0 at once (spooling the event) when observer is down. Codex
                runs a new hook only once you trust it: start codex and review it with /hooks.
  --mcp         registers observer-mcp as the user-wide MCP server "observer" (--name) in Claude
                Code (~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json), Codex
                ($CODEX_HOME/config.toml) and Cursor (~/.cursor/mcp.json), with the absolute path
                of the observer-mcp installed beside observerctl (else on PATH), and --home when
                observer's home is not ~/.observer.
  --wrap NAME   rewrites the existing stdio MCP server NAME (in Claude Code: the user's and each
                project's) to run as ` + "`observer-mcp wrap -- COMMAND ARGS...`" + `, so that its tool calls are
                recorded; its env and other settings stay. Repeatable.
  --otel        makes Claude Code and Codex export their OpenTelemetry logs and metrics to
                observer's OTLP receiver ([otlp] addr, default 127.0.0.1:4318), which must be
                running: ` + "`observerctl up`" + ` (or the services) starts it. Claude Code: in the "env"
                object of its settings.json (the file --hooks edits), CLAUDE_CODE_ENABLE_TELEMETRY=1,
                OTEL_METRICS_EXPORTER=otlp, OTEL_LOGS_EXPORTER=otlp,
                OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf,
                OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 and OTEL_LOGS_EXPORT_INTERVAL=5000
                (events within seconds). Codex: in the [otel] table of $CODEX_HOME/config.toml,
                exporter = { otlp-http = { endpoint = "http://127.0.0.1:4318/v1/logs", protocol =
                "binary" } } and metrics_exporter, the same to /v1/metrics. A client loads them when
                restarted (or in a new session). Prompts are not exported: set
                OTEL_LOG_USER_PROMPTS=1 in Claude Code's env, or log_user_prompt = true in Codex's
                [otel], yourself if you want them. A setting of yours that already works with the
                receiver (exporters "otlp,console", protocol http/json, another interval) stays as
                it is; one with another value (another exporter or endpoint) is not overwritten:
                init names it and stops (exit 65). A value that only turned export off ("none",
                CLAUDE_CODE_ENABLE_TELEMETRY=0) is replaced, and uninstall puts it back. Run init
                --otel again after changing [otlp] addr. Cursor exports no telemetry to observer:
                --otel skips it, with a note.

Clients: every client found (its config directory exists, or its command is on PATH; for --mcp
and --wrap, its config file or directory), or those named with --client.

Only the keys and list entries named above change: every other key, and every hook of yours,
keeps its place and spelling, and TOML comments stay. Every file is checked before the first is
written; each written file is first copied to FILE.observer-backup-<time> (mode 0600) and then
replaced atomically, keeping its mode. One backup per file is kept, the file as it was before
observerctl's last write to it (older ones are removed); uninstall removes it once it gave the
file back. What was changed, and what it replaced, is recorded in $OBSERVER_HOME/install.json for
` + "`observerctl uninstall`" + `. Running init again changes nothing (an event that already runs
` + "`observerctl hook`" + ` gets no second entry); run from another observerctl, it replaces observer's
entries. --dry-run prints the changes as unified diffs and writes nothing; the diffs (and --json's)
show [REDACTED] for the values of MCP servers' env and headers and of keys named like secrets.
Restart the clients (or start a new session) to load the change.

The clients run the binaries by the paths init writes. When those are not installed (in a
checkout's bin/, which ` + "`make clean`" + ` removes, or a temporary build), init says so on stderr, with
the command that installs them and registers the installed ones (make install, then init from
~/.local/bin); ` + "`observerctl doctor`" + ` fails when a registered command is gone.

Exit codes: 0 done (or nothing to change); 1 failure, such as a file that changed while it was
edited (run again); 64 usage error (an unknown client, --wrap NAME that no selected client has,
--otel with --client cursor alone); 65 a config file that is not valid JSON or TOML, a server
entry or hooks list written in a form observerctl does not edit, a server name already taken, or
a telemetry setting of yours that --otel would change (nothing is written in these cases); 69 no
client found (name one with --client), observer-mcp not found (build it, or pass --mcp-bin), or
--otel with the OTLP receiver turned off (an empty [otlp] addr).`

func initCommand() *cli.Command {
	return &cli.Command{
		Name:        "init",
		Usage:       "register observer's hooks (and optionally observer-mcp and telemetry export) with Claude Code, Codex and Cursor",
		Description: initDescription,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "hooks", Usage: "register observerctl hook for the clients' events (the default)"},
			&cli.BoolFlag{Name: "mcp", Usage: "register observer-mcp as an MCP server"},
			&cli.BoolFlag{Name: "otel", Usage: "make Claude Code and Codex export their OpenTelemetry logs and metrics to observer's OTLP receiver"},
			&cli.StringSliceFlag{Name: "wrap", Usage: "run the MCP server `NAME` through observer-mcp wrap (repeatable)"},
			&cli.StringSliceFlag{Name: "client", Usage: "claude-code, codex or cursor (repeatable; default: every client found)"},
			&cli.StringFlag{Name: "name", Value: "observer", Usage: "the server name observer-mcp is registered under"},
			&cli.StringFlag{Name: "mcp-bin", Usage: "the observer-mcp binary to register (default: beside observerctl, else on PATH)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as unified diffs; write nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print what changed (or would) as JSON: dry_run, manifest, files"},
		},
		Action: runInit,
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "undo what observerctl init changed in the clients' configuration",
		Description: `Restores exactly the keys $OBSERVER_HOME/install.json says init set: a key init added is
removed, a key it changed gets its previous text back, and each hook entry init appended is
removed from its list (a list or file init created goes when it is empty again); nothing else in
the files changes, so edits made since to other keys and your own hooks stay. A key or hook entry
whose value is no longer the one init set (you edited it: a hook entry whose command you changed
is recognized as the entry running observerctl hook that was not there before init) is left
alone, with the keys set with it, reported by its key and file, and stays recorded; --force
restores (or removes) it anyway. For Codex, the trust records Codex wrote in config.toml for
observer's hooks ([hooks.state."<CODEX_HOME>/hooks.json:EVENT:N:M"]) are removed with the entries,
and nothing else there changes. A file given back whole is written without a backup and the
backups init kept of it are removed (a file you removed since keeps its backup); a file with
entries left is backed up first, one backup per file. --dry-run prints the diffs and writes nothing.

Exit codes: 0 done (or nothing to undo); 1 failure, or some keys were left because they changed
since init; 65 a config file or the manifest that does not parse (nothing is written).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as unified diffs; write nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print what changed (or would) as JSON: dry_run, manifest, files"},
			&cli.BoolFlag{Name: "force", Usage: "restore keys even when they changed since init"},
		},
		Action: runUninstall,
	}
}

func runInit(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("init takes no arguments, got %q", c.Args().First())
	}
	wraps := splitList(c.StringSlice("wrap"))
	mcp := c.Bool("mcp")
	otel := c.Bool("otel")
	hooks := c.Bool("hooks") || !mcp && len(wraps) == 0 && !otel
	name := c.String("name")
	if name == "" {
		return usageErr("--name must not be empty")
	}
	home, err := observerHome(c)
	if err != nil {
		return err
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find your home directory: %w", err)
	}
	names := splitList(c.StringSlice("client"))
	var homeArg string
	if home != filepath.Join(userHome, ".observer") {
		homeArg = home
	}

	seen := map[string]int{}
	var targets []clientconfig.Target
	// plan adds a plan for a file, joined with the plans already there for it (the hooks and the
	// telemetry settings share Claude Code's settings.json, observer-mcp and them Codex's config.toml).
	plan := func(l clientconfig.Location, p func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error)) {
		if i := slices.IndexFunc(targets, func(t clientconfig.Target) bool { return t.File == l.File }); i >= 0 {
			targets[i].Plan = joinPlans([]func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error){targets[i].Plan, p})
			return
		}
		targets = append(targets, clientconfig.Target{Client: l.Client, File: l.File, Format: l.Format, Plan: p})
	}
	var mcpLocs []clientconfig.Location
	var used []string // the binaries the clients will run
	if mcp || len(wraps) > 0 {
		if mcpLocs, err = selectClients(names, clientconfig.Locate(userHome, os.Getenv), ""); err != nil {
			return err
		}
		bin, err := observerMCPPath(c.String("mcp-bin"))
		if err != nil {
			return err
		}
		used = append(used, bin)
		server := clientconfig.Server{Command: bin}
		if homeArg != "" {
			server.Args = []string{"--home", homeArg}
		}
		for _, l := range mcpLocs {
			var plans []func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error)
			if mcp {
				plans = append(plans, clientconfig.RegisterPlan(l.Client, name, server))
			}
			if len(wraps) > 0 {
				plans = append(plans, clientconfig.WrapPlan(l.Client, wraps, server, seen))
			}
			plan(l, joinPlans(plans))
		}
	}
	if hooks {
		locs, err := selectClients(names, clientconfig.LocateHooks(userHome, os.Getenv, exec.LookPath), ", and claude, codex, cursor on PATH")
		if err != nil {
			return err
		}
		ctl, err := observerctlPath()
		if err != nil {
			return err
		}
		used = append(used, ctl)
		for _, l := range locs {
			command := clientconfig.HookCommand(ctl, homeArg, l.Client)
			plan(l, clientconfig.HooksPlan(l, command))
		}
	}
	var endpoint string
	if otel {
		locs, err := otelClients(c.App.ErrWriter, names, userHome, hooks || mcp || len(wraps) > 0)
		if err != nil {
			return err
		}
		if len(locs) > 0 {
			if endpoint, err = otlpEndpoint(home); err != nil {
				return err
			}
			man, err := clientconfig.LoadManifest(home)
			if err != nil {
				return configErr(err)
			}
			for _, l := range locs {
				plan(l, clientconfig.OTelPlan(l, endpoint, man))
			}
		}
	}
	checkWraps := func() error {
		var missing []string
		for _, w := range wraps {
			if seen[w] == 0 {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return usageErr("--wrap: no stdio MCP server named %s in %s; nothing written", strings.Join(missing, ", "), clientNames(mcpLocs))
		}
		return nil
	}
	opts := clientconfig.Options{Home: home, DryRun: c.Bool("dry-run"), BeforeWrite: checkWraps}
	reports, err := clientconfig.Apply(targets, opts)
	if err != nil {
		return configErr(err)
	}
	stdout := c.App.Writer
	if anyChanged(reports) || opts.DryRun {
		warnNotInstalled(c.App.ErrWriter, used, hooks, initRerun(c, homeArg, hooks, mcp, otel, wraps, names, name))
	}
	if c.Bool("json") {
		writeJSON(stdout, configReport{DryRun: opts.DryRun, Manifest: clientconfig.ManifestPath(home), Files: nonNil(reports)})
		return nil
	}
	printReports(stdout, reports, opts.DryRun)
	switch {
	case opts.DryRun:
		fmt.Fprintln(stdout, "dry run: nothing written")
	case anyChanged(reports):
		fmt.Fprintf(stdout, "recorded in %s: `observerctl uninstall` undoes it. Restart the clients (or start a new session) to load the change.\n", clientconfig.ManifestPath(home))
	default:
		fmt.Fprintln(stdout, "nothing to change")
	}
	if endpoint != "" {
		fmt.Fprintf(stdout, "telemetry goes to observer's OTLP receiver at %s, which runs with `observerctl up` (or the services); prompts are not exported unless you turn them on.\n", endpoint)
	}
	return nil
}

// otelClients returns the clients --otel writes for: those named that export OpenTelemetry (a
// note on w names the others), or every one found. With nothing else to do (others false), no
// such client is an error; otherwise a note.
func otelClients(w io.Writer, names []string, userHome string, others bool) ([]clientconfig.Location, error) {
	var named, skipped []string
	for _, n := range names {
		if n == "claude" {
			n = clientconfig.ClaudeCode
		}
		if slices.Contains(clientconfig.Clients, n) && !slices.Contains(clientconfig.OTelClients, n) {
			skipped = append(skipped, n)
			continue
		}
		named = append(named, n)
	}
	only := strings.Join(clientconfig.OTelClients, " and ")
	if len(skipped) > 0 {
		msg := fmt.Sprintf("%s does not export OpenTelemetry to observer: --otel applies to %s only", strings.Join(skipped, ", "), only)
		if len(named) == 0 && !others {
			return nil, usageErr("%s; nothing written", msg)
		}
		fmt.Fprintf(w, "observerctl: note: %s\n", msg)
		if len(named) == 0 {
			return nil, nil
		}
	}
	all := clientconfig.LocateOTel(userHome, os.Getenv, exec.LookPath)
	if len(named) == 0 && others && !slices.ContainsFunc(all, func(l clientconfig.Location) bool { return l.Found }) {
		fmt.Fprintf(w, "observerctl: note: --otel: neither %s is set up here (name one with --client to create its config)\n", only)
		return nil, nil
	}
	return selectClients(named, all, ", and claude, codex on PATH")
}

// otlpEndpoint is the URL the clients export to: observer's OTLP receiver, at [otlp] addr of
// observer's config in home (read, not created; OBSERVER_OTLP_ADDR overrides it).
func otlpEndpoint(home string) (string, error) {
	cfg, err := config.Read(home)
	if err != nil {
		return "", withCode(ExitBadInput, fmt.Errorf("--otel reads the OTLP receiver's address from observer's config: %w", err))
	}
	if cfg.OTLP.Addr == "" {
		return "", withCode(ExitUnavailable, fmt.Errorf("--otel: observer's OTLP receiver is off ([otlp] addr is empty, in %s or %s): set its address, then run init again; nothing written",
			config.Path(home), config.EnvName("otlp", "addr")))
	}
	u, err := clientconfig.OTelEndpoint(cfg.OTLP.Addr)
	if err != nil {
		return "", withCode(ExitBadInput, fmt.Errorf("--otel: %w; fix [otlp] addr in %s", err, config.Path(home)))
	}
	return u, nil
}

func runUninstall(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("uninstall takes no arguments, got %q", c.Args().First())
	}
	home, err := observerHome(c)
	if err != nil {
		return err
	}
	stdout := c.App.Writer
	man, err := clientconfig.LoadManifest(home)
	if err != nil {
		return configErr(err)
	}
	if len(man.Files) == 0 {
		if c.Bool("json") {
			writeJSON(stdout, configReport{DryRun: c.Bool("dry-run"), Manifest: clientconfig.ManifestPath(home), Files: []clientconfig.FileReport{}})
			return nil
		}
		fmt.Fprintf(stdout, "nothing to undo: no changes recorded in %s\n", clientconfig.ManifestPath(home))
		return nil
	}
	opts := clientconfig.Options{Home: home, DryRun: c.Bool("dry-run"), Force: c.Bool("force")}
	reports, err := clientconfig.Undo(opts)
	if err != nil {
		return configErr(err)
	}
	kept := 0
	var where []string
	for _, r := range reports {
		kept += r.Kept
		if r.Kept > 0 {
			where = append(where, strings.Join(r.KeptPaths, ", ")+" in "+r.File)
		}
	}
	if c.Bool("json") {
		writeJSON(stdout, configReport{DryRun: opts.DryRun, Manifest: clientconfig.ManifestPath(home), Files: nonNil(reports)})
	} else {
		printReports(stdout, reports, opts.DryRun)
		if opts.DryRun {
			fmt.Fprintln(stdout, "dry run: nothing written")
		}
	}
	if kept > 0 {
		return withCode(ExitFailure, fmt.Errorf("%d entr(ies) or key(s) left as they are because you changed them since init: %s; %s still records them, and `observerctl uninstall --force` removes (or restores) them anyway",
			kept, strings.Join(where, "; "), clientconfig.ManifestPath(home)))
	}
	return nil
}

// placement says where a directory of observer's binaries is, for a set-up that must outlive the
// build: the clients' hooks and settings and the service units name the binaries by their path.
type placement struct {
	dir      string
	checkout string // the observer checkout whose build tree holds dir ("": none)
	temp     bool   // a temporary directory (go run, go test, /tmp)
	onPath   bool   // on PATH, or make install's default $HOME/.local/bin
}

// observerModule is the module path of observer's go.mod, which marks a checkout.
const observerModule = "github.com/observerhq/observer"

func binPlacement(dir string) placement {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	p := placement{dir: dir}
	for d := dir; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for line := range strings.Lines(string(data)) {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == observerModule {
					p.checkout = d
				}
			}
			if p.checkout != "" {
				break
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	tmp := os.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	p.temp = strings.Contains(dir, string(filepath.Separator)+"go-build") || dir == tmp || strings.HasPrefix(dir, tmp+string(filepath.Separator))
	installed := filepath.SplitList(os.Getenv("PATH"))
	if h, err := os.UserHomeDir(); err == nil {
		installed = append(installed, filepath.Join(h, ".local", "bin"))
	}
	for _, d := range installed {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if filepath.Clean(d) == dir {
			p.onPath = true
		}
	}
	return p
}

// problem says why binaries in the directory do not last, "" when they are installed.
func (p placement) problem() string {
	switch {
	case p.checkout != "":
		return "in the build tree of the checkout " + p.checkout + ": `make clean`, deleting or moving the checkout removes it"
	case p.temp:
		return "in a temporary directory (a `go run` or `go test` build, or under " + os.TempDir() + "), which goes away"
	case !p.onPath:
		return "not in an installed location (a directory on PATH, or make install's ~/.local/bin)"
	}
	return ""
}

// installedCtl is where make install puts observerctl by default.
func installedCtl() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return "~/.local/bin/observerctl"
	}
	return filepath.Join(h, ".local", "bin", "observerctl")
}

// installCommand is the command that installs the binaries and then runs rerun (observerctl's
// arguments) from the installed observerctl.
func installCommand(p placement, rerun string) string {
	mk := "make install"
	if p.checkout != "" {
		mk = "make -C " + clientconfig.ShellQuote(p.checkout) + " install"
	}
	return mk + " && " + clientconfig.ShellQuote(installedCtl()) + " " + rerun
}

// warnNotInstalled tells, on stderr, when a binary the clients will run is not installed: the
// hooks (or the MCP server) break as soon as it goes, silently but for the clients' hook errors.
func warnNotInstalled(w io.Writer, bins []string, hooks bool, rerun string) {
	var bad []string
	var first placement
	for _, b := range bins {
		p := binPlacement(filepath.Dir(b))
		if p.problem() == "" {
			continue
		}
		if len(bad) == 0 {
			first = p
		}
		bad = append(bad, b)
	}
	if len(bad) == 0 {
		return
	}
	what := "observer-mcp's registration breaks"
	if hooks {
		what = "every hook breaks (the clients report a failing hook on each event)"
	}
	fmt.Fprintf(w, "observerctl: warning: the clients will run %s, %s; once it is gone %s.\n", strings.Join(bad, " and "), first.problem(), what)
	fmt.Fprintf(w, "  Install the binaries and register the installed ones instead (this replaces observer's entries):\n    %s\n", installCommand(first, rerun))
	if first.checkout == "" {
		fmt.Fprintln(w, "  (run make install in observer's checkout; PREFIX defaults to ~/.local)")
	}
	fmt.Fprintln(w, "  `observerctl doctor` reports a registered command that is gone.")
}

// initRerun is this init's arguments, for the installed observerctl to run again.
func initRerun(c *cli.Context, homeArg string, hooks, mcp, otel bool, wraps, clients []string, name string) string {
	var a []string
	if homeArg != "" {
		a = append(a, "--home", clientconfig.ShellQuote(homeArg))
	}
	a = append(a, "init")
	if hooks && (mcp || otel || len(wraps) > 0) {
		a = append(a, "--hooks")
	}
	if mcp {
		a = append(a, "--mcp")
	}
	if otel {
		a = append(a, "--otel")
	}
	for _, w := range wraps {
		a = append(a, "--wrap", clientconfig.ShellQuote(w))
	}
	for _, cl := range clients {
		a = append(a, "--client", clientconfig.ShellQuote(cl))
	}
	if c.IsSet("name") {
		a = append(a, "--name", clientconfig.ShellQuote(name))
	}
	return strings.Join(a, " ")
}

// observerHome resolves observer's home (--home, $OBSERVER_HOME, ~/.observer) without loading or
// creating anything there: a dry run leaves no trace, and init needs no configuration.
func observerHome(c *cli.Context) (string, error) {
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

// selectClients returns the named clients' locations among all, or every client found; also says
// what else was looked for.
func selectClients(names []string, all []clientconfig.Location, also string) ([]clientconfig.Location, error) {
	if len(names) == 0 {
		var found []clientconfig.Location
		for _, l := range all {
			if l.Found {
				found = append(found, l)
			}
		}
		if len(found) == 0 {
			var where []string
			for _, l := range all {
				where = append(where, l.File)
			}
			return nil, withCode(ExitUnavailable, fmt.Errorf("no AI client found (looked for %s%s); name one with --client to create its config", strings.Join(where, ", "), also))
		}
		return found, nil
	}
	var out []clientconfig.Location
	for _, n := range names {
		if n == "claude" {
			n = clientconfig.ClaudeCode
		}
		i := slices.IndexFunc(all, func(l clientconfig.Location) bool { return l.Client == n })
		if i < 0 {
			return nil, usageErr("--client %q: not one of %s", n, strings.Join(clientconfig.Clients, ", "))
		}
		if !slices.ContainsFunc(out, func(l clientconfig.Location) bool { return l.Client == n }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// observerMCPPath finds the observer-mcp to register: the flag's, the one installed beside this
// observerctl (so a build's bin/ stays together), else the one on PATH; always absolute, because
// the clients start it from any directory.
func observerMCPPath(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		beside = filepath.Join(filepath.Dir(exe), "observer-mcp")
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("observer-mcp"); err == nil {
		return filepath.Abs(p)
	}
	return "", withCode(ExitUnavailable, fmt.Errorf("observer-mcp not found beside observerctl (%s) or on PATH: build it (make build) or pass --mcp-bin", beside))
}

// observerctlPath is the absolute path of the running observerctl, which the clients' hooks run.
func observerctlPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find observerctl's own path for the hook command: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Abs(exe)
}

// configErr gives clientconfig's errors their exit codes.
func configErr(err error) error {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, clientconfig.ErrMalformed), errors.Is(err, clientconfig.ErrConflict):
		return withCode(ExitBadInput, err)
	}
	return withCode(ExitFailure, err)
}

func joinPlans(plans []func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error)) func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error) {
	return func(d *clientconfig.Doc) ([]clientconfig.Edit, []string, error) {
		var edits []clientconfig.Edit
		var notes []string
		for _, p := range plans {
			e, n, err := p(d)
			if err != nil {
				return nil, nil, err
			}
			edits, notes = append(edits, e...), append(notes, n...)
		}
		return edits, notes, nil
	}
}

// configReport is the JSON of init and uninstall.
type configReport struct {
	DryRun   bool                      `json:"dry_run"`
	Manifest string                    `json:"manifest"`
	Files    []clientconfig.FileReport `json:"files"`
}

func nonNil(r []clientconfig.FileReport) []clientconfig.FileReport {
	if r == nil {
		return []clientconfig.FileReport{}
	}
	return r
}

func printReports(w io.Writer, reports []clientconfig.FileReport, dryRun bool) {
	for _, r := range reports {
		fmt.Fprintf(w, "%s %s\n", r.Client, r.File)
		for _, l := range r.Lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if !r.Changed {
			continue
		}
		if dryRun {
			io.WriteString(w, r.Diff)
		} else if r.Backup != "" {
			fmt.Fprintf(w, "  backup: %s\n", r.Backup)
		}
	}
}

func anyChanged(reports []clientconfig.FileReport) bool {
	return slices.ContainsFunc(reports, func(r clientconfig.FileReport) bool { return r.Changed })
}

func clientNames(locs []clientconfig.Location) string {
	var n []string
	for _, l := range locs {
		n = append(n, l.Client)
	}
	return strings.Join(n, ", ")
}

// splitList flattens repeated and comma-separated flag values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
