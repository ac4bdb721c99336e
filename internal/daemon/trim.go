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
// no longer uses: after a burst (a history ingested, a load test) the Go runtime keeps its peak for
// minutes, so a suite that is idle again would stay at its peak size. Each look reads the memory
// statistics (a pause of microseconds) and acts only when it finds memory to give back (see
// trimmer.look). Each look also takes the process's binary out of its resident set
// (ReleaseImage): what start-up and the last burst ran is mapped back only if it runs again, and
// what runs all the time comes back at the cost of a few hundred minor page faults.
func TrimMemory(ctx context.Context) {
	t := time.NewTicker(TrimEvery)
	defer t.Stop()
	var tr trimmer
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tr.look()
		ReleaseImage()
	}
}

// trimmer is TrimMemory's state between looks.
type trimmer struct {
	numGC uint32 // the collections counted at the end of the last look
	floor uint64 // the heap allocated right after this trimmer's last collection
}

// look gives memory back in two cases. Freed heap held past trimAbove is released (TrimNow). And
// a process that ran no collection since the last look (it is quiet: it allocated less than its
// heap goal since) while its heap is more than trimAbove over what was left after this trimmer's
// last collection is collected twice and released: a burst leaves its garbage uncollected for as
// long as the process stays quiet (Go forces a collection only every two minutes), and the buffers
// it parked in sync.Pools (nats-server's message blocks, of megabytes each: most of an idle bus
// host's heap) are dropped only by the second collection after they were last used, which Go's
// forced collections, two minutes apart, take four minutes to reach. A busy process collects by
// itself between looks, and is left to do so; a process whose live heap grew is collected once
// more, and its new size is the floor from then on. It reports what it did.
func (t *trimmer) look() (released, collected bool) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	quiet := ms.NumGC == t.numGC
	switch {
	case quiet && ms.HeapAlloc > t.floor+trimAbove:
		runtime.GC()
		debug.FreeOSMemory()
		released, collected = true, true
	case ms.HeapIdle-ms.HeapReleased > trimAbove:
		debug.FreeOSMemory()
		released = true
	}
	if released {
		runtime.ReadMemStats(&ms)
	}
	if collected {
		t.floor = ms.HeapAlloc
	}
	t.numGC = ms.NumGC
	return released, collected
}

// TrimNow gives the system back, now, the heap memory the process freed but still holds, when
// that is more than 8 MiB. A process that knows it has just ended a burst (the watcher after a
// large pass) calls it so as not to wait up to TrimEvery. It reports whether it gave memory back.
func TrimNow() bool {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapIdle-ms.HeapReleased <= trimAbove {
		return false
	}
	debug.FreeOSMemory()
	return true
}
