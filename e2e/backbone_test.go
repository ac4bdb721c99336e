package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// TestBackbone_HookEventsExactlyOnce: 10,000 hook calls give exactly 10,000 rows; 10,000 more with
// the writer killed -9 in the middle give exactly 20,000, none twice.
func TestBackbone_HookEventsExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("long end-to-end test")
	}
	s := newSuite(t)
	s.start()
	ctx := context.Background()

	start := time.Now()
	if ok := s.runHooks(ctx, "a", 0, 10000, 8, nil); ok != 10000 {
		t.Fatalf("%d of 10000 hook calls succeeded", ok)
	}
	t.Logf("10,000 hook calls in %v", time.Since(start).Round(time.Millisecond))
	s.waitCount(60*time.Second, 10000, "SELECT count(*) FROM hook_events")

	writerPID := s.componentPID("writer")
	if writerPID == 0 {
		t.Fatal("no writer pid in status")
	}
	var killed atomic.Bool
	ok := s.runHooks(ctx, "b", 10000, 10000, 8, func(done int) {
		if done == 4000 && killed.CompareAndSwap(false, true) {
			if err := syscall.Kill(writerPID, syscall.SIGKILL); err != nil {
				t.Errorf("kill writer: %v", err)
			}
		}
	})
	if ok != 10000 {
		t.Fatalf("%d of 10000 hook calls succeeded", ok)
	}
	s.waitCount(90*time.Second, 20000, "SELECT count(*) FROM hook_events")
	if n := s.count("SELECT count(DISTINCT tool_use_id) FROM hook_events"); n != 20000 {
		t.Fatalf("%d distinct hook calls stored, want 20000", n)
	}
	st := s.waitHealthy(30 * time.Second)
	for _, c := range st.Components {
		if c.Name == "writer" {
			if c.PID == writerPID || c.Restarts < 1 {
				t.Fatalf("writer not restarted: pid %d (was %d), restarts %d", c.PID, writerPID, c.Restarts)
			}
		}
	}
	// Every event came from a hook call and carries what the hook saw.
	if n := s.count("SELECT count(*) FROM hook_events WHERE event = 'PreToolUse' AND tool_name = 'Bash' AND client = 'claude-code' AND cwd = '/tmp'"); n != 20000 {
		t.Fatalf("%d rows carry the hook's fields, want 20000", n)
	}
	if n := s.count("SELECT count(*) FROM sessions WHERE client = 'claude-code'"); n != 74 {
		t.Fatalf("%d sessions, want 74 (37 per tag)", n)
	}
}

// TestBackbone_BusHostKilled: kill -9 the process hosting the bus while producers publish (hook
// processes and a long-lived client); after `up` again, nothing published is missing.
func TestBackbone_BusHostKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("long end-to-end test")
	}
	s := newSuite(t)
	s.start()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// A long-lived producer, like the proxy: publishes with a spool in the same home.
	token, err := os.ReadFile(filepath.Join(s.home, "bus.token"))
	if err != nil {
		t.Fatal(err)
	}
	port := ""
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "OBSERVER_BUS_PORT="); ok {
			port = v
		}
	}
	cl, err := bus.Connect(ctx, bus.Options{URL: "nats://127.0.0.1:" + port, Token: strings.TrimSpace(string(token)),
		SpoolDir: filepath.Join(s.home, "spool"), Timeout: time.Second, Name: "e2e-producer"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var produced atomic.Int64
	var spooled atomic.Int64
	var wg sync.WaitGroup
	stopProducer := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stopProducer:
				return
			default:
			}
			ev := event.New(event.KindAction, "e2e")
			ev.ID = event.ID("producer", fmt.Sprint(i))
			ev.Client = "codex"
			ev.SessionID = "producer"
			ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "exec_command", Target: fmt.Sprintf("echo %d", i)}
			res, err := cl.Publish(ctx, &ev)
			if err != nil {
				t.Errorf("publish %d: %v", i, err)
				return
			}
			if res == bus.Spooled {
				spooled.Add(1)
			}
			produced.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()

	writerPID := s.componentPID("writer")
	var hooksOK atomic.Int64
	hookDone := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(hookDone)
		hooksOK.Store(int64(s.runHooks(ctx, "k", 0, 1500, 4, func(done int) {
			if done == 500 {
				s.kill9Up()
				close(killed)
			}
		})))
	}()
	<-killed
	// The writer dies with its supervisor.
	deadline := time.Now().Add(10 * time.Second)
	for alive(writerPID) {
		if time.Now().After(deadline) {
			t.Fatalf("writer %d still runs 10s after its supervisor was killed", writerPID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Hooks and the producer keep publishing into the spool for a while, then the suite comes back.
	time.Sleep(2 * time.Second)
	s.start()
	<-hookDone
	close(stopProducer)
	wg.Wait()
	if hooksOK.Load() != 1500 {
		t.Fatalf("%d of 1500 hook calls succeeded", hooksOK.Load())
	}
	n := int(produced.Load())
	t.Logf("producer published %d events, %d of them through the spool", n, spooled.Load())
	if spooled.Load() == 0 {
		t.Fatal("the producer never spooled: the bus was not down while it published")
	}
	s.waitCount(90*time.Second, 1500, "SELECT count(*) FROM hook_events")
	s.waitCount(90*time.Second, n, "SELECT count(*) FROM actions WHERE session_id = 'producer'")
	if left, _ := filepath.Glob(filepath.Join(s.home, "spool", "*.jsonl")); len(left) != 0 {
		t.Fatalf("spool files left: %v", left)
	}
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestTail_PrintsEventsAtOnce measures the time from publish to the line printed by
// `observerctl tail`, and checks the kind and session filters.
func TestTail_PrintsEventsAtOnce(t *testing.T) {
	s := newSuite(t)
	s.start()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tail := exec.CommandContext(ctx, s.bin("observerctl"), "tail", "--json", "--kind", "hook", "--session", "tail-me")
	tail.Env = s.env
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := tail.StderrPipe()
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer tail.Process.Kill()
	// Wait for "tailing ..." so the subscription is live.
	errLines := bufio.NewReader(stderr)
	for {
		line, err := errLines.ReadString('\n')
		if err != nil {
			t.Fatalf("tail did not start: %q %v", line, err)
		}
		if strings.HasPrefix(line, "tailing") {
			break
		}
	}
	go io.Copy(io.Discard, errLines)
	lines := make(chan []byte, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()

	token, _ := os.ReadFile(filepath.Join(s.home, "bus.token"))
	port := ""
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "OBSERVER_BUS_PORT="); ok {
			port = v
		}
	}
	cl, err := bus.Connect(ctx, bus.Options{URL: "nats://127.0.0.1:" + port, Token: strings.TrimSpace(string(token)), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	publish := func(kind event.Kind, session string, i int) {
		ev := event.New(kind, "e2e")
		ev.ID = event.ID("tail", session, string(kind), fmt.Sprint(i))
		ev.Client = "claude-code"
		ev.SessionID = session
		switch kind {
		case event.KindHook:
			ev.Hook = &event.Hook{Event: "Stop"}
		case event.KindAction:
			ev.Action = &event.Action{Type: event.ActionReadFile, Target: "a.go"}
		}
		if _, err := cl.Publish(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}
	var lat []time.Duration
	for i := range 20 {
		// Events the filters must drop, published first: were they printed, the next line read
		// would be one of them.
		publish(event.KindAction, "tail-me", i)
		publish(event.KindHook, "someone-else", i)
		t0 := time.Now()
		publish(event.KindHook, "tail-me", i)
		select {
		case line := <-lines:
			lat = append(lat, time.Since(t0))
			var ev event.Event
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("tail printed %q: %v", line, err)
			}
			if ev.Kind != event.KindHook || ev.SessionID != "tail-me" || ev.ID != event.ID("tail", "tail-me", "hook", fmt.Sprint(i)) {
				t.Fatalf("tail printed the wrong event: %s", line)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("tail printed nothing within 30s for event %d", i)
		}
	}
	slices.Sort(lat)
	median := lat[len(lat)/2]
	t.Logf("publish-to-print latency: median %v, max %v over %d events", median, lat[len(lat)-1], len(lat))
}
