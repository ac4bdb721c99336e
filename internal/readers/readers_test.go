package readers

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/transcript"
)

// --client takes a client's name or its alias, and names the choices when it matches none.
func TestSelect(t *testing.T) {
	for client, want := range map[string]string{"gemini": "gemini-cli", "gemini-cli": "gemini-cli", "qwen": "qwen-code",
		"qwen-code": "qwen-code", "claude": "claude-code", "codex": "codex", "opencode": "opencode", "kilo": "kilo", "crush": "crush",
		"copilot": "copilot-cli", "copilot-cli": "copilot-cli", "copilot-vscode": "copilot-vscode",
		"goose": "goose", "cursor": "cursor", "aider": "aider", "openclaw": "openclaw"} {
		ads, err := Select(client)
		if err != nil || len(ads) != 1 || ads[0].Client() != want {
			t.Errorf("Select(%q) = %v, %v", client, ads, err)
		}
	}
	// `scan --client NAME` (and backfill, reconcile) take every client of the registry by its name.
	for _, c := range client.All() {
		if ads, err := Select(c.Name); err != nil || len(ads) != 1 || ads[0].Client() != c.Name {
			t.Errorf("Select(%q) = %v, %v", c.Name, ads, err)
		}
	}
	if _, err := Select("vim"); err == nil || !strings.Contains(err.Error(), "gemini-cli, qwen-code") {
		t.Errorf("Select(vim) error = %v", err)
	}
	all, _ := Select("")
	var names []string
	for _, a := range all {
		names = append(names, a.Client())
	}
	for _, want := range []string{"claude-code", "codex", "gemini-cli", "qwen-code"} {
		if !slices.Contains(names, want) {
			t.Errorf("all readers %v lack %s", names, want)
		}
	}
}

// The watcher watches the Gemini CLI and Qwen Code directories new sessions appear in.
func TestRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"} {
		t.Setenv(k, "")
	}
	roots := Roots()
	for _, want := range []string{filepath.Join(home, ".gemini", "tmp"), filepath.Join(home, ".qwen", "projects"),
		filepath.Join(home, ".qwen", "tmp")} {
		if !slices.Contains(roots, want) {
			t.Errorf("roots %v lack %s", roots, want)
		}
	}
}

// Every client of the registry has a reader line, every line a client, and the reader names the
// client it is opened for, in registry order; every reader names what the watcher watches.
func TestRegistry(t *testing.T) {
	var want []string
	for _, c := range client.All() {
		want = append(want, c.Name)
		if registry[c.Name] == nil {
			t.Errorf("client %s has no reader line in registry.go", c.Name)
		}
	}
	for name := range registry {
		if _, ok := client.Lookup(name); !ok {
			t.Errorf("reader line %q names no client of pkg/client", name)
		}
	}
	var got []string
	for _, a := range All() {
		got = append(got, a.Client())
		if _, ok := a.(transcript.Watched); !ok {
			t.Errorf("%s's reader has no WatchDirs", a.Client())
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("readers %v, want the registry's %v", got, want)
	}
}
