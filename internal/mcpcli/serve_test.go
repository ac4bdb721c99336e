package mcpcli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// observerMCP builds the observer-mcp binary once per test binary.
func observerMCP(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "observer-mcp-bin-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", binDir, "../../cmd/observer-mcp").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return filepath.Join(binDir, "observer-mcp")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// The real observer-mcp, driven over stdio as a client spawns it: lines the SDK would end the
// session on (batches, a message with an id and nothing else, a 10 MB query) are answered with
// JSON-RPC errors and the session goes on; requests written just before stdin closes are all
// answered; the process exits 0, its memory bounded.
func TestServe_Stdio(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(observerMCP(t), "--home", home)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "OBSERVER_HOME="+home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 1000)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v\nstderr:\n%s", err, &stderr)
		}
	}
	recv := func() reply {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("observer-mcp closed stdout\nstderr:\n%s", &stderr)
			}
			var r reply
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("reply %q: %v", line, err)
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10 s\nstderr:\n%s", &stderr)
		}
		return reply{}
	}

	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := recv(); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	query := strings.Repeat("needle ", 10<<20/7)
	for _, tc := range []struct{ name, line, id string }{
		{"EmptyBatch", `[]`, "null"},
		{"BatchOfNumbers", `[1,2]`, "null"},
		{"BatchOfRequests", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "null"},
		{"IDOnly", `{"jsonrpc":"2.0","id":3}`, "3"},
		{"10MBQuery", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_past_outputs","arguments":{"query":"` + query + `"}}}`, "4"},
	} {
		start := time.Now()
		send(tc.line)
		r := recv()
		if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("%s: reply id %s error %+v, want id %s and -32600", tc.name, r.ID, r.Error, tc.id)
		}
		if tc.name == "10MBQuery" {
			t.Logf("a %d-byte query line refused in %v: %s", len(tc.line), time.Since(start), r.Error.Message)
		}
	}

	// Requests written right before stdin closes are answered before the process exits.
	var batch strings.Builder
	const first, calls = 100, 40
	for id := first; id < first+calls; id++ {
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_session_summary","arguments":{}}}`+"\n", id)
	}
	io.WriteString(stdin, batch.String())
	stdin.Close()
	closed := time.Now()
	answered := map[string]bool{}
	for line := range lines {
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		answered[string(r.ID)] = true
	}
	for id := first; id < first+calls; id++ {
		if !answered[fmt.Sprint(id)] {
			t.Errorf("request %d was written before stdin closed and not answered (%d of %d answered)", id, len(answered), calls)
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\nstderr:\n%s", err, &stderr)
	}
	t.Logf("exited %v after stdin closed", time.Since(closed))
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS == "linux" {
		rss := ru.Maxrss << 10 // KB on Linux
		t.Logf("peak resident memory: %d MB", rss>>20)
		if rss > 100<<20 {
			t.Errorf("peak resident memory %d MB, over 100 MB", rss>>20)
		}
	}
}
