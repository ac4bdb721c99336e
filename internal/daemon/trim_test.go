package daemon

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
)

var sink []byte

// TestTrimNow: freed heap held past trimAbove is given back; with little held, nothing is done.
func TestTrimNow(t *testing.T) {
	sink = make([]byte, 64<<20)
	for i := range sink {
		sink[i] = 1
	}
	sink = nil
	runtime.GC() // the 64 MiB is freed but still held by the runtime
	if !TrimNow() {
		t.Skip("the runtime gave the freed memory back by itself before TrimNow looked")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if held := ms.HeapIdle - ms.HeapReleased; held > trimAbove {
		t.Errorf("%d bytes freed but held after TrimNow, want at most %d", held, trimAbove)
	}
	if TrimNow() {
		t.Error("TrimNow gave memory back again right after giving it all back")
	}
}

var pool sync.Pool

// TestTrimmer_QuietProcess: a process that went quiet holding a burst's buffers in a sync.Pool
// (as nats-server does) gets them collected and given back at the first look that finds no
// collection since the one before; a busy process, and a quiet one with nothing more held, are
// left alone.
func TestTrimmer_QuietProcess(t *testing.T) {
	// A quiet process runs no collection: hold the runtime's own off while the pool fills.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var tr trimmer
	tr.look() // the state to compare with
	for range 8 {
		b := make([]byte, 8<<20)
		for i := range b {
			b[i] = 1
		}
		pool.Put(&b)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if before.NumGC != tr.numGC {
		t.Skip("a collection ran while the test filled the pool: the process was not quiet")
	}
	released, collected := tr.look()
	if !released || !collected {
		t.Fatalf("look released %v, collected %v with 64 MiB parked in a pool and no collection since the last look", released, collected)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc-48<<20 {
		t.Errorf("heap allocated %d MiB after the look, %d before: the pool's buffers were not collected", after.HeapAlloc>>20, before.HeapAlloc>>20)
	}
	if held := after.HeapSys - after.HeapReleased; held > before.HeapSys-before.HeapReleased-48<<20 {
		t.Errorf("%d MiB of heap held after the look: the collected buffers were not given back", held>>20)
	}
	if _, collected := tr.look(); collected {
		t.Error("look collected again with nothing more held")
	}
	// Busy: a collection ran since the last look, so the runtime does its own work.
	sink = make([]byte, 32<<20)
	runtime.GC()
	if _, collected := tr.look(); collected {
		t.Error("look collected in a process that collected by itself since the last look")
	}
	sink = nil
}

// TestTrimmer_AfterTheRuntimesCollection: a burst's memory that outlived a collection of the
// runtime's (forced every two minutes in a quiet process: a pool's buffers go to its victim
// cache then, and stay until the next one) and became garbage after it is still collected by the
// first quiet look: the floor is the heap after this trimmer's own collection, not the heap at
// the last look.
func TestTrimmer_AfterTheRuntimesCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var tr trimmer
	tr.look()
	sink = make([]byte, 64<<20)
	for i := range sink {
		sink[i] = 1
	}
	runtime.GC() // the runtime's: the 64 MiB is still in use
	if _, collected := tr.look(); collected {
		t.Fatal("look collected right after the runtime did")
	}
	sink = nil // now garbage, which nothing collects in a quiet process
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, collected := tr.look(); !collected {
		t.Fatalf("the first quiet look after the runtime's collection left %d MiB allocated", before.HeapAlloc>>20)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc-48<<20 {
		t.Errorf("heap allocated %d MiB after the look, %d before: the burst's memory was not collected", after.HeapAlloc>>20, before.HeapAlloc>>20)
	}
}
