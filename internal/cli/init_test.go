package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/realclient"
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
	t.Run("nothing asked", func(t *testing.T) {
		newCtlEnv(t)
		if code, _, errOut := runCtl(t, "init"); code != ExitUsage || !strings.Contains(errOut, "--mcp") {
			t.Errorf("exit %d, %s", code, errOut)
		}
	})
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
