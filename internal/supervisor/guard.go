package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// GuardPaths watches paths (directories or files) until ctx ends and calls lost once, naming the
// path and what happened to it ("removed" or "replaced"), when one that existed is removed or
// replaced by another file. inotify (fsnotify) on each directory and on the parent of each file
// tells at once; a poll every interval catches the rest. A path that does not exist yet is guarded
// from when it appears. GuardPaths returns after lost, or when ctx ends.
func GuardPaths(ctx context.Context, paths []string, interval time.Duration, lost func(path, what string)) {
	seen := map[string]os.FileInfo{}
	w, err := fsnotify.NewWatcher()
	var events chan fsnotify.Event
	var errs chan error
	if err == nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	watch := func(p string, fi os.FileInfo) {
		if w == nil {
			return
		}
		if fi.IsDir() {
			w.Add(p)
		} else {
			w.Add(filepath.Dir(p))
		}
	}
	// check reports whether a guarded path is gone.
	check := func() bool {
		for _, p := range paths {
			fi, err := os.Stat(p)
			old, had := seen[p]
			switch {
			case !had && err == nil:
				seen[p] = fi
				watch(p, fi)
			case had && err != nil:
				lost(p, "removed")
				return true
			case had && !os.SameFile(old, fi):
				lost(p, "replaced")
				return true
			}
		}
		return false
	}
	if check() {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-errs:
		case <-t.C:
		}
		if check() {
			return
		}
	}
}
