package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetup_SurvivesMakeClean: the set-up a new user makes from a checkout, with the real
// binaries. init run from the checkout's bin/ registers hooks that `make clean` breaks: it says so
// on stderr with the command to run; after `make clean` doctor fails naming the file and the
// missing program, and how to fix it; `make install` and init from the installed observerctl
// replace observer's entries (no warning then), doctor is content, one backup per file is left,
// and uninstall gives the settings back byte for byte with no backup left.
func TestSetup_SurvivesMakeClean(t *testing.T) {
	dir := t.TempDir()
	checkout := filepath.Join(dir, "observer")
	home := filepath.Join(dir, "home")
	obs := filepath.Join(dir, "obs")
	settings := filepath.Join(home, ".claude", "settings.json")
	const orig = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n  }\n}\n"
	for path, data := range map[string]string{
		filepath.Join(checkout, "go.mod"): "module github.com/observerhq/observer\n\ngo 1.26\n",
		settings:                          orig,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	install := func(to string) { // make build / make install: the binaries the user runs
		t.Helper()
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"observerctl", "observer-mcp"} {
			data, err := os.ReadFile(filepath.Join(binDir, b))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, b), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := append(os.Environ(), "HOME="+home, "OBSERVER_HOME="+obs, "CLAUDE_CONFIG_DIR=", "CODEX_HOME="+filepath.Join(home, ".codex"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "PATH=/usr/bin:/bin", "TMPDIR="+filepath.Join(dir, "tmp"),
		fmt.Sprintf("OBSERVER_BUS_PORT=%d", freePort(t)), fmt.Sprintf("OBSERVER_PROXY_ADDR=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("OBSERVER_DASH_ADDR=127.0.0.1:%d", freePort(t)), "OBSERVER_PRICING_AUTO_UPDATE=false")
	run := func(bin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		return out.String(), errb.String(), code
	}
	commandsCheck := func(bin string) (int, map[string]string) {
		t.Helper()
		out, errOut, code := run(bin, "doctor", "--json")
		var rep struct {
			Checks []map[string]string `json:"checks"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor --json: exit %d %v\n%s%s", code, err, out, errOut)
		}
		for _, c := range rep.Checks {
			if c["name"] == "commands" {
				return code, c
			}
		}
		t.Fatalf("doctor has no commands check:\n%s", out)
		return 0, nil
	}

	// init from the checkout's build tree.
	install(filepath.Join(checkout, "bin"))
	built := filepath.Join(checkout, "bin", "observerctl")
	installed := filepath.Join(home, ".local", "bin", "observerctl")
	out, errOut, code := run(built, "init", "--client", "claude-code")
	want := "make -C " + checkout + " install && " + installed + " --home " + obs + " init --client claude-code"
	if code != 0 || !strings.Contains(errOut, "observerctl: warning: the clients will run "+built+", in the build tree of the checkout "+checkout) ||
		!strings.Contains(errOut, want) {
		t.Fatalf("init from the checkout: exit %d, want a warning with %q\n%s%s", code, want, out, errOut)
	}
	if _, c := commandsCheck(built); c["status"] != "ok" {
		t.Errorf("doctor before make clean: %v", c)
	}

	// make clean: every hook now runs a program that is gone.
	if err := os.RemoveAll(filepath.Join(checkout, "bin")); err != nil {
		t.Fatal(err)
	}
	install(filepath.Dir(installed)) // make install, as the warning says
	code, c := commandsCheck(installed)
	if code != 1 || c["status"] != "fail" || !strings.Contains(c["detail"], settings+": 9 entries (") ||
		!strings.Contains(c["detail"], "run "+built+", which does not exist") || !strings.Contains(c["fix"], strings.TrimSuffix(want, " --client claude-code")) {
		t.Errorf("doctor after make clean: exit %d, %v", code, c)
	}

	// init from the installed observerctl replaces observer's entries, without a warning.
	out, errOut, code = run(installed, "--home", obs, "init", "--client", "claude-code")
	if code != 0 || errOut != "" || !strings.Contains(out, "replaced the entry in hooks.Stop") {
		t.Fatalf("init from ~/.local/bin: exit %d\n%s%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(settings); bytes.Contains(data, []byte(checkout)) || !bytes.Contains(data, []byte(installed)) {
		t.Errorf("settings.json after init from ~/.local/bin:\n%s", data)
	}
	if _, c := commandsCheck(installed); c["status"] != "ok" {
		t.Errorf("doctor after make install and init: %v", c)
	}
	if b, _ := filepath.Glob(settings + ".observer-backup-*"); len(b) != 1 {
		t.Errorf("backups %v, want one per file", b)
	}

	out, errOut, code = run(installed, "uninstall")
	if data, _ := os.ReadFile(settings); code != 0 || string(data) != orig {
		t.Errorf("uninstall: exit %d\n%s%s\nsettings.json:\n%s", code, out, errOut, data)
	}
	if b, _ := filepath.Glob(settings + ".observer-backup-*"); len(b) != 0 {
		t.Errorf("backups left after uninstall: %v", b)
	}
}
