package ccshape

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// Discover hands each project directory to the client's lister once, whatever the roots repeat,
// and sorts what it lists; a missing root is nothing, one that is not a directory an error.
func TestDiscover(t *testing.T) {
	root := filepath.Join(t.TempDir(), "projects")
	for _, d := range []string{"-b", "-a"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "stray.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	list := func(dir string) []transcript.Source {
		dirs = append(dirs, filepath.Base(dir))
		return []transcript.Source{{Path: filepath.Join(dir, "z.jsonl")}, {Path: filepath.Join(dir, "y.jsonl")}}
	}
	srcs, err := Discover([]string{root, link, filepath.Join(root, "absent")}, list)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	if !slices.Equal(dirs, []string{"-a", "-b"}) {
		t.Errorf("listed %v: want each project once, not the stray file", dirs)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, filepath.Base(filepath.Dir(s.Path))+"/"+filepath.Base(s.Path))
	}
	if !slices.Equal(got, []string{"-a/y.jsonl", "-a/z.jsonl", "-b/y.jsonl", "-b/z.jsonl"}) {
		t.Errorf("sources %v: want sorted by path", got)
	}
	if srcs, err := Discover([]string{filepath.Join(root, "stray.jsonl"), root}, list); err == nil || len(srcs) != 4 {
		t.Errorf("a root that is a file: %d sources, %v; want the others listed and an error", len(srcs), err)
	}
}
