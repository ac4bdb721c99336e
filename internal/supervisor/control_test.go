package supervisor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/supervisor"
)

func TestControl_Listen(t *testing.T) {
	e := newEnv(t, false)
	// A child without a bus never heartbeats; it runs until SIGTERM.
	opts := e.options(e.spec(t, "w", "heartbeat"))
	opts.ReadyTimeout = 100 * time.Millisecond
	r := start(t, opts)
	ctrl := &supervisor.Control{
		Status:  func() any { return r.Status() },
		Restart: r.Restart,
		Down:    r.cancel,
	}
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	// A stale file where the socket goes is replaced.
	if err := os.WriteFile(sock, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Listen(sock); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(ctrl.Close)
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}

	ctx := context.Background()
	cc := &supervisor.ControlClient{Path: sock}
	status := func() supervisor.ChildStatus {
		t.Helper()
		var st []supervisor.ChildStatus
		if err := cc.Status(ctx, &st); err != nil {
			t.Fatalf("ControlClient.Status: %v", err)
		}
		if len(st) != 1 || st[0].Name != "w" {
			t.Fatalf("ControlClient.Status = %+v, want one child w", st)
		}
		return st[0]
	}
	waitPID := func(not int) int {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			st := status()
			if st.PID != 0 && st.PID != not {
				return st.PID
			}
			if time.Now().After(deadline) {
				t.Fatalf("no pid other than %d within 5s: %+v", not, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	pid := waitPID(0)
	if want := e.waitRecords(t, "start", 1, time.Second)[0].pid; pid != want {
		t.Errorf("status over the socket shows pid %d, the child is %d", pid, want)
	}

	if err := cc.Restart(ctx, "w"); err != nil {
		t.Fatalf("ControlClient.Restart(w): %v", err)
	}
	if newPID := waitPID(pid); newPID == pid {
		t.Errorf("pid %d unchanged after a restart", pid)
	}
	// The name travels in the query string: it must arrive whole.
	const unknown = "no such&name=w"
	if err := cc.Restart(ctx, unknown); !errors.Is(err, supervisor.ErrUnknownComponent) || !strings.Contains(err.Error(), unknown) {
		t.Errorf("ControlClient.Restart(%q) = %v, want ErrUnknownComponent naming it", unknown, err)
	}

	if err := cc.Down(ctx); err != nil {
		t.Fatalf("ControlClient.Down: %v", err)
	}
	select {
	case <-r.done:
		r.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Down")
	}
}

func TestControlClient_NotRunning(t *testing.T) {
	ctx := context.Background()
	cc := &supervisor.ControlClient{Path: filepath.Join(t.TempDir(), "missing.sock")}
	var st []supervisor.ChildStatus
	if err := cc.Status(ctx, &st); !errors.Is(err, supervisor.ErrNotRunning) {
		t.Errorf("Status = %v, want ErrNotRunning", err)
	}
	if err := cc.Restart(ctx, "w"); !errors.Is(err, supervisor.ErrNotRunning) {
		t.Errorf("Restart = %v, want ErrNotRunning", err)
	}
	if err := cc.Down(ctx); !errors.Is(err, supervisor.ErrNotRunning) {
		t.Errorf("Down = %v, want ErrNotRunning", err)
	}
}
