package daemon_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/daemon"
)

func TestWatchParent(t *testing.T) {
	t.Setenv("OBSERVER_SUPERVISOR_PID", "")
	unset, cancel := daemon.WatchParent(context.Background())
	defer cancel()

	t.Setenv("OBSERVER_SUPERVISOR_PID", strconv.Itoa(os.Getppid()))
	ours, cancel := daemon.WatchParent(context.Background())
	defer cancel()

	// Our own pid is certainly not our parent's: as if the supervisor had died and we were adopted.
	t.Setenv("OBSERVER_SUPERVISOR_PID", strconv.Itoa(os.Getpid()))
	orphaned, cancel := daemon.WatchParent(context.Background())
	defer cancel()

	select {
	case <-orphaned.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("context not cancelled within 2s although OBSERVER_SUPERVISOR_PID is not our parent")
	}
	// The orphaned context checked at least once; give the others two more checks.
	time.Sleep(time.Second)
	if unset.Err() != nil {
		t.Error("context cancelled without OBSERVER_SUPERVISOR_PID")
	}
	if ours.Err() != nil {
		t.Error("context cancelled although OBSERVER_SUPERVISOR_PID is our parent")
	}
}
