package daemon

import (
	"runtime"
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
