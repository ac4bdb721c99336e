package project

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRoot(t *testing.T) {
	tmp := t.TempDir()
	main := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(filepath.Join(main, ".git", "worktrees", "feature"), 0o755))
	must(t, os.MkdirAll(filepath.Join(main, "src", "deep"), 0o755))
	wt := filepath.Join(tmp, "feature-checkout")
	must(t, os.MkdirAll(filepath.Join(wt, "pkg"), 0o755))
	must(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "feature")+"\n"), 0o644))
	sub := filepath.Join(tmp, "withsub")
	must(t, os.MkdirAll(filepath.Join(sub, ".git", "modules", "lib"), 0o755))
	must(t, os.MkdirAll(filepath.Join(sub, "lib"), 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "lib", ".git"), []byte("gitdir: ../.git/modules/lib\n"), 0o644))
	plain := filepath.Join(tmp, "plain", "dir")
	must(t, os.MkdirAll(plain, 0o755))

	for _, tc := range []struct{ in, want string }{
		{main, main},
		{filepath.Join(main, "src", "deep"), main},
		{filepath.Join(wt, "pkg"), main},
		{filepath.Join(sub, "lib"), filepath.Join(sub, "lib")},
		{plain, plain},
		{"", ""},
	} {
		if got := Root(tc.in); got != tc.want {
			t.Errorf("Root(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
