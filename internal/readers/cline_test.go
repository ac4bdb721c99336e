package readers

import (
	"path/filepath"
	"slices"
	"testing"
)

// `observerctl scan --client cline` (and roo, cline-vscode, kilo-code) reads Cline's records, and
// the watcher watches where new ones appear.
func TestReaders_Cline(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR", "CLINE_DIR", "XDG_CONFIG_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("OBSERVER_VSCODE_GLOBALSTORAGE", filepath.Join(home, "gs"))
	for _, c := range []string{"cline", "cline-vscode", "roo-code", "roo", "kilo-code"} {
		ads, err := Select(c)
		if err != nil || len(ads) != 1 {
			t.Fatalf("Select(%s) = %v, %v", c, ads, err)
		}
	}
	roots := Roots()
	for _, want := range []string{filepath.Join(home, ".cline", "data", "sessions"),
		filepath.Join(home, "gs", "saoudrizwan.claude-dev", "tasks"), filepath.Join(home, "gs", "rooveterinaryinc.roo-cline", "tasks"),
		filepath.Join(home, "gs", "kilocode.kilo-code", "tasks")} {
		if !slices.Contains(roots, want) {
			t.Errorf("roots %v lack %s", roots, want)
		}
	}
}
