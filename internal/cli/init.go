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

const initDescription = `Edits the AI clients' own configuration: Claude Code (~/.claude.json, or
$CLAUDE_CONFIG_DIR/.claude.json), Codex ($CODEX_HOME/config.toml, default ~/.codex/config.toml) and
Cursor (~/.cursor/mcp.json).

  --mcp         registers observer-mcp as the user-wide MCP server "observer" (--name), with the
                absolute path of the observer-mcp installed beside observerctl (else on PATH), and
                --home when observer's home is not ~/.observer.
  --wrap NAME   rewrites the existing stdio MCP server NAME (in Claude Code: the user's and each
                project's) to run as ` + "`observer-mcp wrap -- COMMAND ARGS...`" + `, so that its tool calls are
                recorded; its env and other settings stay. Repeatable.

Only the keys named above change: every other key keeps its place and spelling, and TOML comments
stay. Every file is checked before the first is written; each written file is first copied to
FILE.observer-backup-<time> (mode 0600) and then replaced atomically, keeping its mode. What was
changed, and what it replaced, is recorded in $OBSERVER_HOME/install.json for ` + "`observerctl uninstall`" + `.
Running init again changes nothing. --dry-run prints the changes as unified diffs and writes
nothing. Restart the clients (or start a new session) to load the change.

Exit codes: 0 done (or nothing to change); 1 failure, such as a file that changed while it was
edited (run again); 64 usage error (nothing asked, an unknown client, --wrap NAME that no selected
client has); 65 a config file that is not valid JSON or TOML, a server entry written in a form
observerctl does not edit, or a server name already taken (nothing is written in these cases); 69
no client found (name one with --client) or observer-mcp not found (build it, or pass --mcp-bin).`

func initCommand() *cli.Command {
	return &cli.Command{
		Name:        "init",
		Usage:       "register observer-mcp with Claude Code, Codex and Cursor, or route their MCP servers through it",
		Description: initDescription,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mcp", Usage: "register observer-mcp as an MCP server"},
			&cli.StringSliceFlag{Name: "wrap", Usage: "run the MCP server `NAME` through observer-mcp wrap (repeatable)"},
			&cli.StringSliceFlag{Name: "client", Usage: "claude-code, codex or cursor (repeatable; default: every client found)"},
			&cli.StringFlag{Name: "name", Value: "observer", Usage: "the server name observer-mcp is registered under"},
			&cli.StringFlag{Name: "mcp-bin", Usage: "the observer-mcp binary to register (default: beside observerctl, else on PATH)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as unified diffs; write nothing"},
		},
		Action: runInit,
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "undo what observerctl init changed in the clients' configuration",
		Description: `Restores exactly the keys $OBSERVER_HOME/install.json says init set: a key init added is
removed, a key it changed gets its previous text back; nothing else in the files changes, so edits
made since to other keys stay. A key whose value is no longer the one init set (you edited it) is
left alone, with the keys set with it, and stays recorded; --force restores it anyway. Each
written file is backed up first, as init does. --dry-run prints the diffs and writes nothing.

Exit codes: 0 done (or nothing to undo); 1 failure, or some keys were left because they changed
since init; 65 a config file or the manifest that does not parse (nothing is written).`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as unified diffs; write nothing"},
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
	if !c.Bool("mcp") && len(wraps) == 0 {
		return usageErr("nothing to do: pass --mcp, --wrap NAME, or both (see observerctl init --help)")
	}
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
	locs, err := selectClients(splitList(c.StringSlice("client")), userHome)
	if err != nil {
		return err
	}
	bin, err := observerMCPPath(c.String("mcp-bin"))
	if err != nil {
		return err
	}
	server := clientconfig.Server{Command: bin}
	if home != filepath.Join(userHome, ".observer") {
		server.Args = []string{"--home", home}
	}

	seen := map[string]int{}
	var targets []clientconfig.Target
	for _, l := range locs {
		var plans []func(*clientconfig.Doc) ([]clientconfig.Edit, []string, error)
		if c.Bool("mcp") {
			plans = append(plans, clientconfig.RegisterPlan(l.Client, name, server))
		}
		if len(wraps) > 0 {
			plans = append(plans, clientconfig.WrapPlan(l.Client, wraps, server, seen))
		}
		targets = append(targets, clientconfig.Target{Client: l.Client, File: l.File, Format: l.Format, Plan: joinPlans(plans)})
	}
	checkWraps := func() error {
		var missing []string
		for _, w := range wraps {
			if seen[w] == 0 {
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			return usageErr("--wrap: no stdio MCP server named %s in %s; nothing written", strings.Join(missing, ", "), clientNames(locs))
		}
		return nil
	}
	opts := clientconfig.Options{Home: home, DryRun: c.Bool("dry-run"), BeforeWrite: checkWraps}
	reports, err := clientconfig.Apply(targets, opts)
	if err != nil {
		return configErr(err)
	}
	stdout := c.App.Writer
	printReports(stdout, reports, opts.DryRun)
	switch {
	case opts.DryRun:
		fmt.Fprintln(stdout, "dry run: nothing written")
	case anyChanged(reports):
		fmt.Fprintf(stdout, "recorded in %s: `observerctl uninstall` undoes it. Restart the clients (or start a new session) to load the change.\n", clientconfig.ManifestPath(home))
	default:
		fmt.Fprintln(stdout, "nothing to change")
	}
	return nil
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
		fmt.Fprintf(stdout, "nothing to undo: no changes recorded in %s\n", clientconfig.ManifestPath(home))
		return nil
	}
	opts := clientconfig.Options{Home: home, DryRun: c.Bool("dry-run"), Force: c.Bool("force")}
	reports, err := clientconfig.Undo(opts)
	if err != nil {
		return configErr(err)
	}
	printReports(stdout, reports, opts.DryRun)
	kept := 0
	for _, r := range reports {
		kept += r.Kept
	}
	if opts.DryRun {
		fmt.Fprintln(stdout, "dry run: nothing written")
	}
	if kept > 0 {
		return withCode(ExitFailure, fmt.Errorf("%d key(s) left as they are because they changed since init (see above); uninstall --force restores them anyway", kept))
	}
	return nil
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

// selectClients returns the named clients' config locations, or every client found.
func selectClients(names []string, userHome string) ([]clientconfig.Location, error) {
	all := clientconfig.Locate(userHome, os.Getenv)
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
			return nil, withCode(ExitUnavailable, fmt.Errorf("no AI client found (looked for %s); name one with --client to create its config", strings.Join(where, ", ")))
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
