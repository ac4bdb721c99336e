package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/deploy"
	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/config"
)

// serviceMarker is written into every unit install renders. uninstall removes only files that
// carry it, so a unit of the same name that the user wrote is never deleted. It must not contain
// "--", which an XML comment cannot hold.
const serviceMarker = "Written by observerctl service install; observerctl service uninstall removes it."

// serviceFileMode is the mode of the written units: 0644, as systemctl and launchctl expect and
// write themselves. The units hold no secret (the bus token stays in $OBSERVER_HOME, 0600), and
// launchd refuses an agent that group or others can write. New directories are 0700, as the XDG
// base directory spec asks.
const serviceFileMode fs.FileMode = 0o644

// serviceComponents are the units in start order: the bus first, then the writer, then the rest.
var serviceComponents = []string{"bus", "writer", "proxy", "watch", "dash"}

// serviceHost is the machine service acts on: its OS, the user's id (launchd's gui/UID domain) and
// the way systemctl and launchctl run. Tests replace newServiceHost to check the exact commands
// without a user manager.
type serviceHost struct {
	GOOS string
	UID  int
	// Run runs a command and returns its standard output; a failure's error carries its stderr.
	Run func(ctx context.Context, name string, args ...string) (string, error)
}

var newServiceHost = func() serviceHost {
	return serviceHost{GOOS: runtime.GOOS, UID: os.Getuid(), Run: runServiceCommand}
}

// serviceCommandTimeout bounds one systemctl or launchctl call (enable --now waits for the start
// jobs, which for Type=simple units end at once).
const serviceCommandTimeout = time.Minute

func runServiceCommand(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, serviceCommandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
	}
	return stdout.String(), err
}

// serviceUnit is one file install writes.
type serviceUnit struct {
	Component string // bus, writer, proxy, watch, dash; "target" for observer.target
	ID        string // the manager's name for it: observer-bus.service, dev.observer.bus
	Path      string // where it is installed
	tmpl      []byte // the template from package deploy
}

// serviceManager is the user's systemd user manager or launchd, and the units observer has there.
type serviceManager struct {
	host  serviceHost
	kind  string // "systemd" or "launchd"
	dir   string
	units []serviceUnit
}

func newServiceManager(host serviceHost) (*serviceManager, error) {
	userHome, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("find your home directory: %w", err)
	}
	m := &serviceManager{host: host}
	var names, ids []string
	switch host.GOOS {
	case "linux":
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" || !filepath.IsAbs(cfg) { // the spec says to ignore a relative value
			cfg = filepath.Join(userHome, ".config")
		}
		m.kind, m.dir = "systemd", filepath.Join(cfg, "systemd", "user")
		for _, c := range serviceComponents {
			names, ids = append(names, "systemd/observer-"+c+".service"), append(ids, "observer-"+c+".service")
		}
		names, ids = append(names, "systemd/observer.target"), append(ids, "observer.target")
	case "darwin":
		m.kind, m.dir = "launchd", filepath.Join(userHome, "Library", "LaunchAgents")
		for _, c := range serviceComponents {
			names, ids = append(names, "launchd/dev.observer."+c+".plist"), append(ids, "dev.observer."+c)
		}
	default:
		return nil, withCode(ExitUnavailable, fmt.Errorf("observerctl service knows systemd (Linux) and launchd (macOS), not %s: run `observerctl up` instead", host.GOOS))
	}
	for i, n := range names {
		tmpl, err := deploy.FS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("unit template %s: %w", n, err)
		}
		comp := "target"
		if i < len(serviceComponents) {
			comp = serviceComponents[i]
		}
		m.units = append(m.units, serviceUnit{Component: comp, ID: ids[i], Path: filepath.Join(m.dir, path.Base(n)), tmpl: tmpl})
	}
	return m, nil
}

// renderOptions is what a rendered unit carries from the user's installation.
type renderOptions struct {
	binDir   string   // absolute directory of observerctl and the observer-* binaries
	homeArgs []string // ["--home", HOME] when observer's home is not ~/.observer
	logDir   string   // where launchd agents write their stderr
}

// render returns the unit u for this installation, and the base name of the binary it runs ("" for
// observer.target).
func (m *serviceManager) render(u serviceUnit, o renderOptions) ([]byte, string, error) {
	var data []byte
	var prog string
	var err error
	if m.kind == "systemd" {
		data, prog, err = renderSystemdUnit(u.tmpl, o)
	} else {
		data, prog, err = renderLaunchdAgent(u.tmpl, o, filepath.Join(o.logDir, u.Component+".log"))
	}
	if err != nil {
		return nil, "", fmt.Errorf("render %s: %w", u.ID, err)
	}
	return data, prog, nil
}

// renderSystemdUnit adds the marker and rewrites ExecStart to run the binary of binDir, with
// --home before the template's arguments (a global flag of observerctl, an app flag of the others).
func renderSystemdUnit(tmpl []byte, o renderOptions) ([]byte, string, error) {
	var out strings.Builder
	out.WriteString("# " + serviceMarker + "\n")
	prog := ""
	for _, line := range strings.SplitAfter(string(tmpl), "\n") {
		v, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			out.WriteString(line)
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 || prog != "" {
			return nil, "", errors.New("want exactly one non-empty ExecStart line")
		}
		prog = path.Base(f[0])
		words := []string{systemdProgram(filepath.Join(o.binDir, prog))}
		for _, a := range append(slices.Clone(o.homeArgs), f[1:]...) {
			words = append(words, systemdWord(a))
		}
		out.WriteString("ExecStart=" + strings.Join(words, " ") + "\n")
	}
	return []byte(out.String()), prog, nil
}

// systemdProgram quotes the program of a systemd command line. systemd expands specifiers there
// (% is doubled) but not variables, and refuses a path with a quote or a backslash, which install
// rejects beforehand.
func systemdProgram(p string) string {
	p = strings.ReplaceAll(p, "%", "%%")
	if strings.ContainsAny(p, " \t;") {
		return `"` + p + `"`
	}
	return p
}

// systemdWord quotes s as one argument of a systemd command line: % starts a specifier and $ a
// variable, so both are doubled; a word with blanks, quotes, backslashes or ; (alone, it separates
// commands) goes in double quotes, where backslash escapes.
func systemdWord(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// renderLaunchdAgent adds the marker and rewrites the first ProgramArguments string to the binary
// of binDir (with --home after it) and StandardErrorPath to logPath. The templates log to /tmp,
// which every user shares; the rendered agents log beside `observerctl up`'s logs, 0600 by their
// Umask.
func renderLaunchdAgent(tmpl []byte, o renderOptions, logPath string) ([]byte, string, error) {
	s := string(tmpl)
	i := strings.Index(s, "<plist")
	if i < 0 {
		return nil, "", errors.New("no <plist> element")
	}
	s = s[:i] + "<!-- " + serviceMarker + " -->\n" + s[i:]
	var prog string
	s, err := replacePlistString(s, "ProgramArguments", func(old, indent string) string {
		prog = path.Base(old)
		out := plistString(filepath.Join(o.binDir, prog))
		for _, a := range o.homeArgs {
			out += "\n" + indent + plistString(a)
		}
		return out
	})
	if err != nil {
		return nil, "", err
	}
	s, err = replacePlistString(s, "StandardErrorPath", func(string, string) string { return plistString(logPath) })
	if err != nil {
		return nil, "", err
	}
	return []byte(s), prog, nil
}

// replacePlistString replaces the first <string> element after <key>key</key> with repl(its text,
// the indentation of its line).
func replacePlistString(s, key string, repl func(old, indent string) string) (string, error) {
	k := strings.Index(s, "<key>"+key+"</key>")
	if k < 0 {
		return "", fmt.Errorf("no %s key", key)
	}
	open := strings.Index(s[k:], "<string>")
	if open < 0 {
		return "", fmt.Errorf("no string after the %s key", key)
	}
	open += k
	end := strings.Index(s[open:], "</string>")
	if end < 0 {
		return "", fmt.Errorf("unterminated string after the %s key", key)
	}
	end += open
	line := strings.LastIndex(s[:open], "\n") + 1
	indent := s[line:open]
	if strings.TrimSpace(indent) != "" {
		indent = ""
	}
	return s[:open] + repl(s[open+len("<string>"):end], indent) + s[end+len("</string>"):], nil
}

func plistString(v string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(v))
	return "<string>" + b.String() + "</string>"
}

// plannedUnit is a unit with what install would write and what is there now.
type plannedUnit struct {
	serviceUnit
	data    []byte
	old     []byte
	state   string // "new", "unchanged" or "replace"
	ours    bool   // the file there now was written by install
	program string
}

// plan renders every unit and compares it with the file installed now.
func (m *serviceManager) plan(o renderOptions) ([]plannedUnit, error) {
	var out []plannedUnit
	for _, u := range m.units {
		data, prog, err := m.render(u, o)
		if err != nil {
			return nil, err
		}
		p := plannedUnit{serviceUnit: u, data: data, program: prog, state: "new"}
		old, err := os.ReadFile(u.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read the installed unit: %w", err)
		case bytes.Equal(old, data):
			p.old, p.state, p.ours = old, "unchanged", true
		default:
			p.old, p.state, p.ours = old, "replace", bytes.Contains(old, []byte(serviceMarker))
		}
		out = append(out, p)
	}
	return out, nil
}

func (m *serviceManager) systemctl(ctx context.Context, args ...string) (string, error) {
	return m.host.Run(ctx, "systemctl", append([]string{"--user"}, args...)...)
}

func (m *serviceManager) launchctl(ctx context.Context, args ...string) (string, error) {
	return m.host.Run(ctx, "launchctl", args...)
}

func (m *serviceManager) domain() string { return fmt.Sprintf("gui/%d", m.host.UID) }

// loadCommands are the commands that load and start the units, printed for a dry run and for the
// user to run by hand.
func (m *serviceManager) loadCommands() []string {
	if m.kind == "systemd" {
		return []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + strings.Join(m.systemdIDs(m.units), " ")}
	}
	var cmds []string
	for _, u := range m.units {
		cmds = append(cmds, "launchctl bootstrap "+m.domain()+" "+u.Path)
	}
	return cmds
}

// systemdIDs lists units with observer.target first: enabling it starts the rest at login, and
// enabling each service too makes `is-enabled` say so for it.
func (m *serviceManager) systemdIDs(units []serviceUnit) []string {
	var ids []string
	for _, u := range units {
		if u.Component == "target" {
			ids = append([]string{u.ID}, ids...)
		} else {
			ids = append(ids, u.ID)
		}
	}
	return ids
}

// run runs one manager command, printing it first.
func (m *serviceManager) run(ctx context.Context, w io.Writer, name string, args ...string) (string, error) {
	fmt.Fprintf(w, "run: %s %s\n", name, strings.Join(args, " "))
	out, err := m.host.Run(ctx, name, args...)
	if err != nil {
		return out, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out, nil
}

// load makes the manager pick up the written units and starts them.
func (m *serviceManager) load(ctx context.Context, w io.Writer, planned []plannedUnit) error {
	if m.kind == "systemd" {
		var replaced []serviceUnit
		for _, p := range planned {
			if p.state == "replace" && p.Component != "target" {
				replaced = append(replaced, p.serviceUnit)
			}
		}
		// Reload even when no file changed: an earlier install may have written them while the
		// manager could not be reached.
		if _, err := m.run(ctx, w, "systemctl", "--user", "daemon-reload"); err != nil {
			return err
		}
		if len(replaced) > 0 { // running units keep their old command line until restarted
			if _, err := m.run(ctx, w, "systemctl", append([]string{"--user", "try-restart"}, m.systemdIDs(replaced)...)...); err != nil {
				return err
			}
		}
		var all []serviceUnit
		for _, p := range planned {
			all = append(all, p.serviceUnit)
		}
		_, err := m.run(ctx, w, "systemctl", append([]string{"--user", "enable", "--now"}, m.systemdIDs(all)...)...)
		return err
	}
	for _, p := range planned {
		loaded := m.launchdLoaded(ctx, p.ID)
		if loaded && p.state == "unchanged" {
			continue
		}
		if loaded {
			if _, err := m.run(ctx, w, "launchctl", "bootout", m.domain()+"/"+p.ID); err != nil {
				return err
			}
		}
		if _, err := m.run(ctx, w, "launchctl", "bootstrap", m.domain(), p.Path); err != nil {
			return err
		}
	}
	return nil
}

// launchdLoaded reports whether launchd has the agent label in the user's gui domain.
func (m *serviceManager) launchdLoaded(ctx context.Context, label string) bool {
	_, err := m.launchctl(ctx, "print", m.domain()+"/"+label)
	return err == nil
}

// unload stops and disables the units.
func (m *serviceManager) unload(ctx context.Context, w io.Writer, units []serviceUnit) error {
	if m.kind == "systemd" {
		ids := m.systemdIDs(units)
		_, err := m.run(ctx, w, "systemctl", append([]string{"--user", "disable", "--now"}, ids...)...)
		if err != nil {
			// Without a user manager, disable alone still removes the links that enable made.
			m.run(ctx, w, "systemctl", append([]string{"--user", "disable"}, ids...)...)
		}
		return err
	}
	var first error
	for _, u := range slices.Backward(units) {
		if !m.launchdLoaded(ctx, u.ID) {
			continue
		}
		if _, err := m.run(ctx, w, "launchctl", "bootout", m.domain()+"/"+u.ID); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (m *serviceManager) what() string {
	if m.kind == "systemd" {
		return "systemd user units"
	}
	return "launchd agents"
}

// loadHint tells the user how to load the units by hand after loading failed.
func (m *serviceManager) loadHint() string {
	var b strings.Builder
	if m.kind == "systemd" {
		b.WriteString("systemctl --user needs a running user manager: log in (a desktop or ssh session), or keep one running with `loginctl enable-linger $USER`. Then load them with:\n")
	} else {
		b.WriteString("load them from your login session with:\n")
	}
	for _, c := range m.loadCommands() {
		b.WriteString("  " + c + "\n")
	}
	if m.kind == "launchd" {
		b.WriteString("(or `launchctl load -w PLIST` on an old macOS) ")
	}
	b.WriteString("or run `observerctl service install` again there")
	return b.String()
}

const serviceDescription = `observer's components can run under the user's service manager instead of ` + "`observerctl up`" + `
(use one or the other: both host the bus on the same port). One unit per component: the bus
first, then the writer (it needs the bus), then observer-proxy, observer-watch and observer-dash;
each restarts when it fails.

  Linux   systemd user units in $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user):
          observer-{bus,writer,proxy,watch,dash}.service and observer.target, which groups them
          and starts at login (at boot with ` + "`loginctl enable-linger $USER`" + `). Logs: journalctl --user
          -u observer-writer.
  macOS   launchd agents dev.observer.{bus,writer,proxy,watch,dash} in ~/Library/LaunchAgents,
          logging to $OBSERVER_HOME/logs/COMPONENT.log.

The units are built into observerctl; install writes them with the absolute path of the binaries
(--bin-dir, default the directory of this observerctl) and --home when observer's home is not
~/.observer. Only ` + "`--home`/OBSERVER_HOME" + ` reaches the services: put other settings in config.toml.`

func serviceCommand() *cli.Command {
	return &cli.Command{
		Name:        "service",
		Usage:       "run observer as systemd user units (Linux) or launchd agents (macOS)",
		Description: serviceDescription,
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "write observer's units and start them",
				Description: `Writes one unit per component (see observerctl service --help), each marked as written by
observerctl, files 0644 in a directory created 0700. A unit that is already there and identical is
left as it is; one that differs is replaced only with --force (without it, the differences are
shown and nothing is written). Then, on Linux: systemctl --user daemon-reload and
systemctl --user enable --now observer.target and each service (a replaced unit that runs is
restarted); on macOS: launchctl bootstrap gui/UID PLIST for each agent (after bootout for a
replaced one that is loaded). --no-load writes the files and prints the commands that load them.
--dry-run prints what would be written and run, and does neither.

While ` + "`observerctl up`" + ` runs with the same home, install refuses (exit 1, nothing written): the units
would host a second bus on the same port and a second writer on the same store, and fail over and
over. Stop it first (` + "`observerctl down`" + `); --no-load writes the units without starting them and --force
installs and starts them anyway, both with a warning. When the binaries are not installed (a
checkout's bin/, which ` + "`make clean`" + ` removes, or a temporary build), install warns on stderr and
prints the command that installs them and rewrites the units (make install, then service install
--force from ~/.local/bin); ` + "`observerctl doctor`" + ` fails when a unit's binary is gone. The directories
install creates are recorded in $OBSERVER_HOME/service-dirs.json for uninstall.

Exit codes: 0 done; 1 failure, or installed units differ or observerctl up runs and --force was not
given (nothing is written); 64 usage error; 69 a binary is missing from --bin-dir (nothing is written), no
supported service manager, or the files are written but loading them failed (no user manager, as
in a container: the message says how to load them; --no-load skips loading).`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "bin-dir", Usage: "the directory of observerctl and the observer-* binaries the units run (default: this observerctl's directory)"},
					&cli.BoolFlag{Name: "force", Usage: "replace installed units that differ; install even while observerctl up runs"},
					&cli.BoolFlag{Name: "no-load", Usage: "write the files only; do not call systemctl or launchctl"},
					&cli.BoolFlag{Name: "dry-run", Usage: "print what would be written and run; do neither"},
				},
				Action: runServiceInstall,
			},
			{
				Name:  "uninstall",
				Usage: "stop observer's units and remove them",
				Description: `Stops and disables the units (systemctl --user disable --now; launchctl bootout), then removes
exactly the files that carry install's mark; another file in the directory, or a unit of the same
name that observerctl did not write, stays. The directories install created (recorded in
$OBSERVER_HOME/service-dirs.json) are removed once they are empty. --no-load removes the files
without calling systemctl or launchctl. --dry-run prints what would be run and removed.

Exit codes: 0 done (or nothing installed); 1 failure; 64 usage error; 69 the files are removed but
the service manager could not stop the units (no user manager).`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "no-load", Usage: "remove the files only; do not call systemctl or launchctl"},
					&cli.BoolFlag{Name: "dry-run", Usage: "print what would be run and removed; do neither"},
				},
				Action: runServiceUninstall,
			},
			{
				Name:  "status",
				Usage: "show whether each unit is installed, enabled and active",
				Description: `One row per component (and observer.target on Linux): INSTALLED is yes when the unit file is
there (foreign: a file observerctl did not write), ENABLED is systemctl --user is-enabled's word
(macOS: enabled unless ` + "`launchctl disable`" + `d), ACTIVE is systemctl --user is-active's word (macOS: the
agent's state in launchctl print, or not-loaded). --json prints {manager, dir, manager_error,
units: [{component, unit, file, installed, foreign, enabled, active, enabled_state, active_state}]}.

Exit codes: 0 every unit installed, enabled and active; 1 some unit is not; 64 usage error; 69 the
service manager cannot be asked (states unknown).`,
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action: runServiceStatus,
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("service: unknown command %q (install, uninstall or status)", c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
	}
}

// serviceBinDir returns the absolute directory of the binaries the units run.
func serviceBinDir(c *cli.Context) (string, error) {
	if c.IsSet("bin-dir") {
		dir := c.String("bin-dir")
		if dir == "" {
			return "", usageErr("--bin-dir must not be empty")
		}
		return filepath.Abs(dir)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", usageErr("cannot find this observerctl (%v): pass --bin-dir", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe), nil
}

// hasControl reports a control character, which no unit format can carry plainly.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func runServiceInstall(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("service install takes no arguments, got %q", c.Args().First())
	}
	binDir, err := serviceBinDir(c)
	if err != nil {
		return err
	}
	home, err := observerHome(c)
	if err != nil {
		return err
	}
	if hasControl(binDir) || hasControl(home) {
		return usageErr("the bin directory %q or observer's home %q holds a control character, which a unit cannot carry", binDir, home)
	}
	if isHubHome(home) {
		// The units run a member's suite (its bus joins no one and hosts no team stream): on a
		// hub's home they would run the wrong thing.
		return usageErr("%s is a team hub's home (observerctl hub init made it): the service units run a member's suite, not a hub. Run the hub with `observerctl --home %s hub up -d`, or under your own service manager with `observerctl --home %s hub up`", home, home, home)
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("find your home directory: %w", err)
	}
	m, err := newServiceManager(newServiceHost())
	if err != nil {
		return err
	}
	if m.kind == "systemd" && strings.ContainsAny(binDir, `"'\`) {
		return usageErr("systemd cannot run a program whose path holds a quote or a backslash (%s): put the binaries in another directory and pass --bin-dir", binDir)
	}
	o := renderOptions{binDir: binDir, logDir: config.Config{Home: home}.LogDir()}
	if home != filepath.Join(userHome, ".observer") {
		o.homeArgs = []string{"--home", home}
	}
	planned, err := m.plan(o)
	if err != nil {
		return err
	}
	var missing []string
	for _, p := range planned {
		if p.program == "" || slices.Contains(missing, p.program) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(binDir, p.program)); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			missing = append(missing, p.program)
		}
	}
	if len(missing) > 0 {
		return withCode(ExitUnavailable, fmt.Errorf("%s not found in %s (or not executable): build them (make build, or make install PREFIX=~/.local) and pass --bin-dir; nothing written", strings.Join(missing, ", "), binDir))
	}

	w, errw := c.App.Writer, c.App.ErrWriter
	dryRun, force, noLoad := c.Bool("dry-run"), c.Bool("force"), c.Bool("no-load")
	homePart := ""
	if o.homeArgs != nil {
		homePart = "--home " + clientconfig.ShellQuote(home) + " "
	}
	rerun := homePart + "service install --force"
	if p := binPlacement(binDir); p.problem() != "" {
		fmt.Fprintf(errw, "observerctl: warning: the units will run the binaries in %s, %s; once they are gone observer does not start again (at login, at boot, or after a failure).\n", binDir, p.problem())
		fmt.Fprintf(errw, "  Install them and point the units there:\n    %s\n", installCommand(p, rerun))
		if p.checkout == "" {
			fmt.Fprintln(errw, "  (run make install in observer's checkout; PREFIX defaults to ~/.local)")
		}
	}
	// observerctl up and the units host the bus on the same port and share the store: both at once
	// means units that fail and restart over and over.
	if pid, up := suiteUnderUp(c.Context, home); up {
		msg := fmt.Sprintf("observer runs under `observerctl up` (pid %d) with this home: the units would start a second bus and writer on the same port and store, and fail until it stops", pid)
		switch {
		case dryRun:
			fmt.Fprintf(errw, "observerctl: warning: %s; install refuses to start them unless --force or --no-load\n", msg)
		case force || noLoad:
			fmt.Fprintf(errw, "observerctl: warning: %s; stop it with `observerctl down` before the units start\n", msg)
		default:
			return withCode(ExitFailure, fmt.Errorf("%s; nothing written. Stop it first, then install: `observerctl %sdown && observerctl %sservice install`; or --no-load to write the units without starting them, --force to start them anyway", msg, homePart, homePart))
		}
	} else if addr := busAddr(home); !slices.ContainsFunc(planned, func(p plannedUnit) bool { return p.ours }) && listening(addr) {
		fmt.Fprintf(errw, "observerctl: warning: something already listens on %s, the bus's port ([bus] port in config.toml): observer-bus will fail to start until it stops (another observer's `observerctl up`? stop it with `observerctl down`)\n", addr)
	}
	var conflicts int
	for _, p := range planned {
		if p.state != "replace" {
			continue
		}
		conflicts++
		who := "not written by observerctl"
		if p.ours {
			who = "written by observerctl with other settings"
		}
		verb := "differs"
		if force {
			verb = "will be replaced"
		}
		fmt.Fprintf(w, "%s %s (%s):\n", p.Path, verb, who)
		io.WriteString(w, clientconfig.Unified(p.Path+" (installed)", p.Path+" (install writes)", p.old, p.data))
	}
	if conflicts > 0 && !force {
		return withCode(ExitFailure, fmt.Errorf("%d unit file(s) in %s differ from what install writes (diff above); nothing written: pass --force to replace them", conflicts, m.dir))
	}
	if dryRun {
		for _, p := range planned {
			switch p.state {
			case "unchanged":
				fmt.Fprintf(w, "unchanged %s\n", p.Path)
			case "new":
				fmt.Fprintf(w, "would write %s (mode %04o):\n", p.Path, serviceFileMode)
				for _, l := range strings.Split(strings.TrimSuffix(string(p.data), "\n"), "\n") {
					if l != "" {
						l = "    " + l
					}
					fmt.Fprintln(w, l)
				}
			case "replace":
				fmt.Fprintf(w, "would replace %s (diff above)\n", p.Path)
			}
		}
		for _, d := range missingDirs(m.dir) {
			fmt.Fprintf(w, "would create %s (mode 0700)\n", d)
		}
		if !noLoad {
			for _, cmd := range m.loadCommands() {
				fmt.Fprintf(w, "would run: %s\n", cmd)
			}
		}
		fmt.Fprintln(w, "dry run: nothing written or run")
		return nil
	}

	// The directories install creates (and observer's home, for the record of them) go again with
	// service uninstall, once empty.
	created := append(missingDirs(m.dir), missingDirs(home)...)
	if m.kind == "launchd" {
		created = append(created, missingDirs(o.logDir)...)
	}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", m.dir, err)
	}
	if err := recordCreatedDirs(home, created); err != nil {
		return err
	}
	for _, p := range planned {
		switch p.state {
		case "unchanged":
			fmt.Fprintf(w, "unchanged %s\n", p.Path)
			continue
		case "new":
			fmt.Fprintf(w, "wrote %s\n", p.Path)
		case "replace":
			fmt.Fprintf(w, "replaced %s\n", p.Path)
		}
		if err := atomicfile.Write(p.Path, p.data, serviceFileMode); err != nil {
			return fmt.Errorf("write %s: %w", p.Path, err)
		}
	}
	if m.kind == "launchd" { // launchd opens StandardErrorPath but does not create its directory
		if err := os.MkdirAll(o.logDir, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", o.logDir, err)
		}
	}
	if noLoad {
		fmt.Fprintf(w, "not loaded (--no-load); load them with:\n")
		for _, cmd := range m.loadCommands() {
			fmt.Fprintf(w, "  %s\n", cmd)
		}
		return nil
	}
	if err := m.load(c.Context, w, planned); err != nil {
		return withCode(ExitUnavailable, fmt.Errorf("the %s are written in %s, but loading them failed: %v\n%s", m.what(), m.dir, err, m.loadHint()))
	}
	fmt.Fprintf(w, "observer runs as %s: `observerctl service status` shows them\n", m.what())
	return nil
}

func runServiceUninstall(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("service uninstall takes no arguments, got %q", c.Args().First())
	}
	m, err := newServiceManager(newServiceHost())
	if err != nil {
		return err
	}
	home, err := observerHome(c)
	if err != nil {
		return err
	}
	w := c.App.Writer
	var ours []serviceUnit
	for _, u := range m.units {
		data, err := os.ReadFile(u.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("read %s: %w", u.Path, err)
		case bytes.Contains(data, []byte(serviceMarker)):
			ours = append(ours, u)
		default:
			fmt.Fprintf(w, "left %s: not written by observerctl service install\n", u.Path)
		}
	}
	dirs := loadCreatedDirs(home)
	if len(ours) == 0 {
		fmt.Fprintf(w, "nothing to uninstall: no unit written by observerctl in %s\n", m.dir)
		if !c.Bool("dry-run") {
			removeCreatedDirs(w, home, dirs)
		}
		return nil
	}
	noLoad := c.Bool("no-load")
	if c.Bool("dry-run") {
		if !noLoad {
			if m.kind == "systemd" {
				fmt.Fprintf(w, "would run: systemctl --user disable --now %s\n", strings.Join(m.systemdIDs(ours), " "))
			} else {
				for _, u := range slices.Backward(ours) {
					fmt.Fprintf(w, "would run (if loaded): launchctl bootout %s/%s\n", m.domain(), u.ID)
				}
			}
		}
		for _, u := range ours {
			fmt.Fprintf(w, "would remove %s\n", u.Path)
		}
		if !noLoad && m.kind == "systemd" {
			fmt.Fprintln(w, "would run: systemctl --user daemon-reload")
		}
		for _, d := range dirs {
			fmt.Fprintf(w, "would remove %s, which install created, if it is empty then\n", d)
		}
		fmt.Fprintln(w, "dry run: nothing removed or run")
		return nil
	}
	var unloadErr error
	if !noLoad {
		unloadErr = m.unload(c.Context, w, ours)
	}
	for _, u := range ours {
		if err := os.Remove(u.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", u.Path, err)
		}
		fmt.Fprintf(w, "removed %s\n", u.Path)
	}
	removeCreatedDirs(w, home, dirs)
	if !noLoad && unloadErr == nil && m.kind == "systemd" {
		if _, err := m.run(c.Context, w, "systemctl", "--user", "daemon-reload"); err != nil {
			unloadErr = err
		}
	}
	if unloadErr != nil {
		return withCode(ExitUnavailable, fmt.Errorf("the %s are removed from %s, but the service manager could not stop them: %v\nif they still run, stop them from your login session (systemctl --user stop observer.target; launchctl bootout gui/$UID/LABEL)", m.what(), m.dir, unloadErr))
	}
	return nil
}

// serviceStatusReport is the JSON of `observerctl service status --json`.
type serviceStatusReport struct {
	Manager      string              `json:"manager"` // systemd or launchd
	Dir          string              `json:"dir"`
	ManagerError string              `json:"manager_error,omitempty"`
	Units        []serviceUnitStatus `json:"units"`
}

type serviceUnitStatus struct {
	Component    string `json:"component"` // bus, writer, proxy, watch, dash, target
	Unit         string `json:"unit"`      // observer-bus.service, dev.observer.bus
	File         string `json:"file"`
	Installed    bool   `json:"installed"` // the file is there
	Foreign      bool   `json:"foreign"`   // ... but observerctl did not write it
	Enabled      bool   `json:"enabled"`
	Active       bool   `json:"active"`
	EnabledState string `json:"enabled_state"` // is-enabled's word, "not-found" or "unknown"
	ActiveState  string `json:"active_state"`  // is-active's word (launchd: the agent's state), "not-found" or "unknown"
}

// firstLine is a command's one-word answer, or "" when it gave none.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

func (m *serviceManager) status(ctx context.Context) serviceStatusReport {
	rep := serviceStatusReport{Manager: m.kind, Dir: m.dir, Units: []serviceUnitStatus{}}
	noteErr := func(err error) {
		if rep.ManagerError == "" && err != nil {
			rep.ManagerError = err.Error()
		}
	}
	var disabled map[string]bool
	var disabledErr error
	if m.kind == "launchd" {
		out, err := m.launchctl(ctx, "print-disabled", m.domain())
		disabled, disabledErr = parseLaunchdDisabled(out), err
	}
	for _, u := range m.units {
		st := serviceUnitStatus{Component: u.Component, Unit: u.ID, File: u.Path, EnabledState: "not-found", ActiveState: "not-found"}
		data, err := os.ReadFile(u.Path)
		if err == nil {
			st.Installed, st.Foreign = true, !bytes.Contains(data, []byte(serviceMarker))
		}
		if !st.Installed {
			rep.Units = append(rep.Units, st)
			continue
		}
		if m.kind == "systemd" {
			// Both exit non-zero for a disabled or inactive unit: the word on stdout is the answer.
			out, err := m.systemctl(ctx, "is-enabled", u.ID)
			if st.EnabledState = firstLine(out); st.EnabledState == "" {
				st.EnabledState = "unknown"
				noteErr(fmt.Errorf("systemctl --user is-enabled %s: %w", u.ID, err))
			}
			out, err = m.systemctl(ctx, "is-active", u.ID)
			if st.ActiveState = firstLine(out); st.ActiveState == "" {
				st.ActiveState = "unknown"
				noteErr(fmt.Errorf("systemctl --user is-active %s: %w", u.ID, err))
			}
			st.Enabled = st.EnabledState == "enabled" || st.EnabledState == "enabled-runtime"
			st.Active = st.ActiveState == "active"
		} else {
			switch {
			case disabledErr != nil:
				st.EnabledState = "unknown"
				noteErr(fmt.Errorf("launchctl print-disabled %s: %w", m.domain(), disabledErr))
			case disabled[u.ID]:
				st.EnabledState = "disabled"
			default:
				st.EnabledState, st.Enabled = "enabled", true
			}
			st.ActiveState = "not-loaded"
			if out, err := m.launchctl(ctx, "print", m.domain()+"/"+u.ID); err == nil {
				st.ActiveState = launchdState(out)
			}
			st.Active = st.ActiveState == "running"
		}
		rep.Units = append(rep.Units, st)
	}
	return rep
}

// parseLaunchdDisabled reads `launchctl print-disabled`: lines `"LABEL" => disabled` (or `=> true`
// before macOS 11) name the disabled services.
func parseLaunchdDisabled(out string) map[string]bool {
	dis := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		label, val, ok := strings.Cut(sc.Text(), "=>")
		if !ok {
			continue
		}
		label, val = strings.Trim(strings.TrimSpace(label), `"`), strings.TrimSpace(val)
		dis[label] = val == "disabled" || val == "true"
	}
	return dis
}

// launchdState is the service's "state = WORD" from `launchctl print` (the first one: nested
// sections come after it), "unknown" when there is none.
func launchdState(out string) string {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "state = "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func runServiceStatus(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("service status takes no arguments, got %q", c.Args().First())
	}
	m, err := newServiceManager(newServiceHost())
	if err != nil {
		return err
	}
	rep := m.status(c.Context)
	w := c.App.Writer
	if c.Bool("json") {
		writeJSON(w, rep)
	} else {
		printServiceStatus(w, &rep)
	}
	installed, good := 0, true
	for _, u := range rep.Units {
		if u.Installed {
			installed++
		}
		good = good && u.Installed && !u.Foreign && u.Enabled && u.Active
	}
	switch {
	case rep.ManagerError != "":
		msg := ""
		if !c.Bool("json") {
			msg = fmt.Sprintf("cannot ask the service manager, states unknown: %s", rep.ManagerError)
		}
		return withCode(ExitUnavailable, errors.New(msg))
	case installed == 0 && !c.Bool("json"):
		return withCode(ExitFailure, fmt.Errorf("observer's %s are not installed: run `observerctl service install`", m.what()))
	case !good:
		return withCode(ExitFailure, errors.New(""))
	}
	return nil
}

func printServiceStatus(w io.Writer, rep *serviceStatusReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tUNIT\tINSTALLED\tENABLED\tACTIVE")
	for _, u := range rep.Units {
		inst := "no"
		switch {
		case u.Installed && u.Foreign:
			inst = "foreign"
		case u.Installed:
			inst = "yes"
		}
		en, act := u.EnabledState, u.ActiveState
		if !u.Installed {
			en, act = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Component, u.Unit, inst, en, act)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s units in %s\n", rep.Manager, rep.Dir)
}

// suiteUnderUp reports whether `observerctl up` runs with this home: its supervisor answers on the
// control socket (the units run no supervisor). A variable for the tests.
var suiteUnderUp = func(ctx context.Context, home string) (pid int, up bool) {
	cfg, _ := config.Read(home)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var st statusReport
	if err := (&supervisor.ControlClient{Path: socketPath(&env{cfg: cfg})}).Status(ctx, &st); err != nil {
		return 0, false
	}
	return st.PID, true
}

// busAddr is the bus's host:port in home's configuration.
func busAddr(home string) string {
	cfg, _ := config.Read(home)
	return net.JoinHostPort(cfg.Bus.Host, strconv.Itoa(cfg.Bus.Port))
}

func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// serviceDirsName is the file in observer's home that lists the directories service install
// created, for service uninstall to remove once they are empty again.
const serviceDirsName = "service-dirs.json"

type serviceDirsRecord struct {
	Created []string `json:"created"` // deepest first
}

// missingDirs lists dir and those of its parents that do not exist yet, deepest first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

func loadCreatedDirs(home string) []string {
	data, err := os.ReadFile(filepath.Join(home, serviceDirsName))
	if err != nil {
		return nil
	}
	var r serviceDirsRecord
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return r.Created
}

// recordCreatedDirs adds dirs to the record of the directories install created.
func recordCreatedDirs(home string, dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	all := loadCreatedDirs(home)
	for _, d := range dirs {
		if !slices.Contains(all, d) {
			all = append(all, d)
		}
	}
	// Deepest first, so that a parent is tried once its children are gone.
	slices.SortStableFunc(all, func(a, b string) int {
		return strings.Count(b, string(filepath.Separator)) - strings.Count(a, string(filepath.Separator))
	})
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(serviceDirsRecord{Created: all}, "", "  ")
	if err := atomicfile.Write(filepath.Join(home, serviceDirsName), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record the directories install creates: %w", err)
	}
	return nil
}

// removeCreatedDirs removes the directories install created, those that are empty, deepest first;
// the record goes once none is left.
func removeCreatedDirs(w io.Writer, home string, dirs []string) {
	if len(dirs) == 0 {
		return
	}
	path := filepath.Join(home, serviceDirsName)
	os.Remove(path)
	var left []string
	for _, d := range dirs {
		switch err := os.Remove(d); {
		case err == nil:
			fmt.Fprintf(w, "removed %s (install had created it)\n", d)
		case errors.Is(err, fs.ErrNotExist):
		default:
			fmt.Fprintf(w, "left %s: not empty\n", d)
			left = append(left, d)
		}
	}
	if len(left) > 0 && recordCreatedDirs(home, append(left, missingDirs(home)...)) != nil {
		fmt.Fprintf(w, "could not record in %s that install created %s\n", path, strings.Join(left, ", "))
	}
}
