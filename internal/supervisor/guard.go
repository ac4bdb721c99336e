package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// GuardPaths watches paths (directories or files) until ctx ends and calls lost once, naming the
// path and what happened to it ("removed" or "replaced"), when one that existed is removed or
// replaced by another file. A notification on each directory and on the parent of each file tells
// at once; a poll every interval catches the rest. A path that does not exist yet is guarded from
// when it appears. GuardPaths returns after lost, or when ctx ends.
//
// Only names that come, go or move wake it (newNotifier): the guarded directories are observer's
// home and its bus's, where the store and the stream write all the time, and a notification per
// write woke the supervisor thousands of times a second while a history was stored (a fifth of
// the bus host's CPU then, and of its CPU under proxy load).
func GuardPaths(ctx context.Context, paths []string, interval time.Duration, lost func(path, what string)) {
	seen := map[string]os.FileInfo{}
	n, err := newNotifier()
	var events <-chan struct{}
	if err == nil {
		defer n.close()
		events = n.events()
	}
	watch := func(p string, fi os.FileInfo) {
		if n == nil {
			return
		}
		if fi.IsDir() {
			n.add(p)
		} else {
			n.add(filepath.Dir(p))
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
		case <-t.C:
		}
		if check() {
			return
		}
	}
}

// notifier tells that a name in one of the directories it was given came, went or moved, or that
// one of those directories itself went or moved (events). It says nothing of writes to the files
// in them.
type notifier interface {
	add(dir string) error
	events() <-chan struct{}
	close()
}
