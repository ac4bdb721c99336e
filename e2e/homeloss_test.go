package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestHomeRemovedUnderRunningSuite: `rm -rf $OBSERVER_HOME` while the suite runs and hooks keep
// coming. The supervisor notices at once, stops the bus and every component and exits non-zero
// saying why; status then says "not running", which is true; hook calls spool meanwhile; and at
// the next start every hook event from after the stop is in the new store.
func TestHomeRemovedUnderRunningSuite(t *testing.T) {
	s := newSuite(t)
	// The first supervisor's output goes outside the home that is about to go.
	var upOut bytes.Buffer
	s.up = exec.Command(s.bin("observerctl"), "up", "--grace", "5s")
	s.up.Env = s.env
	s.up.Stdout, s.up.Stderr = &upOut, &upOut
	if err := s.up.Start(); err != nil {
		t.Fatal(err)
	}
	s.upCh = make(chan error, 1)
	go func() { s.upCh <- s.up.Wait() }()
	s.waitHealthy(30 * time.Second)
	for i := range 20 {
		if _, errOut, code := s.ctl(hookPayload("before", i), "hook"); code != 0 {
			t.Fatalf("hook before: exit %d %s", code, errOut)
		}
	}
	s.waitCount(20*time.Second, 20, "SELECT count(*) FROM hook_events")

	t0 := time.Now()
	// The running bus may create a file (its consumer's state) in a directory RemoveAll is
	// emptying: "directory not empty", as `rm -rf` would say. A user runs it again; so does this.
	for attempt := 1; ; attempt++ {
		err := os.RemoveAll(s.home)
		if err == nil {
			break
		}
		if attempt == 10 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var upErr error
	select {
	case upErr = <-s.upCh:
		s.up = nil
	case <-time.After(15 * time.Second):
		t.Fatal("observerctl up kept running after its home was removed")
	}
	took := time.Since(t0)
	if upErr == nil {
		t.Error("observerctl up exited 0 after its home was removed")
	}
	t.Logf("supervisor stopped %v after the home was removed: %v", took.Round(time.Millisecond), upErr)
	if out := upOut.String(); !strings.Contains(out, "was removed while observer ran") || !strings.Contains(out, "stopping the bus") {
		t.Errorf("the supervisor did not say why it stopped:\n%s", out)
	}

	// Hooks now: the suite is down, so they spool into the (recreated) home, exit 0.
	for i := range 30 {
		if _, errOut, code := s.ctl(hookPayload("after", i), "hook"); code != 0 {
			t.Fatalf("hook after: exit %d %s", code, errOut)
		}
	}
	if _, code := s.status(); code != 69 {
		t.Errorf("status after the stop: exit %d, want 69 (not running)", code)
	}
	s.start()
	s.waitCount(30*time.Second, 30, "SELECT count(*) FROM hook_events WHERE tool_use_id LIKE 'after-%'")
}
