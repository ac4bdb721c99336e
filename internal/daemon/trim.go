package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// TrimEvery is how often a long-running process looks for memory to give back.
const TrimEvery = 30 * time.Second

// trimAbove is how much freed but still held heap makes a look give it back.
const trimAbove = 8 << 20

// TrimMemory gives the system back, every TrimEvery until ctx ends, the heap memory the process
// freed but still holds: after a burst (a history ingested, a load test) the Go runtime keeps its
// peak for minutes, so a suite that is idle again would stay at its peak size. Each look reads the
// memory statistics (a pause of microseconds); giving back runs a collection, only when more than
// 8 MiB is held for nothing.
func TrimMemory(ctx context.Context) {
	t := time.NewTicker(TrimEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		TrimNow()
	}
}

// TrimNow gives the system back, now, the heap memory the process freed but still holds, when
// that is more than 8 MiB: what TrimMemory does at each tick. A process that knows it has just
// ended a burst (the watcher after a large pass) calls it so as not to wait up to TrimEvery.
// It reports whether it gave memory back.
func TrimNow() bool {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapIdle-ms.HeapReleased <= trimAbove {
		return false
	}
	debug.FreeOSMemory()
	return true
}
