//go:build ignore

// benchrun runs one command and measures it as a whole, every process it starts included: wall
// time, CPU time (user + sys of the command and of every descendant, reaped or orphaned: benchrun
// is their child subreaper, so an orphan is reparented to it and its CPU time is counted when
// benchrun reaps it), and the peak of the summed RSS of all live descendants, sampled every
// -interval from /proc. Linux only. The command's stdin, stdout and stderr are passed through;
// SIGINT and SIGTERM are forwarded to it; benchrun exits with its exit code.
//
//	go build -o /tmp/benchrun scripts/benchrun.go
//	/tmp/benchrun -o run.json -- observerctl scan
//
// run.json: {"wall_s", "user_s", "sys_s", "cpu_s", "peak_tree_rss_kb", "max_proc_rss_kb",
// "max_procs", "samples", "exit_code", "orphans_left"}.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const prSetChildSubreaper = 36

type result struct {
	Command      string  `json:"command"`
	WallS        float64 `json:"wall_s"`
	UserS        float64 `json:"user_s"`
	SysS         float64 `json:"sys_s"`
	CPUS         float64 `json:"cpu_s"`
	PeakTreeKB   int64   `json:"peak_tree_rss_kb"`
	MaxProcKB    int64   `json:"max_proc_rss_kb"`
	MaxProcs     int     `json:"max_procs"`
	Samples      int     `json:"samples"`
	ExitCode     int     `json:"exit_code"`
	OrphansLeft  int     `json:"orphans_left"`
	SampleErrors int     `json:"sample_errors,omitempty"`
}

func main() {
	out := flag.String("o", "", "write the JSON result to this file (default: stderr)")
	interval := flag.Duration("interval", 50*time.Millisecond, "sampling interval of the process tree's RSS")
	orphanWait := flag.Duration("orphan-wait", 5*time.Second, "how long to wait for orphaned descendants to exit after the command has")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchrun [-o FILE] [-interval D] -- command [args...]")
		os.Exit(64)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintln(os.Stderr, "benchrun: PR_SET_CHILD_SUBREAPER:", e)
		os.Exit(1)
	}
	self := os.Getpid()
	pageKB := int64(os.Getpagesize() / 1024)

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(127)
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()

	res := result{Command: strings.Join(args, " ")}
	sample := func() {
		pids := descendants(self)
		var sum int64
		for _, pid := range pids {
			kb, err := rssKB(pid, pageKB)
			if err != nil {
				continue // exited between the listing and the read
			}
			sum += kb
			res.MaxProcKB = max(res.MaxProcKB, kb)
		}
		res.Samples++
		res.PeakTreeKB = max(res.PeakTreeKB, sum)
		res.MaxProcs = max(res.MaxProcs, len(pids))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(*interval)
	sample()
	var werr error
loop:
	for {
		select {
		case werr = <-done:
			break loop
		case <-tick.C:
			sample()
		}
	}
	res.WallS = time.Since(start).Seconds()
	tick.Stop()
	res.ExitCode = 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	} else if werr != nil {
		res.ExitCode = 1
	}

	// Reap the orphans reparented to us (their CPU time then counts in RUSAGE_CHILDREN), waiting
	// a little for those still running; they are left alone, and counted, if they outlive that.
	deadline := time.Now().Add(*orphanWait)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil { // ECHILD: none left
			break
		}
		if pid > 0 {
			continue
		}
		if time.Now().After(deadline) {
			res.OrphansLeft = len(descendants(self))
			break
		}
		sample()
		time.Sleep(*interval)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	res.UserS = tv(ru.Utime)
	res.SysS = tv(ru.Stime)
	res.CPUS = res.UserS + res.SysS
	res.MaxProcKB = max(res.MaxProcKB, ru.Maxrss) // Linux: KiB

	b, _ := json.Marshal(res)
	if *out != "" {
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
		}
	} else {
		fmt.Fprintln(os.Stderr, string(b))
	}
	os.Exit(res.ExitCode)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// descendants lists every live descendant of pid, from /proc/PID/task/TID/children when the
// kernel has it, else from the parent pids in /proc/*/stat.
func descendants(root int) []int {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", root, root)); err == nil {
		var out []int
		queue := []int{root}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
			for _, t := range tasks {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
				if err != nil {
					continue
				}
				for _, f := range strings.Fields(string(b)) {
					if c, err := strconv.Atoi(f); err == nil {
						out = append(out, c)
						queue = append(queue, c)
					}
				}
			}
		}
		return out
	}
	parent := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ...
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			parent[ppid] = append(parent[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range parent[pid] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// rssKB is the resident set of pid in KiB (/proc/PID/statm, second field).
func rssKB(pid int, pageKB int64) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, errors.New("short statm")
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	return n * pageKB, err
}
