package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/clientconfig"
)

// TestDoctor_CodexHookTrust: Codex runs the hooks init registered only once the user trusted them.
// Doctor tells registered-but-untrusted (a warning, with how to trust them) from trusted (ok), and
// also names hooks trusted before they changed and hooks turned off in Codex.
func TestDoctor_CodexHookTrust(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("OBSERVER_BUS_PORT", strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_PROXY_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_DASH_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	if code, out, errOut := runCtl(t, "init", "--client", "codex"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	hooksFile := filepath.Join(e.codexHome, "hooks.json")
	_, checks := doctor(t)
	expect(t, checks, "hooks:codex", checkWarn, "registered for all 10 events in "+hooksFile,
		"installed, but Codex runs them only once you trust them (not trusted yet: PostCompact, PostToolUse, PreCompact, PreToolUse, SessionEnd, SessionStart, Stop, SubagentStart, SubagentStop, UserPromptSubmit)",
		"run `codex` and answer \"Trust all and continue\"", "/hooks")

	// Trusted as Codex records it: one [hooks.state] table per hook, with its hash.
	d, err := clientconfig.ParseDoc(clientconfig.JSON, []byte(read(t, hooksFile)))
	if err != nil {
		t.Fatal(err)
	}
	hooks := clientconfig.CodexHooks(hooksFile, d, nil, func(string) bool { return true })
	if len(hooks) != 10 {
		t.Fatalf("%d hooks in %s, want 10", len(hooks), hooksFile)
	}
	configTOML := filepath.Join(e.codexHome, "config.toml")
	before, _ := os.ReadFile(configTOML)
	trust := func(stale, off string) {
		var b strings.Builder
		b.Write(before)
		for _, h := range hooks {
			hash := h.Hash
			if h.Event == stale {
				hash = "sha256:0000"
			}
			fmt.Fprintf(&b, "\n[hooks.state.%q]\ntrusted_hash = %q\n", h.Key, hash)
			if h.Event == off {
				b.WriteString("enabled = false\n")
			}
		}
		write(t, configTOML, b.String())
	}
	trust("", "")
	_, checks = doctor(t)
	expect(t, checks, "hooks:codex", checkOK, "registered for all 10 events in "+hooksFile+", and trusted in Codex")

	trust("Stop", "SessionEnd")
	_, checks = doctor(t)
	expect(t, checks, "hooks:codex", checkWarn, "(changed since you trusted them: Stop)", "turned off in Codex: SessionEnd",
		"Trust all and continue", "enabled = false")
	if strings.Contains(checks["hooks:codex"].Detail, "not trusted yet") {
		t.Errorf("detail %q says some are not trusted yet", checks["hooks:codex"].Detail)
	}
}
