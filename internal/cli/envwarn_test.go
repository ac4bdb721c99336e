package cli

import (
	"os"
	"strings"
	"testing"
)

// An observerctl command run with a misspelt OBSERVER_ variable warns of it on stderr, naming the
// variable it most likely meant, and runs; without one it says nothing of the kind.
func TestLoad_WarnsOfAnUnknownVariable(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OBSERVER_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("OBSERVER_HOME", t.TempDir())
	t.Setenv("OBSERVER_PRICING_AUTO_UPDATE", "false")
	code, _, stderr := runCtl(t, "prices", "show", "claude-sonnet-4-5")
	if code != 0 || strings.Contains(stderr, "is not one observer reads") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	t.Setenv("OBSERVER_COMPRESSION_ENABLE", "true")
	code, _, stderr = runCtl(t, "prices", "show", "claude-sonnet-4-5")
	if code != 0 {
		t.Fatalf("exit %d with an unknown variable, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "OBSERVER_COMPRESSION_ENABLE ") || !strings.Contains(stderr, "OBSERVER_COMPRESSION_ENABLED") {
		t.Errorf("stderr does not warn of OBSERVER_COMPRESSION_ENABLE and name OBSERVER_COMPRESSION_ENABLED:\n%s", stderr)
	}
}
