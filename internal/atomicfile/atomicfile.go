// Package atomicfile replaces a file whole: a reader (or a process started after a crash) sees the
// old content or the new, never half of either.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to a temporary file beside path with the given mode, syncs it, renames it over
// path and syncs the directory, so the new content also survives a power cut once Write returns.
func Write(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}
