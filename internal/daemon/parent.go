package daemon

import (
	"context"
	"os"
	"strconv"
	"time"
)

// WatchParent cancels when the process was started by a supervisor (package supervisor sets
// OBSERVER_SUPERVISOR_PID) and that supervisor is no longer its parent: the child was orphaned
// and must not linger. Outside a supervisor it returns ctx unchanged. It lives here, not in
// package supervisor, so that the children (observer-dash, observer-mcp, ...) do not link the
// supervisor. It looks at once, then every parentCheck.
func WatchParent(ctx context.Context) (context.Context, context.CancelFunc) {
	want, err := strconv.Atoi(os.Getenv("OBSERVER_SUPERVISOR_PID"))
	if err != nil || want <= 0 {
		return context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(parentCheck)
		defer t.Stop()
		for os.Getppid() == want {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		cancel()
	}()
	return ctx, cancel
}
