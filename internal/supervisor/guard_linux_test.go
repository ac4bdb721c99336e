package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Writes to the files of a guarded directory (the store's, the stream's) do not wake the guard; a
// name that comes does. Each write goes to a file of its own, so that the kernel cannot merge their
// notifications into one: were writes told, 200 of them would take more than one read.
func TestGuard_WritesDoNotWake(t *testing.T) {
	dir := t.TempDir()
	var files []*os.File
	for i := range 200 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%03d", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	n, err := newNotifier()
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	if err := n.add(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := f.Write([]byte("row\n")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f.Name(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.events():
	case <-time.After(10 * time.Second):
		t.Fatal("a file created in the directory was not told")
	}
	if w := n.(*inotifier).wakes.Load(); w != 1 {
		t.Errorf("the guard woke %d times for 200 writes and one file created, want once", w)
	}
}
