package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/config"
)

func TestDashToken(t *testing.T) {
	obs := t.TempDir()
	t.Setenv("OBSERVER_HOME", obs)
	t.Setenv("OBSERVER_DASH_TOKEN", "")
	os.Unsetenv("OBSERVER_DASH_TOKEN")
	code, out, errOut := runCtl(t, "dash", "token")
	tok := strings.TrimSpace(out)
	if code != 0 || len(tok) != 43 || config.CheckToken(tok) != nil {
		t.Fatalf("dash token: exit %d, %q, %q", code, out, errOut)
	}
	if _, err := os.Stat(config.Path(obs)); err == nil {
		t.Error("dash token without --set wrote config.toml")
	}
	_, out2, _ := runCtl(t, "dash", "token")
	if out2 == out {
		t.Error("two tokens are the same")
	}

	// --set on the default file keeps every other byte and the result loads.
	if err := config.WriteDefault(config.Path(obs)); err != nil {
		t.Fatal(err)
	}
	before := read(t, config.Path(obs))
	code, out, errOut = runCtl(t, "dash", "token", "--set")
	tok = strings.TrimSpace(out)
	if code != 0 || !strings.Contains(errOut, "restart dash") {
		t.Fatalf("dash token --set: exit %d, %q, %q", code, out, errOut)
	}
	cfg, err := config.Load(obs)
	if err != nil || cfg.Dash.Token != tok {
		t.Fatalf("after --set: token %q, err %v; want %q", cfg.Dash.Token, err, tok)
	}
	after := read(t, config.Path(obs))
	if got := strings.Replace(after, "token = '"+tok+"'\n", "", 1); got != before {
		t.Errorf("--set changed more than one line:\n%s", after)
	}
	if p := perm(t, config.Path(obs)); p != 0o600 {
		t.Errorf("config.toml mode %v", p)
	}
	// A second --set replaces the line instead of adding one.
	runCtl(t, "dash", "token", "--set")
	if n := strings.Count(read(t, config.Path(obs)), "\ntoken = "); n != 1 {
		t.Errorf("%d token lines after two --set", n)
	}
	// A file that would not load is left alone.
	write(t, config.Path(obs), "[log]\nlevel = 'loud'\n")
	if code, _, errOut := runCtl(t, "dash", "token", "--set"); code != 1 || !strings.Contains(errOut, "not written") {
		t.Errorf("--set on a bad file: exit %d, %q", code, errOut)
	}
	if read(t, config.Path(obs)) != "[log]\nlevel = 'loud'\n" {
		t.Error("--set rewrote a file that does not load")
	}
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// openStdin is a hook's stdin that a client wrote to and never closed.
func openStdin(t *testing.T, data string) io.Reader {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	return r
}

// A hook whose stdin stays open returns within [hook] stdin_timeout: with a whole payload it is
// spooled (the suite is down here), with half of one it is refused with exit 65.
func TestHook_StdinLeftOpen(t *testing.T) {
	obs := t.TempDir()
	t.Setenv("OBSERVER_HOME", obs)
	t.Setenv("OBSERVER_HOOK_STDIN_TIMEOUT", "300ms")
	// A hook that waited for an end of input that never comes would hang the client: the guard
	// below only catches that hang (the stdin timeout is 300ms); how long a hook takes is measured
	// by scripts/bench-hook.sh, not here.
	run := func(stdin io.Reader) (int, string, time.Duration) {
		var stdout, stderr bytes.Buffer
		t0 := time.Now()
		done := make(chan int, 1)
		go func() { done <- Run(context.Background(), []string{"observerctl", "hook"}, stdin, &stdout, &stderr) }()
		var code int
		select {
		case code = <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the hook did not return with its stdin left open")
		}
		if stdout.Len() != 0 {
			t.Errorf("hook printed on stdout: %q", stdout.String())
		}
		return code, stderr.String(), time.Since(t0)
	}
	code, errOut, took := run(openStdin(t, `{"session_id":"s1","hook_event_name":"Stop","cwd":"/tmp"}`))
	if code != 0 {
		t.Fatalf("whole payload, stdin open: exit %d after %v, %q", code, took, errOut)
	}
	if n := len(spooled(t, obs)); n != 1 {
		t.Errorf("%d hook events spooled, want 1", n)
	}
	code, errOut, took = run(openStdin(t, `{"session_id":"s1","hook_event_na`))
	if code != ExitBadInput || !strings.Contains(errOut, "stdin_timeout") {
		t.Errorf("half a payload, stdin open: exit %d after %v, %q", code, took, errOut)
	}
	// Too large and never closed: refused without waiting for an end that does not come.
	t.Setenv("OBSERVER_HOOK_MAX_PAYLOAD_BYTES", "1024")
	code, errOut, took = run(openStdin(t, `{"hook_event_name":"Stop","pad":"`+strings.Repeat("x", 5000)))
	if code != ExitBadInput || !strings.Contains(errOut, "larger than 1024") {
		t.Errorf("oversized payload, stdin open: exit %d after %v, %q", code, took, errOut)
	}
}

// With config.toml broken, the hook still delivers (spooled here, the suite being down) on the
// last configuration that loaded, and says so; other commands refuse the file with exit 64.
func TestHook_BrokenConfig(t *testing.T) {
	obs := t.TempDir()
	t.Setenv("OBSERVER_HOME", obs)
	write(t, config.Path(obs), "[hook]\ntimeout = \"1s\"\n")
	if _, err := config.Load(obs); err != nil { // a good load is remembered
		t.Fatal(err)
	}
	write(t, config.Path(obs), "[hook]\ntimeout = \"1s\n") // an unterminated string
	code, _, errOut := runCtlStdin(t, `{"session_id":"s2","hook_event_name":"PreToolUse","tool_name":"Bash"}`, "hook")
	if code != 0 || !strings.Contains(errOut, "last configuration that loaded") {
		t.Fatalf("hook with a broken config: exit %d, %q", code, errOut)
	}
	if n := len(spooled(t, obs)); n != 1 {
		t.Errorf("%d hook events spooled, want 1", n)
	}
	if code, _, errOut := runCtl(t, "cost"); code != ExitUsage || !strings.Contains(errOut, "config.toml:2") {
		t.Errorf("cost with a broken config: exit %d, %q", code, errOut)
	}
	// No good copy: the defaults.
	os.Remove(filepath.Join(obs, "run", "config.last-good.toml"))
	code, _, errOut = runCtlStdin(t, `{"session_id":"s2","hook_event_name":"PreToolUse","tool_name":"Bash"}`, "hook")
	if code != 0 || !strings.Contains(errOut, "using the defaults") {
		t.Fatalf("hook with a broken config and no good copy: exit %d, %q", code, errOut)
	}
}
