package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
	"github.com/observerhq/observer/pkg/event"
)

// ctlEnv is a user's home and observer's home for an in-process observerctl.
type ctlEnv struct {
	home, obs, codexHome, bin string
}

func newCtlEnv(t *testing.T) *ctlEnv {
	t.Helper()
	dir := t.TempDir()
	e := &ctlEnv{home: filepath.Join(dir, "home"), obs: filepath.Join(dir, "obs"), codexHome: filepath.Join(dir, "codex-home"),
		bin: filepath.Join(dir, "bin", "observer-mcp")}
	for _, d := range []string{e.home, e.codexHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", e.home)
	t.Setenv("OBSERVER_HOME", e.obs)
	t.Setenv("CODEX_HOME", e.codexHome)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "") // doctor reads the service units there: not the developer's own
	t.Setenv("OBSERVER_OTLP_ADDR", "")
	os.Unsetenv("OBSERVER_OTLP_ADDR") // init --otel reads [otlp] addr: the default, not the developer's
	return e
}

func runCtl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"observerctl"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const cliClaude = `{
  "numStartups": 3,
  "mcpServers": {
    "fs": {"type": "stdio", "command": "/bin/true", "args": ["arg1"], "env": {}}
  }
}
`

const cliCodex = `# mine
[mcp_servers.fs]
command = "/bin/true"
args = ["arg1"]
`

func TestInit_MCPDryRunThenInitThenUninstall(t *testing.T) {
	e := newCtlEnv(t)
	claude, codex := filepath.Join(e.home, ".claude.json"), filepath.Join(e.codexHome, "config.toml")
	write(t, claude, cliClaude)
	write(t, codex, cliCodex)

	code, out, errOut := runCtl(t, "init", "--mcp", "--wrap", "fs", "--mcp-bin", e.bin, "--dry-run")
	if code != ExitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"--- " + claude + "\n", "--- " + codex + "\n", `+[mcp_servers.observer]`,
		`+    "observer": {`, "dry run: nothing written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".cursor") {
		t.Errorf("dry run touched Cursor, which is not set up here:\n%s", out)
	}
	if read(t, claude) != cliClaude || read(t, codex) != cliCodex {
		t.Fatal("dry run wrote a file")
	}
	if _, err := os.Stat(e.obs); !os.IsNotExist(err) {
		t.Errorf("dry run created observer's home (%v)", err)
	}

	code, out, errOut = runCtl(t, "init", "--wrap", "fs", "--mcp", "--mcp-bin", e.bin)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "backup: "+claude+".observer-backup-") || !strings.Contains(out, "observerctl uninstall") {
		t.Errorf("init output:\n%s", out)
	}
	d, err := clientconfig.ParseDoc(clientconfig.TOML, []byte(read(t, codex)))
	if err != nil {
		t.Fatal(err)
	}
	if args, _ := d.Lookup("mcp_servers", "observer", "args"); !slices.Equal(toStrings(args), []string{"--home", e.obs}) {
		t.Errorf("observer args %v: --home must be passed for a home that is not ~/.observer", args)
	}
	if args, _ := d.Lookup("mcp_servers", "fs", "args"); !slices.Equal(toStrings(args), []string{"--home", e.obs, "wrap", "--", "/bin/true", "arg1"}) {
		t.Errorf("fs args %v", args)
	}

	code, out, _ = runCtl(t, "init", "--mcp", "--wrap", "fs", "--mcp-bin", e.bin)
	if code != ExitOK || !strings.Contains(out, "nothing to change") {
		t.Errorf("second init: exit %d\n%s", code, out)
	}

	code, out, errOut = runCtl(t, "uninstall")
	if code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if read(t, claude) != cliClaude || read(t, codex) != cliCodex {
		t.Errorf("uninstall did not restore the files:\n%s\n%s", read(t, claude), read(t, codex))
	}
	for _, want := range []string{"removed mcpServers.observer", "restored mcp_servers.fs.command"} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCtl(t, "uninstall")
	if code != ExitOK || !strings.Contains(out, "nothing to undo") {
		t.Errorf("second uninstall: exit %d\n%s", code, out)
	}
}

func TestInit_ExitCodes(t *testing.T) {
	t.Run("unknown client", func(t *testing.T) {
		e := newCtlEnv(t)
		if code, _, errOut := runCtl(t, "init", "--mcp", "--client", "vim", "--mcp-bin", e.bin); code != ExitUsage || !strings.Contains(errOut, "claude-code, codex, cursor") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("no client found", func(t *testing.T) {
		e := newCtlEnv(t)
		os.Remove(e.codexHome)
		if code, _, errOut := runCtl(t, "init", "--mcp", "--mcp-bin", e.bin); code != ExitUnavailable || !strings.Contains(errOut, "--client") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("named client is created", func(t *testing.T) {
		e := newCtlEnv(t)
		if code, out, errOut := runCtl(t, "init", "--mcp", "--client", "cursor", "--mcp-bin", e.bin); code != ExitOK {
			t.Fatalf("exit %d, %s%s", code, out, errOut)
		}
		if s := read(t, filepath.Join(e.home, ".cursor", "mcp.json")); !strings.Contains(s, e.bin) {
			t.Errorf("mcp.json: %s", s)
		}
	})
	t.Run("wrap unknown server", func(t *testing.T) {
		e := newCtlEnv(t)
		write(t, filepath.Join(e.codexHome, "config.toml"), cliCodex)
		code, _, errOut := runCtl(t, "init", "--mcp", "--wrap", "fs", "--wrap", "nosuch", "--mcp-bin", e.bin)
		if code != ExitUsage || !strings.Contains(errOut, "nosuch") || strings.Contains(errOut, "fs,") {
			t.Errorf("exit %d, %s", code, errOut)
		}
		if read(t, filepath.Join(e.codexHome, "config.toml")) != cliCodex {
			t.Error("a file was written although a --wrap name was not found")
		}
	})
	t.Run("malformed config", func(t *testing.T) {
		e := newCtlEnv(t)
		write(t, filepath.Join(e.codexHome, "config.toml"), cliCodex)
		write(t, filepath.Join(e.home, ".claude.json"), `{"numStartups": 3,`)
		code, _, errOut := runCtl(t, "init", "--mcp", "--mcp-bin", e.bin)
		if code != ExitBadInput || !strings.Contains(errOut, ".claude.json") {
			t.Errorf("exit %d, %s", code, errOut)
		}
		if read(t, filepath.Join(e.codexHome, "config.toml")) != cliCodex {
			t.Error("codex's config was written although claude's is malformed")
		}
	})
	t.Run("name taken", func(t *testing.T) {
		e := newCtlEnv(t)
		write(t, filepath.Join(e.codexHome, "config.toml"), cliCodex)
		code, _, errOut := runCtl(t, "init", "--mcp", "--name", "fs", "--mcp-bin", e.bin)
		if code != ExitBadInput || !strings.Contains(errOut, "--name") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("observer-mcp not found", func(t *testing.T) {
		newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		code, _, errOut := runCtl(t, "init", "--mcp", "--client", "codex")
		if code != ExitUnavailable || !strings.Contains(errOut, "--mcp-bin") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("observer-mcp on PATH", func(t *testing.T) {
		e := newCtlEnv(t)
		dir := t.TempDir()
		write(t, filepath.Join(dir, "observer-mcp"), "#!/bin/sh\n")
		os.Chmod(filepath.Join(dir, "observer-mcp"), 0o755)
		t.Setenv("PATH", dir)
		if code, out, errOut := runCtl(t, "init", "--mcp", "--client", "codex"); code != ExitOK {
			t.Fatalf("exit %d, %s%s", code, out, errOut)
		}
		if s := read(t, filepath.Join(e.codexHome, "config.toml")); !strings.Contains(s, `command = "`+filepath.Join(dir, "observer-mcp")+`"`) {
			t.Errorf("config.toml:\n%s", s)
		}
	})
	t.Run("uninstall keeps user edit", func(t *testing.T) {
		e := newCtlEnv(t)
		codex := filepath.Join(e.codexHome, "config.toml")
		write(t, codex, cliCodex)
		if code, out, errOut := runCtl(t, "init", "--wrap", "fs", "--mcp-bin", e.bin); code != ExitOK {
			t.Fatalf("exit %d, %s%s", code, out, errOut)
		}
		write(t, codex, strings.Replace(read(t, codex), `"arg1"]`, `"arg2"]`, 1))
		code, out, errOut := runCtl(t, "uninstall")
		if code != ExitFailure || !strings.Contains(out, "left mcp_servers.fs.args as it is") || !strings.Contains(errOut, "--force") {
			t.Errorf("exit %d\n%s%s", code, out, errOut)
		}
		if code, out, errOut := runCtl(t, "uninstall", "--force"); code != ExitOK || read(t, codex) != cliCodex {
			t.Errorf("uninstall --force: exit %d\n%s%s\n%s", code, out, errOut, read(t, codex))
		}
	})
}

func TestInitHelp_DocumentsExitCodes(t *testing.T) {
	for _, cmd := range []string{"init", "uninstall"} {
		code, out, _ := runCtl(t, cmd, "--help")
		if code != ExitOK || !strings.Contains(out, "Exit codes: 0") || !strings.Contains(out, " 65 ") {
			t.Errorf("%s --help (exit %d) does not document its exit codes:\n%s", cmd, code, out)
		}
	}
}

// TestInit_RealClients registers observer-mcp and wraps a server that the real clients added
// themselves, checks that Claude Code and Codex read the result, and that uninstall gives them
// back their own entry. The clients only list their servers: no model is called. A server's
// health check in `claude mcp list` is bounded by MCP_TIMEOUT (the commands here exit at once).
func TestInit_RealClients(t *testing.T) {
	claudeBin, codexBin := realclient.FindClaude(t), realclient.FindCodex(t)
	e := newCtlEnv(t)
	claudeEnv := []string{"HOME=" + e.home, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "MCP_TIMEOUT=5000"}
	codexEnv := []string{"HOME=" + e.home, "CODEX_HOME=" + e.codexHome}
	claude := func(args ...string) string { return realclient.Run(t, e.home, claudeEnv, claudeBin, args...) }
	codex := func(args ...string) string { return realclient.Run(t, e.home, codexEnv, codexBin, args...) }

	claude("mcp", "add", "-s", "user", "fs", "--", "/bin/true", "arg1")
	codex("mcp", "add", "fs", "--env", "K=v", "--", "/bin/true", "arg1")

	if code, out, errOut := runCtl(t, "init", "--mcp", "--wrap", "fs", "--mcp-bin", e.bin); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	wrapped := strings.Join([]string{"--home", e.obs, "wrap", "--", "/bin/true", "arg1"}, " ")
	list := claude("mcp", "list")
	for _, want := range []string{"observer: " + e.bin + " --home " + e.obs + " - ", "fs: " + e.bin + " " + wrapped + " - "} {
		if !strings.Contains(list, want) {
			t.Errorf("claude mcp list lacks %q:\n%s", want, list)
		}
	}
	if get := claude("mcp", "get", "fs"); !strings.Contains(get, "Command: "+e.bin+"\n") || !strings.Contains(get, "Args: "+wrapped+"\n") {
		t.Errorf("claude mcp get fs:\n%s", get)
	}
	servers := codexServers(t, codex("mcp", "list", "--json"))
	if s := servers["observer"]; s.Command != e.bin || !slices.Equal(s.Args, []string{"--home", e.obs}) {
		t.Errorf("codex sees observer as %+v", s)
	}
	if s := servers["fs"]; s.Command != e.bin || strings.Join(s.Args, " ") != wrapped || s.Env["K"] != "v" {
		t.Errorf("codex sees fs as %+v", s)
	}

	// `claude mcp list` rewrote .claude.json in its own format meanwhile: uninstall still finds
	// exactly its keys.
	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	list = claude("mcp", "list")
	if strings.Contains(list, "observer:") || !strings.Contains(list, "fs: /bin/true arg1 - ") {
		t.Errorf("after uninstall, claude mcp list:\n%s", list)
	}
	servers = codexServers(t, codex("mcp", "list", "--json"))
	if _, ok := servers["observer"]; ok {
		t.Error("codex still lists observer")
	}
	if s := servers["fs"]; s.Command != "/bin/true" || !slices.Equal(s.Args, []string{"arg1"}) || s.Env["K"] != "v" {
		t.Errorf("after uninstall codex sees fs as %+v", s)
	}
}

type codexServer struct {
	Command string
	Args    []string
	Env     map[string]string
}

func codexServers(t *testing.T, out string) map[string]codexServer {
	t.Helper()
	var list []struct {
		Name      string `json:"name"`
		Transport struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"transport"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("codex mcp list --json: %v\n%s", err, out)
	}
	m := map[string]codexServer{}
	for _, s := range list {
		m[s.Name] = codexServer{s.Transport.Command, s.Transport.Args, s.Transport.Env}
	}
	return m
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// mainEnv makes this test binary run as observerctl (see TestMain): the hook command init
// registers is this binary's path, and a client running it gets the real observerctl.
const mainEnv = "OBSERVERCTL_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// hookFiles are a user's three hooks files, and their MCP configs, holding hooks and servers of
// the user's own, written in different styles.
type hookFiles struct {
	settings, codexHooks, cursorHooks, claudeJSON, codexTOML string
}

const userSettings = "{\r\n\t\"permissions\": {\r\n\t\t\"allow\": [\"Bash(ls:*)\"]\r\n\t},\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [\r\n\t\t\t{\r\n\t\t\t\t\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]\r\n\t\t\t}\r\n\t\t],\r\n\t\t\"PreToolUse\": [\r\n\t\t\t{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"~/bin/guard\", \"timeout\": 5}]}\r\n\t\t]\r\n\t}\r\n}\r\n"

const userCodexHooks = `{"hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"sh ~/start.sh"}]}],"PermissionRequest":[{"hooks":[{"type":"command","command":"perm"}]}]}}`

func writeHookFiles(t *testing.T, e *ctlEnv) hookFiles {
	t.Helper()
	f := hookFiles{
		settings:    filepath.Join(e.home, ".claude", "settings.json"),
		codexHooks:  filepath.Join(e.codexHome, "hooks.json"),
		cursorHooks: filepath.Join(e.home, ".cursor", "hooks.json"),
		claudeJSON:  filepath.Join(e.home, ".claude.json"),
		codexTOML:   filepath.Join(e.codexHome, "config.toml"),
	}
	write(t, f.settings, userSettings)
	write(t, f.codexHooks, userCodexHooks)
	os.MkdirAll(filepath.Dir(f.cursorHooks), 0o700) // Cursor is set up, without hooks yet
	write(t, f.claudeJSON, cliClaude)
	write(t, f.codexTOML, cliCodex)
	return f
}

func (f hookFiles) originals() map[string]string {
	return map[string]string{f.settings: userSettings, f.codexHooks: userCodexHooks, f.claudeJSON: cliClaude, f.codexTOML: cliCodex}
}

// hookCommandFor is the command init registers here: this binary, stood in for observerctl.
func hookCommandFor(t *testing.T, e *ctlEnv, client string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe + " --home " + e.obs + " hook --client " + client
}

// hookCommands returns every "command" string in a JSON hooks file, by event.
func hookCommands(t *testing.T, path string) map[string][]string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Command string `json:"command"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(read(t, path)), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]string{}
	for ev, groups := range doc.Hooks {
		for _, g := range groups {
			if g.Command != "" {
				out[ev] = append(out[ev], g.Command)
			}
			for _, h := range g.Hooks {
				out[ev] = append(out[ev], h.Command)
			}
		}
	}
	return out
}

// TestInit_HooksThenUninstall: plain init registers the hook for every client found, beside the
// user's own hooks; init again changes nothing; with --mcp on top, uninstall gives every file back
// byte for byte and removes the hooks file init created.
func TestInit_HooksThenUninstall(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)

	code, out, errOut := runCtl(t, "init", "--dry-run")
	if code != ExitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"--- " + f.settings + "\n", "--- " + f.codexHooks + "\n", "--- " + f.cursorHooks + "\n",
		hookCommandFor(t, e, "cursor"), "dry run: nothing written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(f.cursorHooks); !os.IsNotExist(err) {
		t.Fatal("dry run created Cursor's hooks.json")
	}

	code, out, errOut = runCtl(t, "init")
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"added an entry to hooks.PreToolUse (observer hook)", "backup: " + f.settings + ".observer-backup-",
		"note: Codex runs a new hook only once you trust it", "observerctl uninstall"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	for client, file := range map[string]string{"claude-code": f.settings, "codex": f.codexHooks, "cursor": f.cursorHooks} {
		cmds := hookCommands(t, file)
		want := hookCommandFor(t, e, client)
		for _, ev := range clientconfig.HookEvents[client] {
			if c := cmds[ev]; len(c) == 0 || c[len(c)-1] != want {
				t.Errorf("%s: %s runs %q, want %q last", client, ev, c, want)
			}
		}
	}
	// The user's hooks are still there and first.
	if c := hookCommands(t, f.settings); !slices.Equal(c["Stop"], []string{"notify-send done", hookCommandFor(t, e, "claude-code")}) ||
		c["PreToolUse"][0] != "~/bin/guard" {
		t.Errorf("settings.json hooks: %v", c)
	}
	if c := hookCommands(t, f.codexHooks); !slices.Equal(c["PermissionRequest"], []string{"perm"}) {
		t.Errorf("codex PermissionRequest %v: observer must not hook decision events", c["PermissionRequest"])
	}
	if s := read(t, f.settings); strings.Count(s, "\n") != strings.Count(s, "\r\n") || !strings.Contains(s, "\t\t\t{\r\n\t\t\t\t\"matcher\": \"*\",\r\n") {
		t.Errorf("settings.json lost its tabs and CRLF:\n%q", s)
	}
	if s := read(t, f.claudeJSON); s != cliClaude {
		t.Error("init --hooks touched .claude.json")
	}
	after := map[string]string{f.settings: read(t, f.settings), f.codexHooks: read(t, f.codexHooks), f.cursorHooks: read(t, f.cursorHooks)}

	code, out, _ = runCtl(t, "init", "--hooks")
	if code != ExitOK || !strings.Contains(out, "nothing to change") {
		t.Errorf("second init: exit %d\n%s", code, out)
	}
	for file, want := range after {
		if read(t, file) != want {
			t.Errorf("second init changed %s", file)
		}
	}

	if code, out, errOut := runCtl(t, "init", "--hooks", "--mcp", "--mcp-bin", e.bin); code != ExitOK || !strings.Contains(out, "mcpServers.observer") {
		t.Fatalf("init --hooks --mcp: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCtl(t, "uninstall")
	if code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for file, want := range f.originals() {
		if got := read(t, file); got != want {
			t.Errorf("uninstall did not restore %s:\n%q\nwant\n%q", file, got, want)
		}
	}
	if _, err := os.Stat(f.cursorHooks); !os.IsNotExist(err) {
		t.Errorf("uninstall left the hooks.json init created (%v)", err)
	}
	if !strings.Contains(out, "removed the entry init added to hooks.Stop") || !strings.Contains(out, "removed the file, which init had created") {
		t.Errorf("uninstall output:\n%s", out)
	}
}

// TestInit_HooksClients: clients are found by their directories or their commands on PATH;
// --client picks; none found is exit 69.
func TestInit_HooksClients(t *testing.T) {
	t.Run("command on PATH", func(t *testing.T) {
		e := newCtlEnv(t)
		os.Remove(e.codexHome)
		bin := t.TempDir()
		write(t, filepath.Join(bin, "claude"), "#!/bin/sh\n")
		os.Chmod(filepath.Join(bin, "claude"), 0o755)
		t.Setenv("PATH", bin)
		code, out, errOut := runCtl(t, "init")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if c := hookCommands(t, filepath.Join(e.home, ".claude", "settings.json")); len(c) != len(clientconfig.HookEvents["claude-code"]) {
			t.Errorf("settings.json hooks %v", c)
		}
		if strings.Contains(out, "codex") || strings.Contains(out, ".cursor") {
			t.Errorf("init touched a client that is not installed:\n%s", out)
		}
	})
	t.Run("--client", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		code, out, errOut := runCtl(t, "init", "--client", "cursor")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(e.codexHome, "hooks.json")); !os.IsNotExist(err) {
			t.Error("--client cursor wrote Codex's hooks")
		}
		var doc struct {
			Version int `json:"version"`
		}
		if json.Unmarshal([]byte(read(t, filepath.Join(e.home, ".cursor", "hooks.json"))), &doc); doc.Version != 1 {
			t.Errorf("Cursor's hooks.json version %d, want 1", doc.Version)
		}
	})
	t.Run("none found", func(t *testing.T) {
		e := newCtlEnv(t)
		os.Remove(e.codexHome)
		t.Setenv("PATH", t.TempDir())
		if code, _, errOut := runCtl(t, "init"); code != ExitUnavailable || !strings.Contains(errOut, "--client") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
}

// TestInit_HooksMalformed: a hooks file that does not parse, or whose hooks are not an object,
// stops init with exit 65 before any file is written.
func TestInit_HooksMalformed(t *testing.T) {
	for name, bad := range map[string]string{"not JSON": `{"hooks": {"Stop": [`, "hooks a list": `{"hooks": []}`} {
		t.Run(name, func(t *testing.T) {
			e := newCtlEnv(t)
			t.Setenv("PATH", t.TempDir())
			f := writeHookFiles(t, e)
			write(t, f.settings, bad)
			code, _, errOut := runCtl(t, "init")
			if code != ExitBadInput || !strings.Contains(errOut, f.settings) {
				t.Errorf("exit %d, %s", code, errOut)
			}
			if read(t, f.settings) != bad || read(t, f.codexHooks) != userCodexHooks {
				t.Error("a file was written")
			}
			if _, err := os.Stat(f.cursorHooks); !os.IsNotExist(err) {
				t.Error("Cursor's hooks.json was created")
			}
			if _, err := os.Stat(clientconfig.ManifestPath(e.obs)); !os.IsNotExist(err) {
				t.Error("manifest written")
			}
		})
	}
}

// TestInit_HooksUninstallAfterUserEdits: uninstall keeps the user's edit of their own hook; an
// entry of observer's the user edited stays (exit 1) until --force.
func TestInit_HooksUninstallAfterUserEdits(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	if code, out, errOut := runCtl(t, "init"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	write(t, f.settings, strings.Replace(read(t, f.settings), "notify-send done", "notify-send finished", 1))
	cursorCmd := hookCommandFor(t, e, "cursor")
	cmdJSON, _ := json.Marshal(cursorCmd)
	edited := strings.Replace(read(t, f.cursorHooks), `"command": `+string(cmdJSON)+"\n", `"command": `+string(cmdJSON)+`, "timeout": 5`+"\n", 1)
	if edited == read(t, f.cursorHooks) {
		t.Fatalf("could not edit Cursor's entry:\n%s", edited)
	}
	write(t, f.cursorHooks, edited)

	code, out, errOut := runCtl(t, "uninstall")
	if code != ExitFailure || !strings.Contains(out, "left the entry init added to hooks.sessionStart as it is") || !strings.Contains(errOut, "--force") {
		t.Errorf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if got, want := read(t, f.settings), strings.Replace(userSettings, "notify-send done", "notify-send finished", 1); got != want {
		t.Errorf("settings.json after uninstall:\n%q\nwant the user's edit kept:\n%q", got, want)
	}
	if read(t, f.codexHooks) != userCodexHooks {
		t.Error("codex hooks.json not restored")
	}
	if c := hookCommands(t, f.cursorHooks); len(c) != 1 || len(c["sessionStart"]) != 1 {
		t.Errorf("Cursor's hooks after uninstall: %v, want only the edited entry", c)
	}
	if code, out, errOut := runCtl(t, "uninstall", "--force"); code != ExitOK {
		t.Fatalf("uninstall --force: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(f.cursorHooks); !os.IsNotExist(err) {
		t.Errorf("uninstall --force left Cursor's hooks.json (%v)", err)
	}
}

// runAsObserverctl runs this test binary as observerctl, with stdin.
func runAsObserverctl(t *testing.T, stdin string, env []string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// Under -race a process sleeps a second at exit (GORACE atexit_sleep_ms) unless told not to.
	cmd.Env = append(append(os.Environ(), mainEnv+"=1", "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, o.String(), e.String(), took
}

// spooled reads the hook events spooled in home.
func spooled(t *testing.T, home string) []event.Event {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "spool", "*.jsonl"))
	var out []event.Event
	for _, f := range files {
		for _, line := range strings.Split(strings.TrimSpace(read(t, f)), "\n") {
			ev, err := event.Decode([]byte(line))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if ev.Kind == event.KindHook {
				out = append(out, ev)
			}
		}
	}
	return out
}

// TestHook_SuiteDownFastAndSilent runs the real `observerctl hook` process as a client would,
// with observer down (never started; started once, token left, nothing listening): it exits 0,
// prints nothing on stdout, and spools the event.
func TestHook_SuiteDownFastAndSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, c := range []struct {
		name, client, payload, session string
		token                          bool
	}{
		{"never started", "claude-code", `{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "s1", false},
		{"bus gone", "codex", `{"session_id":"s2","transcript_path":null,"cwd":"/tmp","hook_event_name":"SessionStart","source":"startup","model":"m"}`, "s2", true},
		{"cursor payload", "cursor", `{"conversation_id":"c3","generation_id":"g","hook_event_name":"afterFileEdit","workspace_roots":["/tmp"],"file_path":"/tmp/x"}`, "c3", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			if c.token {
				write(t, filepath.Join(home, "bus.token"), "tok\n")
			}
			code, stdout, stderr, took := runAsObserverctl(t, c.payload, []string{"OBSERVER_BUS_PORT=" + strconv.Itoa(closedPort)},
				"--home", home, "hook", "--client", c.client)
			if code != 0 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			// Its latency is scripts/bench-hook.sh's to measure, not a test's to assert.
			t.Logf("hook with observer down: %v", took.Round(time.Millisecond))
			evs := spooled(t, home)
			if len(evs) != 1 || evs[0].SessionID != c.session || evs[0].Client != c.client || evs[0].Hook.Cwd != "/tmp" {
				t.Errorf("spooled %+v", evs)
			}
		})
	}
}

// TestInitHooks_RealClients registers the hooks with init, then runs the real Claude Code and
// Codex (offline, against the fake API) with observer down: every lifecycle and tool event reaches
// the handler (spooled for observer), the clients finish their turn as usual, and uninstall gives
// the files back. Codex runs a hook only once the user trusted it, which the test stands in for
// with --dangerously-bypass-hook-trust.
func TestInitHooks_RealClients(t *testing.T) {
	claudeBin, codexBin := realclient.FindClaude(t), realclient.FindCodex(t)
	e := newCtlEnv(t)
	t.Setenv("PATH", realclient.PathWith(filepath.Dir(claudeBin), filepath.Dir(codexBin)))
	f := writeHookFiles(t, e)
	if code, out, errOut := runCtl(t, "init", "--client", "claude-code,codex"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	api := httptest.NewServer(fakeapi.New(fakeapi.Config{}))
	defer api.Close()
	repo := filepath.Join(e.home, "repo")
	os.MkdirAll(repo, 0o700)
	git := exec.Command("git", "init", "-q", repo)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// The hooks run this test binary as observerctl; the clients pass their environment on.
	env := []string{mainEnv + "=1"}

	claudeOut := realclient.Run(t, repo, append(realclient.ClaudeEnv(e.home, api.URL), env...), claudeBin, realclient.ClaudeArgs("list the files")...)
	if !strings.Contains(claudeOut, fakeapi.TextAfterTool) {
		t.Errorf("claude printed %q", claudeOut)
	}
	codexEnv := append(realclient.CodexEnv(e.home), append(env, "CODEX_HOME="+e.codexHome)...)
	codexArgs := realclient.CodexArgs(api.URL+"/v1", "list the files", false)
	codexArgs = append(codexArgs[:1], append([]string{"--dangerously-bypass-hook-trust"}, codexArgs[1:]...)...)
	codexOut := realclient.Run(t, repo, codexEnv, codexBin, codexArgs...)
	if !strings.Contains(codexOut, fakeapi.TextAfterTool) {
		t.Errorf("codex printed %q", codexOut)
	}

	got := map[string]map[string]int{}
	sessions := map[string]map[string]bool{}
	for _, ev := range spooled(t, e.obs) {
		if got[ev.Client] == nil {
			got[ev.Client], sessions[ev.Client] = map[string]int{}, map[string]bool{}
		}
		got[ev.Client][ev.Hook.Event]++
		sessions[ev.Client][ev.SessionID] = true
		if ev.Hook.Cwd == "" || ev.Project == "" {
			t.Errorf("%s %s event without cwd or project: %+v", ev.Client, ev.Hook.Event, ev)
		}
	}
	for _, client := range []string{"claude-code", "codex"} {
		for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"} {
			if got[client][ev] == 0 {
				t.Errorf("%s: no %s hook event reached observer; got %v", client, ev, got[client])
			}
		}
		if len(sessions[client]) != 1 || sessions[client][""] {
			t.Errorf("%s: sessions %v, want one", client, sessions[client])
		}
	}

	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for _, file := range []string{f.settings, f.codexHooks} {
		if got := read(t, file); got != f.originals()[file] {
			t.Errorf("uninstall did not restore %s:\n%q", file, got)
		}
	}
}

// TestInit_JSON: init and uninstall report the same files in JSON as in text: a dry run with
// diffs and nothing written, then init with backups, then uninstall restoring every file.
func TestInit_JSON(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	before := read(t, f.settings)
	run := func(args ...string) configReport {
		t.Helper()
		code, out, errOut := runCtl(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		var r configReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return r
	}
	files := func(r configReport) map[string]clientconfig.FileReport {
		m := map[string]clientconfig.FileReport{}
		for _, x := range r.Files {
			m[x.File] = x
		}
		return m
	}
	dry := run("init", "--dry-run", "--json")
	if m := files(dry); !dry.DryRun || !m[f.settings].Changed || !strings.Contains(m[f.settings].Diff, "--- "+f.settings) || len(m) != 3 {
		t.Errorf("init --dry-run --json: %+v", dry)
	}
	if read(t, f.settings) != before {
		t.Fatal("the dry run wrote settings.json")
	}
	done := run("init", "--json")
	if m := files(done); done.DryRun || !m[f.settings].Changed || m[f.settings].Backup == "" ||
		!strings.HasSuffix(done.Manifest, clientconfig.ManifestName) {
		t.Errorf("init --json: %+v", done)
	}
	undone := run("uninstall", "--json")
	if m := files(undone); !m[f.settings].Changed || len(m) != 3 {
		t.Errorf("uninstall --json: %+v", undone)
	}
	if read(t, f.settings) != before {
		t.Error("uninstall did not restore settings.json")
	}
	if again := run("uninstall", "--json"); len(again.Files) != 0 {
		t.Errorf("a second uninstall --json: %+v", again)
	}
}

// TestInit_WarnsWhenNotInstalled: init from binaries that will not last (here this test binary,
// in go's temporary build directory) says so on stderr, with the command that installs them and
// registers the installed ones; nothing to change, nothing said. From an installed location
// (on PATH) nothing is said.
func TestInit_WarnsWhenNotInstalled(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	writeHookFiles(t, e)
	code, out, errOut := runCtl(t, "init", "--client", "claude-code", "--dry-run")
	want := "make install && " + filepath.Join(e.home, ".local", "bin", "observerctl") + " --home " + e.obs + " init --client claude-code"
	if code != ExitOK || !strings.Contains(errOut, "observerctl: warning: the clients will run "+strings.Fields(hookCommandFor(t, e, "claude-code"))[0]) ||
		!strings.Contains(errOut, "every hook breaks") || !strings.Contains(errOut, want) || strings.Contains(out, "warning") {
		t.Errorf("init --dry-run: exit %d, want on stderr %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	if code, _, errOut = runCtl(t, "init", "--json"); code != ExitOK || !strings.Contains(errOut, "warning") {
		t.Errorf("init --json: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut = runCtl(t, "init"); code != ExitOK || errOut != "" {
		t.Errorf("init with nothing to change: exit %d, stderr %q", code, errOut)
	}

	for _, c := range []struct {
		name      string
		setup     func(dir string) placement
		problem   string
		installIs string
	}{
		{"checkout", func(dir string) placement {
			write(t, filepath.Join(dir, "go.mod"), "module github.com/observerhq/observer\n\ngo 1.26\n")
			return binPlacement(filepath.Join(dir, "bin"))
		}, "in the build tree of the checkout", "make -C "},
		{"another module", func(dir string) placement {
			write(t, filepath.Join(dir, "go.mod"), "module example.com/other\n")
			return binPlacement(filepath.Join(dir, "bin"))
		}, "not in an installed location", "make install && "},
		{"on PATH", func(dir string) placement {
			t.Setenv("PATH", filepath.Join(dir, "bin"))
			return binPlacement(filepath.Join(dir, "bin"))
		}, "", ""},
		{"make install's prefix", func(dir string) placement {
			t.Setenv("HOME", dir)
			return binPlacement(filepath.Join(dir, ".local", "bin"))
		}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", filepath.Join(dir, "tmp")) // t.TempDir is not temporary here
			os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
			p := c.setup(dir)
			if got := p.problem(); c.problem == "" && got != "" || !strings.Contains(got, c.problem) {
				t.Errorf("problem %q, want %q", got, c.problem)
			}
			if c.installIs != "" && !strings.HasPrefix(installCommand(p, "init"), c.installIs) {
				t.Errorf("install command %q", installCommand(p, "init"))
			}
		})
	}
}

// TestInit_DryRunMasksSecrets: the diffs of init --dry-run (and --json) show no env value of an MCP
// server and no secret-named value; the files are written with the real values.
func TestInit_DryRunMasksSecrets(t *testing.T) {
	e := newCtlEnv(t)
	claude := filepath.Join(e.home, ".claude.json")
	orig := `{
  "primaryApiKey": "sk-ant-api03-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
  "projects": {
    "/home/me/app": {
      "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "server-github"], "env": {"GITHUB_TOKEN": "plain-secret-value"}}
      }
    }
  },
  "mcpServers": {
    "db": {
      "type": "stdio",
      "command": "db-mcp",
      "args": [],
      "env": {
        "DB_URL": "postgres://me:hunter2@localhost/app"
      }
    }
  }
}
`
	write(t, claude, orig)
	os.Remove(e.codexHome)
	for _, args := range [][]string{{"init", "--mcp", "--wrap", "github,db", "--mcp-bin", e.bin, "--dry-run"}, {"init", "--mcp", "--wrap", "github,db", "--mcp-bin", e.bin, "--dry-run", "--json"}} {
		code, out, errOut := runCtl(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		for _, secret := range []string{"plain-secret-value", "hunter2", "sk-ant-api03"} {
			if strings.Contains(out, secret) {
				t.Errorf("%v shows %q:\n%s", args, secret, out)
			}
		}
		if !strings.Contains(out, "REDACTED") || !strings.Contains(out, "wrap") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	if code, out, errOut := runCtl(t, "init", "--mcp", "--wrap", "github,db", "--mcp-bin", e.bin); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if s := read(t, claude); !strings.Contains(s, "plain-secret-value") || !strings.Contains(s, "hunter2") {
		t.Errorf("init wrote masked values:\n%s", s)
	}
	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK || read(t, claude) != orig {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := filepath.Glob(claude + ".observer-backup-*"); len(b) != 0 {
		t.Errorf("backups left after uninstall: %v", b)
	}
}

// TestUninstall_EditedHookCommand: a hook entry of observer's whose command the user edited is
// reported (exit 1, naming the entry and the file), stays with the manifest, and goes with --force;
// then no backup is left.
func TestUninstall_EditedHookCommand(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	if code, out, errOut := runCtl(t, "init", "--client", "claude-code"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	cmd, _ := json.Marshal(hookCommandFor(t, e, "claude-code"))
	edited, _ := json.Marshal("/usr/local/bin/observerctl --home " + e.obs + " hook --client claude-code")
	text := read(t, f.settings)
	i := strings.Index(text, `"Stop"`)
	i += strings.Index(text[i:], string(cmd))
	write(t, f.settings, text[:i]+string(edited)+text[i+len(cmd):])

	code, out, errOut := runCtl(t, "uninstall")
	if code != ExitFailure || !strings.Contains(out, "left the entry init added to hooks.Stop as it is: it changed since init (it now runs") ||
		!strings.Contains(errOut, "hooks.Stop in "+f.settings) || !strings.Contains(errOut, "uninstall --force") {
		t.Errorf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(clientconfig.ManifestPath(e.obs)); err != nil {
		t.Errorf("the manifest is gone with an entry left (%v)", err)
	}
	if c := hookCommands(t, f.settings); len(c["Stop"]) != 2 || len(c["SessionStart"]) != 0 {
		t.Errorf("hooks after uninstall: %v", c)
	}
	if code, out, errOut := runCtl(t, "uninstall", "--force"); code != ExitOK || !strings.Contains(out, "removed the entry init added to hooks.Stop") {
		t.Fatalf("uninstall --force: exit %d\n%s%s", code, out, errOut)
	}
	if got := read(t, f.settings); got != userSettings {
		t.Errorf("settings.json after --force:\n%q", got)
	}
	if b, _ := filepath.Glob(f.settings + ".observer-backup-*"); len(b) != 0 {
		t.Errorf("backups left: %v", b)
	}
	if code, out, _ := runCtl(t, "uninstall", "--force"); code != ExitOK || !strings.Contains(out, "nothing to undo") {
		t.Errorf("uninstall again: exit %d\n%s", code, out)
	}
}

// TestUninstall_CodexTrustRecords: uninstall removes the [hooks.state] records Codex wrote in
// config.toml for observer's hooks (and says so), and leaves the rest of the file byte for byte.
func TestUninstall_CodexTrustRecords(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	if code, out, errOut := runCtl(t, "init", "--client", "codex"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	trusted := cliCodex + "\n[hooks.state.\"" + f.codexHooks + ":session_start:0:0\"]\ntrusted_hash = \"sha256:aaaa\"\n" +
		"\n[hooks.state.\"" + f.codexHooks + ":session_start:1:0\"]\ntrusted_hash = \"sha256:bbbb\"\n" +
		"\n[hooks.state.\"" + f.codexHooks + ":post_tool_use:0:0\"]\ntrusted_hash = \"sha256:cccc\"\n"
	write(t, f.codexTOML, trusted)
	code, out, errOut := runCtl(t, "uninstall")
	if code != ExitOK || !strings.Contains(out, "removed 2 trust record(s) Codex kept for observer's hooks in "+f.codexHooks) {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	want := cliCodex + "\n[hooks.state.\"" + f.codexHooks + ":session_start:0:0\"]\ntrusted_hash = \"sha256:aaaa\"\n"
	if got := read(t, f.codexTOML); got != want {
		t.Errorf("config.toml:\n%s\nwant\n%s", got, want)
	}
	if read(t, f.codexHooks) != userCodexHooks {
		t.Error("hooks.json not restored")
	}
}

// otelEnv returns the telemetry variables of the env object in Claude Code's settings.json.
func otelEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	var doc struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal([]byte(read(t, path)), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.Env
}

// TestInit_OTelThenUninstall: init --otel shows its diffs in a dry run and writes nothing; then it
// writes Claude Code's env variables and Codex's [otel] table (comments kept) and nothing else (no
// hooks); init again changes nothing; uninstall gives both files back byte for byte.
func TestInit_OTelThenUninstall(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)

	code, out, errOut := runCtl(t, "init", "--otel", "--dry-run")
	if code != ExitOK {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"--- " + f.settings + "\n", "--- " + f.codexTOML + "\n", `"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"`,
		`+exporter = { otlp-http = { endpoint = "http://127.0.0.1:4318/v1/logs", protocol = "binary" } }`, "dry run: nothing written", "observerctl up"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hooks.json") || strings.Contains(out, ".cursor") {
		t.Errorf("init --otel alone touched the hooks or Cursor:\n%s", out)
	}
	for file, want := range f.originals() {
		if read(t, file) != want {
			t.Fatalf("the dry run wrote %s", file)
		}
	}
	if _, err := os.Stat(e.obs); !os.IsNotExist(err) {
		t.Errorf("dry run created observer's home (%v)", err)
	}

	code, out, errOut = runCtl(t, "init", "--otel")
	if code != ExitOK {
		t.Fatalf("init --otel: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"added env.OTEL_EXPORTER_OTLP_ENDPOINT (observer OTel)", "added otel (observer OTel)", "observerctl uninstall"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	env := otelEnv(t, f.settings)
	for k, want := range map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": "otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_LOGS_EXPORT_INTERVAL": "5000"} {
		if env[k] != want {
			t.Errorf("env.%s = %q, want %q", k, env[k], want)
		}
	}
	if _, ok := env["OTEL_LOG_USER_PROMPTS"]; ok || len(env) != 6 {
		t.Errorf("env %v: want the six variables, and no prompts", env)
	}
	if c := hookCommands(t, f.settings); len(c["Stop"]) != 1 || len(c["SessionStart"]) != 0 {
		t.Errorf("init --otel registered hooks: %v", c)
	}
	if s := read(t, f.settings); strings.Count(s, "\n") != strings.Count(s, "\r\n") || !strings.Contains(s, "\t\"env\": {\r\n\t\t\"CLAUDE_CODE_ENABLE_TELEMETRY\": \"1\",\r\n") {
		t.Errorf("settings.json lost its tabs and CRLF:\n%q", s)
	}
	codex := read(t, f.codexTOML)
	d, err := clientconfig.ParseDoc(clientconfig.TOML, []byte(codex))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"exporter": "http://127.0.0.1:4318/v1/logs", "metrics_exporter": "http://127.0.0.1:4318/v1/metrics"} {
		if v, _ := d.Lookup("otel", k, "otlp-http", "endpoint"); v != want {
			t.Errorf("otel.%s endpoint %v, want %s", k, v, want)
		}
		if v, _ := d.Lookup("otel", k, "otlp-http", "protocol"); v != "binary" {
			t.Errorf("otel.%s protocol %v, want binary", k, v)
		}
	}
	if _, ok := d.Lookup("otel", "log_user_prompt"); ok || !strings.HasPrefix(codex, cliCodex) {
		t.Errorf("config.toml:\n%s", codex)
	}
	if read(t, f.codexHooks) != userCodexHooks || read(t, f.claudeJSON) != cliClaude {
		t.Error("init --otel touched another file")
	}
	after := map[string]string{f.settings: read(t, f.settings), f.codexTOML: codex}

	code, out, _ = runCtl(t, "init", "--otel")
	if code != ExitOK || !strings.Contains(out, "nothing to change") {
		t.Errorf("second init --otel: exit %d\n%s", code, out)
	}
	for file, want := range after {
		if read(t, file) != want {
			t.Errorf("second init --otel changed %s", file)
		}
	}

	code, out, errOut = runCtl(t, "uninstall")
	if code != ExitOK || !strings.Contains(out, "removed env.OTEL_EXPORTER_OTLP_ENDPOINT") || !strings.Contains(out, "removed otel") {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for file, want := range f.originals() {
		if got := read(t, file); got != want {
			t.Errorf("uninstall did not restore %s:\n%q\nwant\n%q", file, got, want)
		}
	}
	for _, file := range []string{f.settings, f.codexTOML} {
		if b, _ := filepath.Glob(file + ".observer-backup-*"); len(b) != 0 {
			t.Errorf("backups left: %v", b)
		}
	}
}

// TestInit_OTelWithHooksAndMCP: --otel combines with --hooks and --mcp: the settings share
// Claude Code's settings.json with the hooks and Codex's config.toml with the MCP server, each
// written once; uninstall takes everything out, byte for byte.
func TestInit_OTelWithHooksAndMCP(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	code, out, errOut := runCtl(t, "init", "--hooks", "--mcp", "--otel", "--mcp-bin", e.bin)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "claude-code "+f.settings+"\n"); n != 1 {
		t.Errorf("settings.json reported %d times:\n%s", n, out)
	}
	if c := hookCommands(t, f.settings); len(c["SessionStart"]) != 1 {
		t.Errorf("hooks not registered: %v", c)
	}
	if env := otelEnv(t, f.settings); env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:4318" {
		t.Errorf("env %v", env)
	}
	d, err := clientconfig.ParseDoc(clientconfig.TOML, []byte(read(t, f.codexTOML)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Lookup("mcp_servers", "observer"); !ok {
		t.Error("observer MCP server not registered")
	}
	if _, ok := d.Lookup("otel", "exporter"); !ok {
		t.Error("[otel] not written")
	}
	if code, out, _ := runCtl(t, "init", "--otel", "--mcp", "--hooks", "--mcp-bin", e.bin); code != ExitOK || !strings.Contains(out, "nothing to change") {
		t.Errorf("second init: exit %d\n%s", code, out)
	}
	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for file, want := range f.originals() {
		if got := read(t, file); got != want {
			t.Errorf("uninstall did not restore %s:\n%q\nwant\n%q", file, got, want)
		}
	}
}

// TestInit_OTelConflict: a telemetry setting of the user's that points elsewhere stops init with
// exit 65, naming the key and the file, and nothing is written, in any file.
func TestInit_OTelConflict(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	mine := "{\n  \"env\": {\n    \"OTEL_EXPORTER_OTLP_ENDPOINT\": \"https://collector.example.com\"\n  }\n}\n"
	write(t, f.settings, mine)
	code, out, errOut := runCtl(t, "init", "--hooks", "--otel")
	if code != ExitBadInput || !strings.Contains(errOut, f.settings) || !strings.Contains(errOut, "env.OTEL_EXPORTER_OTLP_ENDPOINT") ||
		!strings.Contains(errOut, "https://collector.example.com") || !strings.Contains(errOut, "without --otel") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if read(t, f.settings) != mine || read(t, f.codexTOML) != cliCodex || read(t, f.codexHooks) != userCodexHooks {
		t.Error("a file was written")
	}
	if _, err := os.Stat(clientconfig.ManifestPath(e.obs)); !os.IsNotExist(err) {
		t.Error("manifest written")
	}

	// Codex: an [otel] exporter of the user's.
	write(t, f.settings, userSettings)
	theirs := cliCodex + "\n[otel]\nexporter = { otlp-grpc = { endpoint = \"https://otel.example.com\" } }\n"
	write(t, f.codexTOML, theirs)
	if code, _, errOut := runCtl(t, "init", "--otel"); code != ExitBadInput || !strings.Contains(errOut, "otel.exporter") || !strings.Contains(errOut, f.codexTOML) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if read(t, f.codexTOML) != theirs || read(t, f.settings) != userSettings {
		t.Error("a file was written")
	}
}

// TestInit_OTelClients: --client picks the clients --otel writes for; Cursor exports no
// telemetry (a usage error alone, a note beside other work); an unknown client is a usage error;
// plain init still writes hooks only.
func TestInit_OTelClients(t *testing.T) {
	t.Run("--client codex", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		f := writeHookFiles(t, e)
		if code, out, errOut := runCtl(t, "init", "--otel", "--client", "codex"); code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if read(t, f.settings) != userSettings {
			t.Error("--client codex wrote Claude Code's settings")
		}
		if !strings.Contains(read(t, f.codexTOML), "[otel]") {
			t.Error("--client codex did not write Codex's [otel]")
		}
	})
	t.Run("--client claude creates settings.json", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		settings := filepath.Join(e.home, ".claude", "settings.json")
		if code, out, errOut := runCtl(t, "init", "--otel", "--client", "claude"); code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if env := otelEnv(t, settings); env["CLAUDE_CODE_ENABLE_TELEMETRY"] != "1" {
			t.Errorf("env %v", env)
		}
		if _, err := os.Stat(filepath.Join(e.codexHome, "config.toml")); !os.IsNotExist(err) {
			t.Error("--client claude wrote Codex's config")
		}
		if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
			t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
		}
		if _, err := os.Stat(settings); !os.IsNotExist(err) {
			t.Errorf("uninstall left the settings.json init created (%v)", err)
		}
	})
	t.Run("--client cursor alone", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		code, _, errOut := runCtl(t, "init", "--otel", "--client", "cursor")
		if code != ExitUsage || !strings.Contains(errOut, "cursor does not export OpenTelemetry") || !strings.Contains(errOut, "claude-code and codex") {
			t.Errorf("exit %d, %s", code, errOut)
		}
		if _, err := os.Stat(e.obs); !os.IsNotExist(err) {
			t.Error("something was written")
		}
	})
	t.Run("--client cursor with hooks", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		code, out, errOut := runCtl(t, "init", "--hooks", "--otel", "--client", "cursor,codex")
		if code != ExitOK || !strings.Contains(errOut, "note: cursor does not export OpenTelemetry") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if !strings.Contains(read(t, filepath.Join(e.codexHome, "config.toml")), "[otel]") || len(hookCommands(t, filepath.Join(e.home, ".cursor", "hooks.json"))) == 0 {
			t.Errorf("init --hooks --otel --client cursor,codex:\n%s", out)
		}
	})
	t.Run("unknown client", func(t *testing.T) {
		newCtlEnv(t)
		if code, _, errOut := runCtl(t, "init", "--otel", "--client", "gemini-cli"); code != ExitUsage || !strings.Contains(errOut, "claude-code, codex, cursor") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
	t.Run("only Cursor set up", func(t *testing.T) {
		e := newCtlEnv(t)
		os.Remove(e.codexHome)
		os.MkdirAll(filepath.Join(e.home, ".cursor"), 0o700)
		t.Setenv("PATH", t.TempDir())
		if code, _, errOut := runCtl(t, "init", "--otel"); code != ExitUnavailable || !strings.Contains(errOut, "--client") {
			t.Errorf("--otel alone: exit %d, %s", code, errOut)
		}
		code, out, errOut := runCtl(t, "init", "--hooks", "--otel")
		if code != ExitOK || !strings.Contains(errOut, "note: --otel") || !strings.Contains(out, "hooks.json") {
			t.Errorf("--hooks --otel: exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("default is hooks only", func(t *testing.T) {
		e := newCtlEnv(t)
		t.Setenv("PATH", t.TempDir())
		f := writeHookFiles(t, e)
		if code, out, errOut := runCtl(t, "init"); code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if env := otelEnv(t, f.settings); len(env) != 0 || read(t, f.codexTOML) != cliCodex {
			t.Errorf("plain init wrote telemetry settings: %v", env)
		}
	})
}

// TestInitHelp_DocumentsOTel: init --help says what --otel writes where, that prompts stay off
// unless the user turns them on, that the receiver must run and that a restart loads it.
func TestInitHelp_DocumentsOTel(t *testing.T) {
	code, out, _ := runCtl(t, "init", "--help")
	for _, want := range []string{"--otel", "settings.json", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "[otel]", "config.toml",
		"OTEL_LOG_USER_PROMPTS=1", "log_user_prompt = true", "observerctl up", "restarted"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("init --help (exit %d) lacks %q", code, want)
		}
	}
}

// TestInit_OTelReceiverAddress: the clients export to [otlp] addr of observer's config (a
// wildcard host reached on loopback), OBSERVER_OTLP_ADDR overriding it; init again after the
// address changed updates observer's own settings; a receiver turned off is exit 69, nothing
// written.
func TestInit_OTelReceiverAddress(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	f := writeHookFiles(t, e)
	write(t, filepath.Join(e.obs, "config.toml"), "[otlp]\naddr = \"127.0.0.1:14318\"\n")
	if code, out, errOut := runCtl(t, "init", "--otel"); code != ExitOK || !strings.Contains(out, "http://127.0.0.1:14318") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if env := otelEnv(t, f.settings); env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:14318" {
		t.Errorf("endpoint %q", env["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	if s := read(t, f.codexTOML); !strings.Contains(s, `endpoint = "http://127.0.0.1:14318/v1/logs"`) || !strings.Contains(s, `endpoint = "http://127.0.0.1:14318/v1/metrics"`) {
		t.Errorf("config.toml:\n%s", s)
	}

	t.Setenv("OBSERVER_OTLP_ADDR", "0.0.0.0:24318")
	if code, out, errOut := runCtl(t, "init", "--otel"); code != ExitOK || !strings.Contains(out, "changed env.OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Fatalf("init after the address changed: exit %d\n%s%s", code, out, errOut)
	}
	if env := otelEnv(t, f.settings); env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:24318" {
		t.Errorf("endpoint %q after the address changed", env["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	if s := read(t, f.codexTOML); !strings.Contains(s, `endpoint = "http://127.0.0.1:24318/v1/logs"`) || strings.Contains(s, "14318") {
		t.Errorf("config.toml after the address changed:\n%s", s)
	}

	t.Setenv("OBSERVER_OTLP_ADDR", "")
	settings, codex := read(t, f.settings), read(t, f.codexTOML)
	if code, _, errOut := runCtl(t, "init", "--otel"); code != ExitUnavailable || !strings.Contains(errOut, "[otlp] addr") {
		t.Errorf("receiver off: exit %d, %s", code, errOut)
	}
	if read(t, f.settings) != settings || read(t, f.codexTOML) != codex {
		t.Error("a file was written with the receiver off")
	}

	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for file, want := range f.originals() {
		if got := read(t, file); got != want {
			t.Errorf("uninstall did not restore %s:\n%q\nwant\n%q", file, got, want)
		}
	}
}

// TestInitOTel_RealClients: after init --otel, the real Claude Code and Codex, run against the
// fake model API, export their logs to the receiver's address as OTLP/HTTP protobuf (a recorder
// stands in for observer's receiver here); uninstall gives the files back.
func TestInitOTel_RealClients(t *testing.T) {
	claudeBin, codexBin := realclient.FindClaude(t), realclient.FindCodex(t)
	e := newCtlEnv(t)
	t.Setenv("PATH", realclient.PathWith(filepath.Dir(claudeBin), filepath.Dir(codexBin)))
	f := writeHookFiles(t, e)

	type export struct{ path, contentType, agent string }
	var mu sync.Mutex
	var exports []export
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		exports = append(exports, export{r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("User-Agent")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK) // an empty Export*ServiceResponse
	}))
	defer recv.Close()
	write(t, filepath.Join(e.obs, "config.toml"), "[otlp]\naddr = \""+strings.TrimPrefix(recv.URL, "http://")+"\"\n")
	if code, out, errOut := runCtl(t, "init", "--otel", "--client", "claude-code,codex"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	logs := func() (n int, all []export) {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range exports {
			if x.path == "/v1/logs" {
				n++
			}
		}
		return n, slices.Clone(exports)
	}

	api := httptest.NewServer(fakeapi.New(fakeapi.Config{}))
	defer api.Close()
	repo := filepath.Join(e.home, "repo")
	os.MkdirAll(repo, 0o700)
	realclient.Run(t, repo, realclient.ClaudeEnv(e.home, api.URL), claudeBin, realclient.ClaudeArgs("list the files")...)
	claudeLogs, all := logs()
	if claudeLogs == 0 {
		t.Errorf("Claude Code exported no logs to %s: %+v", recv.URL, all)
	}
	realclient.Run(t, repo, append(realclient.CodexEnv(e.home), "CODEX_HOME="+e.codexHome), codexBin, realclient.CodexArgs(api.URL+"/v1", "list the files", false)...)
	n, all := logs()
	if n == claudeLogs {
		t.Errorf("Codex exported no logs to %s: %+v", recv.URL, all)
	}
	t.Logf("exports: %+v", all)
	for _, x := range all {
		if x.contentType != "application/x-protobuf" {
			t.Errorf("export %+v: want OTLP/HTTP protobuf", x)
		}
	}

	if code, out, errOut := runCtl(t, "uninstall"); code != ExitOK {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	for _, file := range []string{f.settings, f.codexTOML} {
		if got := read(t, file); got != f.originals()[file] {
			t.Errorf("uninstall did not restore %s:\n%q", file, got)
		}
	}
}
