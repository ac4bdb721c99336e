package readers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript/crush"
)

// `observerctl scan --client crush` reads Crush's project databases, prices with the table in
// force, and the watcher watches Crush's global data directory and every project's data directory
// its projects.json names.
func TestReaders_Crush(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"OBSERVER_CRUSH_DIRS", "CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	global := filepath.Join(home, ".local", "share", "crush")
	data := filepath.Join(home, "src", "app", ".crush")
	if err := os.MkdirAll(global, 0o700); err != nil {
		t.Fatal(err)
	}
	projects := `{"projects":[{"path":"` + filepath.Dir(data) + `","data_dir":"` + data + `","last_accessed":"2026-01-01T00:00:00Z"}]}`
	if err := os.WriteFile(filepath.Join(global, "projects.json"), []byte(projects), 0o600); err != nil {
		t.Fatal(err)
	}
	ads, err := Select("crush")
	if err != nil || len(ads) != 1 || ads[0].Client() != "crush" {
		t.Fatalf("Select(crush) = %v, %v", ads, err)
	}
	table := pricing.Default()
	WithPrices(ads, func() *pricing.Table { return table })
	if ads[0].(*crush.Adapter).CurrentPrices == nil {
		t.Error("WithPrices left the Crush adapter on the built-in table")
	}
	roots := Roots()
	for _, want := range []string{global, data} {
		if !slices.Contains(roots, want) {
			t.Errorf("roots %v lack %s", roots, want)
		}
	}
	t.Setenv("OBSERVER_CRUSH_DIRS", filepath.Join(home, "other"))
	if roots := Roots(); !slices.Contains(roots, filepath.Join(home, "other")) || slices.Contains(roots, global) {
		t.Errorf("roots %v ignore OBSERVER_CRUSH_DIRS", roots)
	}
}
