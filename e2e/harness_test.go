// Package e2e drives the real binaries the way a user does: `observerctl up`, hooks, kill -9.
package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// binDir holds the binaries built once for the whole package.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "observer-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", dir+"/", "./cmd/...")
	cmd.Dir = ".."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build binaries:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// suite is one observer home with its own bus port.
type suite struct {
	tb   testing.TB
	home string
	env  []string
	up   *exec.Cmd
	upCh chan error
}

// givenPorts are the ports freePort handed out in this process, so that two components of one
// suite are never given the same port.
var givenPorts sync.Map

// freePort returns a loopback port nothing listens on now and that this process has not handed
// out. A port is only bound seconds later by the program it is given to, so it comes from below
// Linux's ephemeral range (32768-60999 by default): in that range any outgoing connection of the
// machine (every test package runs at once) may take it as its local port meanwhile, and a hub
// node or a dashboard then fails to listen.
func freePort(tb testing.TB) int {
	tb.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if _, given := givenPorts.Load(port); given {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // someone listens there
		}
		l.Close()
		if _, given := givenPorts.LoadOrStore(port, true); !given {
			return port
		}
	}
	tb.Fatal("no free port between 20000 and 32000 on 127.0.0.1")
	return 0
}

func newSuite(tb testing.TB, extraEnv ...string) *suite {
	tb.Helper()
	home := tb.TempDir()
	s := &suite{tb: tb, home: home}
	s.env = append(os.Environ(),
		"OBSERVER_HOME="+home,
		// observer-watch reads the clients' history under HOME: keep it to this test's.
		"HOME="+filepath.Join(home, "clienthome"), "CLAUDE_CONFIG_DIR=", "CODEX_HOME=",
		fmt.Sprintf("OBSERVER_BUS_PORT=%d", freePort(tb)),
		"OBSERVER_WRITER_ACK_WAIT=2s",
		fmt.Sprintf("OBSERVER_PROXY_ADDR=127.0.0.1:%d", freePort(tb)),
		fmt.Sprintf("OBSERVER_DASH_ADDR=127.0.0.1:%d", freePort(tb)),
		// The OTLP receiver's default ports would be shared by every suite of the run.
		fmt.Sprintf("OBSERVER_OTLP_ADDR=127.0.0.1:%d", freePort(tb)),
		fmt.Sprintf("OBSERVER_OTLP_GRPC_ADDR=127.0.0.1:%d", freePort(tb)),
		"OBSERVER_LOG_LEVEL=info",
		// [pricing] auto_update is on by default: no test reaches the network (a test that
		// checks it points [pricing] url at a local server and drops this).
		"OBSERVER_PRICING_AUTO_UPDATE=false",
	)
	s.env = append(s.env, extraEnv...)
	tb.Cleanup(s.stop)
	return s
}

func (s *suite) bin(name string) string { return filepath.Join(binDir, name) }

// ctl runs observerctl with stdin and returns stdout, stderr and the exit code.
func (s *suite) ctl(stdin []byte, args ...string) (string, string, int) {
	cmd := exec.Command(s.bin("observerctl"), args...)
	cmd.Env = s.env
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.tb.Fatalf("run observerctl %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// start runs `observerctl up` in the foreground as a child of the test and waits until healthy.
func (s *suite) start() {
	s.tb.Helper()
	s.launch("up", "--grace", "5s")
	s.waitHealthy(30 * time.Second)
}

// launch runs observerctl with args (a supervisor: up, hub up) as a child of the test without
// waiting for it to be healthy.
func (s *suite) launch(args ...string) {
	s.tb.Helper()
	cmd := exec.Command(s.bin("observerctl"), args...)
	cmd.Env = s.env
	logf, err := os.OpenFile(filepath.Join(s.home, "up-stderr.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		s.tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	s.up = cmd
	s.upCh = make(chan error, 1)
	go func() { s.upCh <- cmd.Wait(); logf.Close() }()
}

type statusJSON struct {
	Running    bool `json:"running"`
	PID        int  `json:"pid"`
	Components []struct {
		Name     string `json:"name"`
		PID      int    `json:"pid"`
		Health   string `json:"health"`
		Restarts int    `json:"restarts"`
		Detail   string `json:"detail"`
	} `json:"components"`
	Bus struct {
		Pending uint64 `json:"pending"`
		Spooled int    `json:"spool_files"`
	} `json:"bus"`
}

func (s *suite) status() (statusJSON, int) {
	out, _, code := s.ctl(nil, "status", "--json")
	var st statusJSON
	json.Unmarshal([]byte(out), &st)
	return st, code
}

// patient stretches a wait: a wait bounds a hang, it does not assert a latency, and on a loaded
// machine (load 20 on two cores) what takes a second on a quiet one can take ten.
func patient(d time.Duration) time.Duration { return max(d, 2*time.Minute) }

func (s *suite) waitHealthy(d time.Duration) statusJSON {
	s.tb.Helper()
	d = patient(d)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.upCh:
			s.up = nil // nothing left to stop
			s.tb.Fatalf("observerctl up exited: %v\n%s", err, s.readFile("up-stderr.log"))
		default:
		}
		if st, code := s.status(); code == 0 {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, errOut, _ := s.ctl(nil, "status")
	var logs strings.Builder
	for _, c := range []string{"writer", "proxy", "watch", "dash"} {
		lines := strings.Split(strings.TrimSpace(s.readFile("logs/"+c+".log")), "\n")
		fmt.Fprintf(&logs, "--- logs/%s.log (last lines):\n%s\n", c, strings.Join(lines[max(0, len(lines)-8):], "\n"))
	}
	s.tb.Fatalf("suite not healthy after %v:\n%s%s\n%s\n%s--- up-stderr.log:\n%s", d, out, errOut, s.readFile("logs/supervisor.log"), logs.String(),
		s.readFile("up-stderr.log"))
	return statusJSON{}
}

func (s *suite) componentPID(name string) int {
	st, _ := s.status()
	for _, c := range st.Components {
		if c.Name == name {
			return c.PID
		}
	}
	return 0
}

func (s *suite) readFile(rel string) string {
	data, _ := os.ReadFile(filepath.Join(s.home, rel))
	return string(data)
}

// kill9 kills the supervisor that hosts the bus.
func (s *suite) kill9Up() {
	s.up.Process.Signal(syscall.SIGKILL)
	<-s.upCh
	s.up = nil
}

func (s *suite) stop() {
	if s.up == nil {
		return
	}
	s.up.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.upCh:
	case <-time.After(20 * time.Second):
		s.up.Process.Kill()
		<-s.upCh
	}
	s.up = nil
}

// db opens the store read-only.
func (s *suite) db() *sql.DB {
	s.tb.Helper()
	db, err := sql.Open(store.DriverName, "file:"+filepath.Join(s.home, "observer.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		s.tb.Fatal(err)
	}
	s.tb.Cleanup(func() { db.Close() })
	return db
}

func (s *suite) count(query string, args ...any) int {
	s.tb.Helper()
	db := s.db()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return 0
		}
		s.tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// waitCount waits until query returns want, failing after d.
func (s *suite) waitCount(d time.Duration, want int, query string, args ...any) {
	s.tb.Helper()
	d = patient(d)
	deadline := time.Now().Add(d)
	got := -1
	for time.Now().Before(deadline) {
		// The writer creates the store when it starts: until then there is nothing to count.
		if _, err := os.Stat(filepath.Join(s.home, "observer.db")); err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if got = s.count(query, args...); got == want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.tb.Fatalf("%s = %d after %v, want %d", query, got, d, want)
}

// hookPayload is a Claude Code PreToolUse hook payload with a unique tool_use_id.
func hookPayload(tag string, i int) []byte {
	return fmt.Appendf(nil, `{"session_id":"sess-%s-%d","transcript_path":"/home/u/.claude/projects/p/s.jsonl","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"%s-%d","tool_input":{"command":"ls"}}`,
		tag, i%37, tag, i)
}

// runHooks calls `observerctl hook` n times with the given parallelism and returns how many exited 0.
func (s *suite) runHooks(ctx context.Context, tag string, from, n, parallel int, onDone func(done int)) int {
	s.tb.Helper()
	jobs := make(chan int)
	results := make(chan int)
	for range parallel {
		go func() {
			for i := range jobs {
				_, errOut, code := s.ctl(hookPayload(tag, i), "hook")
				if code != 0 {
					s.tb.Errorf("hook %d: exit %d: %s", i, code, errOut)
				}
				results <- code
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := from; i < from+n; i++ {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	ok := 0
	for done := 1; done <= n; done++ {
		if <-results == 0 {
			ok++
		}
		if onDone != nil {
			onDone(done)
		}
	}
	return ok
}
