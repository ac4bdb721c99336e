package transcript_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// repo makes a project with a subdirectory and returns both.
func repo(t *testing.T) (root, sub string) {
	t.Helper()
	root = t.TempDir()
	sub = filepath.Join(root, "pkg", "x")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, sub
}

func TestSetCwd(t *testing.T) {
	root, sub := repo(t)
	var cwd, proj string
	transcript.SetCwd(&cwd, &proj, "  ")
	if cwd != "" || proj != "" {
		t.Fatalf("blank dir set %q %q", cwd, proj)
	}
	transcript.SetCwd(&cwd, &proj, " "+sub+"/./ ")
	if cwd != sub || proj != root {
		t.Fatalf("got %q %q, want %q %q", cwd, proj, sub, root)
	}
	transcript.SetCwd(&cwd, &proj, t.TempDir())
	if cwd != sub || proj != root {
		t.Errorf("a second dir replaced the first: %q %q", cwd, proj)
	}

	// A relative dir is kept, and says nothing of the project: the one known stays.
	cwd, proj = "", "/known"
	transcript.SetCwd(&cwd, &proj, "a/../b")
	if cwd != "b" || proj != "/known" {
		t.Errorf("relative dir: got %q %q", cwd, proj)
	}
}

func TestUpdateCwd(t *testing.T) {
	root, sub := repo(t)
	other := t.TempDir()
	var cwd, proj string
	transcript.UpdateCwd(&cwd, &proj, sub+"/")
	if cwd != sub || proj != root {
		t.Fatalf("got %q %q, want %q %q", cwd, proj, sub, root)
	}
	transcript.UpdateCwd(&cwd, &proj, other)
	if cwd != other || proj != other {
		t.Errorf("a later dir did not replace the first: %q %q", cwd, proj)
	}
	for _, bad := range []string{"", " \t", "/tmp/\xff"} {
		transcript.UpdateCwd(&cwd, &proj, bad)
		if cwd != other || proj != other {
			t.Errorf("%q changed the dir to %q %q", bad, cwd, proj)
		}
	}
	transcript.UpdateCwd(&cwd, &proj, "rel")
	if cwd != "rel" || proj != other {
		t.Errorf("relative dir: got %q %q", cwd, proj)
	}
	long := "/" + strings.Repeat("é", 3000)
	transcript.UpdateCwd(&cwd, &proj, long)
	if len(cwd) > 4096 || !strings.HasPrefix(long, cwd) || len(cwd) < 4090 {
		t.Errorf("a long dir is kept as %d bytes", len(cwd))
	}
}
