package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Removing a guarded directory, or replacing a guarded file, is told at once (well before the
// one-minute poll set here, so through inotify); a path that appears later is guarded too.
func TestGuardPaths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(home string)
		path   string
		what   string
	}{
		{"HomeRemoved", func(home string) { os.RemoveAll(home) }, "", "removed"},
		{"StoreReplaced", func(home string) {
			os.WriteFile(filepath.Join(home, "new.db"), []byte("x"), 0o600)
			os.Rename(filepath.Join(home, "new.db"), filepath.Join(home, "observer.db"))
		}, "observer.db", "replaced"},
		{"LateFileRemoved", func(home string) { os.Remove(filepath.Join(home, "bus", "late")) }, "bus/late", "removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			os.MkdirAll(filepath.Join(home, "bus"), 0o700)
			os.WriteFile(filepath.Join(home, "observer.db"), []byte("db"), 0o600)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type loss struct{ path, what string }
			got := make(chan loss, 1)
			paths := []string{home, filepath.Join(home, "bus"), filepath.Join(home, "observer.db"), filepath.Join(home, "bus", "late")}
			go GuardPaths(ctx, paths, time.Minute, func(p, what string) { got <- loss{p, what} })
			time.Sleep(100 * time.Millisecond)
			if tc.name == "LateFileRemoved" {
				os.WriteFile(filepath.Join(home, "bus", "late"), nil, 0o600) // appears: guarded from now on
				time.Sleep(100 * time.Millisecond)
			}
			t0 := time.Now()
			tc.break_(home)
			select {
			case l := <-got:
				rel, _ := filepath.Rel(home, l.path)
				if rel == "." {
					rel = ""
				}
				if l.what != tc.what || (tc.path != "" && rel != tc.path) {
					t.Errorf("lost(%s, %s), want %s %s", rel, l.what, tc.path, tc.what)
				}
				t.Logf("told after %v", time.Since(t0))
			case <-time.After(10 * time.Second):
				t.Fatal("not told")
			}
		})
	}
}
