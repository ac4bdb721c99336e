package readers

import (
	"path/filepath"
	"slices"
	"testing"
)

// `observerctl scan --client pi` reads Pi's sessions, and the watcher watches the directory new
// ones appear in.
func TestReaders_Pi(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PI_CODING_AGENT_DIR", "")
	t.Setenv("PI_CODING_AGENT_SESSION_DIR", "")
	ads, err := Select("pi")
	if err != nil || len(ads) != 1 || ads[0].Client() != "pi" {
		t.Fatalf("Select(pi) = %v, %v", ads, err)
	}
	want := filepath.Join(home, ".pi", "agent", "sessions")
	if roots := Roots(); !slices.Contains(roots, want) {
		t.Errorf("roots %v lack %s", roots, want)
	}
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, "agent"))
	if roots := Roots(); !slices.Contains(roots, filepath.Join(home, "agent", "sessions")) {
		t.Errorf("roots %v ignore PI_CODING_AGENT_DIR", roots)
	}
}
