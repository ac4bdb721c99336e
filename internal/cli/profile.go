package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/config"
)

// StartProfiles starts the profiles the environment asks for, off by default (for `observerctl
// scan` and the writer, see the README's "Profiling"):
//
//	OBSERVER_CPUPROFILE=FILE  CPU profile of the whole run, written when the command ends
//	OBSERVER_TRACE=FILE       execution trace of the whole run (go tool trace FILE): which
//	                          goroutine ran, waited or blocked when
//	OBSERVER_MEMPROFILE=FILE  heap profile taken at the largest live heap seen (checked every
//	                          100 ms, rewritten (after a GC) each time the heap grows past the last
//	                          one by 10%),
//	                          and once more at the end when the heap never grew; at the end a line
//	                          on stderr gives the peaks: Go heap, Go memory held from the OS, and
//	                          the process's peak RSS (what is above Go's is SQLite's and cgo's)
//
// A component that `observerctl up` runs (the writer) writes FILE.PID instead, beside the
// supervisor's FILE. The returned stop writes what is pending; main calls it before exiting.
func StartProfiles(stderr io.Writer) (stop func()) {
	var stops []func()
	for _, r := range []*profileRun{&cpuProfile, &traceRun} {
		if stop := r.begin(stderr); stop != nil {
			stops = append(stops, stop)
		}
	}
	if path := profilePath("OBSERVER_MEMPROFILE"); path != "" {
		stops = append(stops, heapAtPeak(path, stderr))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// profileRun is a profile written from start to stop into the file its variable names: the CPU
// profile or the execution trace.
type profileRun struct {
	env   string
	start func(io.Writer) error
	stop  func()
	file  atomic.Pointer[os.File] // the file being written, nil when none is
}

var (
	cpuProfile = profileRun{env: "OBSERVER_CPUPROFILE", start: pprof.StartCPUProfile, stop: pprof.StopCPUProfile}
	traceRun   = profileRun{env: "OBSERVER_TRACE", start: trace.Start, stop: trace.Stop}
)

// begin starts the profile when its variable is set, and returns what stops it and keeps the
// file (nil when it did not start; an error is told on stderr).
func (r *profileRun) begin(stderr io.Writer) (stop func()) {
	path := profilePath(r.env)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err == nil {
		if err = r.start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "observerctl: %s: %v\n", r.env, err)
		return nil
	}
	r.file.Store(f)
	return func() {
		if r.file.CompareAndSwap(f, nil) {
			r.stop()
			f.Close()
		}
	}
}

// abandon stops the profile without keeping its file.
func (r *profileRun) abandon() {
	if f := r.file.Swap(nil); f != nil {
		r.stop()
		f.Close()
		os.Remove(f.Name())
	}
}

// abandonProfiles stops the CPU profile and the trace without keeping them (`up --detach`, whose
// supervisor writes its own to the same files).
func abandonProfiles() {
	cpuProfile.abandon()
	traceRun.abandon()
}

// profilePath is the file the variable names, with the pid appended in a supervised component.
func profilePath(variable string) string {
	path := os.Getenv(variable)
	if path != "" && config.Supervised() {
		path += "." + strconv.Itoa(os.Getpid())
	}
	return path
}

// heapAtPeak writes a heap profile to path whenever the live heap passes its largest size so far
// by 10%, until stop, which writes one more when none was written.
func heapAtPeak(path string, stderr io.Writer) (stop func()) {
	var mu sync.Mutex
	var peak, peakAlloc, peakHeld uint64
	written := false
	write := func() {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(stderr, "observerctl: OBSERVER_MEMPROFILE: %v\n", err)
			return
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			fmt.Fprintf(stderr, "observerctl: OBSERVER_MEMPROFILE: %v\n", err)
		}
		written = true
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peakAlloc = max(peakAlloc, ms.HeapAlloc)
			peakHeld = max(peakHeld, ms.Sys-ms.HeapReleased)
			if ms.HeapAlloc > peak+peak/10 {
				peak = ms.HeapAlloc
				write()
			}
			mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-finished
		if !written {
			write()
		}
		hwm := ""
		if data, err := os.ReadFile("/proc/self/status"); err == nil {
			for _, l := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(l, "VmHWM:") {
					hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
				}
			}
		}
		fmt.Fprintf(stderr, "observerctl: memory peaks: Go heap %.1f MB, Go memory held %.1f MB, process RSS %s\n",
			float64(peakAlloc)/(1<<20), float64(peakHeld)/(1<<20), hwm)
	}
}
