package bus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and unmounts it when the test ends.
// It skips the test, saying why, where mounting is not allowed (not root, no CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (a full disk)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the disk is full and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			break
		}
	}
	// What is left below a block.
	small := make([]byte, 512)
	for {
		if _, err := f.Write(small); err != nil {
			break
		}
	}
	return path
}

// A write the full disk refused does not stop the bus for good: once space is freed it takes
// events again, without a restart, and every event it acknowledged reaches the writer's consumer.
func TestServerRecoversAfterDiskFull(t *testing.T) {
	home := mountTmpfs(t, 8<<20)
	srv, err := busserver.Start(context.Background(), busserver.Config{
		Dir: filepath.Join(home, "bus"), Port: -1, Token: testToken, AckWait: 30 * time.Second, MaxBytes: 2 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pub := connect(t, bus.Options{Server: srv, Timeout: 500 * time.Millisecond})
	consumer := connect(t, bus.Options{Server: srv})

	var mu sync.Mutex
	consumed := map[string]bool{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- consumer.Consume(ctx, bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond},
			func(_ context.Context, batch []bus.Message) error {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range batch {
					if ev, err := event.Decode(m.Data); err == nil {
						consumed[ev.ID] = true
					}
				}
				return nil
			})
	}()
	defer func() { cancel(); <-done }()

	var acked []string
	n := 0
	publish := func() error {
		n++
		ev := hookEvent(fmt.Sprintf("e%d-%s", n, strings.Repeat("x", 2000)), "claude-code")
		_, err := pub.Publish(context.Background(), &ev)
		if err == nil {
			acked = append(acked, ev.ID)
		}
		return err
	}
	for range 20 {
		if err := publish(); err != nil {
			t.Fatalf("publish before the disk filled: %v", err)
		}
	}
	filler := fillDisk(t, home)
	failed := false
	for range 400 {
		if publish() != nil {
			failed = true
			break
		}
	}
	if !failed {
		t.Fatal("every publish succeeded on a full disk")
	}
	waitFor(t, "the bus to report its write error", func() bool { return srv.StoreError() != "" })
	t.Logf("store error: %s", srv.StoreError())
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a publish to succeed after space was freed", func() bool { return publish() == nil })
	// The recovery clears the error once JetStream is back, which a publish may beat by a moment.
	waitFor(t, "the write error to clear after the recovery", func() bool { return srv.StoreError() == "" })
	for range 20 {
		if err := publish(); err != nil {
			t.Fatalf("publish after recovery: %v", err)
		}
	}
	waitFor(t, "the consumer to get every acknowledged event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range acked {
			if !consumed[id] {
				return false
			}
		}
		return true
	})
	t.Logf("acknowledged %d events, all consumed; recoveries %d", len(acked), srv.Recoveries())
}
