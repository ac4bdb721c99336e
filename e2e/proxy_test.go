package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// proc is a long-running binary started by a test.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

func (s *suite) spawn(name string, args ...string) *proc {
	s.tb.Helper()
	cmd := exec.Command(s.bin(name), args...)
	cmd.Env = s.env
	logf, err := os.OpenFile(filepath.Join(s.home, name+"-"+strings.Join(args, "-")+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		s.tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	s.tb.Cleanup(func() { p.stop() })
	return p
}

func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) kill9() {
	p.cmd.Process.Kill()
	<-p.done
}

// waitHTTP waits until url answers.
func waitHTTP(tb testing.TB, url string) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Head(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("%s does not answer", url)
}

// TestProxy_BusDown60s runs the components the way the service units do (bus, writer and proxy as
// separate processes, the proxy started first), kills the bus for 60 s while requests flow through
// the proxy, and checks that every request was answered and every turn reaches the store once the
// bus is back.
func TestProxy_BusDown60s(t *testing.T) {
	if testing.Short() {
		t.Skip("takes over a minute")
	}
	var served atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_busdown_%d","type":"message","model":"claude-haiku-4-5","stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":3}}`, n, n)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL)
	// The proxy starts first, before the bus has even made its token: its first turns spool.
	s.spawn("observer-proxy")
	waitHTTP(t, "http://"+proxyAddr+"/")
	busProc := s.spawn("observerctl", "bus")
	s.spawn("observerctl", "writer")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent, failed atomic.Int64
	trafficDone := make(chan struct{})
	go func() {
		defer close(trafficDone)
		client := &http.Client{Timeout: 10 * time.Second}
		for ctx.Err() == nil {
			resp, err := client.Post("http://"+proxyAddr+"/v1/messages", "application/json",
				strings.NewReader(`{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}]}`))
			sent.Add(1)
			if err != nil || resp.StatusCode != 200 {
				failed.Add(1)
			}
			if resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(3 * time.Second)
	busProc.kill9()
	downAt := sent.Load()
	time.Sleep(60 * time.Second)
	duringDown := sent.Load() - downAt
	s.spawn("observerctl", "bus")
	time.Sleep(5 * time.Second)
	cancel()
	<-trafficDone
	n := int(sent.Load())
	t.Logf("%d requests in all, %d while the bus was down, %d failed", n, duringDown, failed.Load())
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed through the proxy while the bus was down", failed.Load())
	}
	if duringDown < 500 {
		t.Fatalf("only %d requests while the bus was down", duringDown)
	}
	s.waitCount(60*time.Second, n, "SELECT count(*) FROM api_turns")
	if m := s.count("SELECT count(DISTINCT message_id) FROM api_turns"); m != n {
		t.Fatalf("%d distinct turns stored, want %d", m, n)
	}
	// Every stored turn carries the upstream's own figures.
	if bad := s.count("SELECT count(*) FROM api_turns WHERE 'msg_busdown_' || input_tokens != message_id OR output_tokens != 3"); bad != 0 {
		t.Fatalf("%d turns with figures that differ from the upstream's", bad)
	}
}

// TestProxy_Limits runs observer-proxy with its limits set from the environment and checks each
// answer the client gets and each turn the store keeps: a silent upstream answered with a 504 once
// [proxy] response_header_timeout passes, a body over [proxy] max_body_bytes with a 413, and a
// request from a rebinding page or a browser refused with a 403 and not recorded.
func TestProxy_Limits(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Silent") != "" {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_limits","type":"message","model":"claude-haiku-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":3}}`)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL,
		"OBSERVER_PROXY_RESPONSE_HEADER_TIMEOUT=1s", "OBSERVER_PROXY_MAX_BODY_BYTES=1048576")
	s.spawn("observerctl", "bus")
	s.spawn("observerctl", "writer")
	s.spawn("observer-proxy")
	waitHTTP(t, "http://"+proxyAddr+"/")

	client := &http.Client{Timeout: 20 * time.Second}
	post := func(body string, header ...string) (int, string, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+proxyAddr+"/v1/messages", strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
			} else {
				req.Header.Set(header[i], header[i+1])
			}
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), time.Since(start)
	}
	const small = `{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}]}`
	if code, body, took := post(small, "X-Silent", "1"); code != 504 || !strings.Contains(body, `"timeout_error"`) {
		t.Fatalf("silent upstream: %d after %v: %s", code, took, body)
	}
	big := `{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<20) + `"}]}`
	if code, body, _ := post(big); code != 413 || !strings.Contains(body, `"request_too_large"`) {
		t.Fatalf("2 MiB body: %d %s", code, body)
	}
	for _, h := range [][]string{{"Host", "rebound.example:8820"}, {"Origin", "https://page.example"}} {
		if code, body, _ := post(small, h...); code != 403 || !strings.Contains(body, `"permission_error"`) {
			t.Fatalf("%s %s: %d %s", h[0], h[1], code, body)
		}
	}
	if code, body, _ := post(small, "Host", "localhost:1"); code != 200 {
		t.Fatalf("localhost: %d %s", code, body)
	}
	s.waitCount(30*time.Second, 3, "SELECT count(*) FROM api_turns")
	for class, status := range map[string]int{"upstream_timeout": 504, "request_too_large": 413, "": 200} {
		if n := s.count("SELECT count(*) FROM api_turns WHERE error_class = ? AND status = ?", class, status); n != 1 {
			t.Errorf("%d turns with error class %q and status %d, want 1", n, class, status)
		}
	}
	time.Sleep(time.Second)
	if n := s.count("SELECT count(*) FROM api_turns"); n != 3 {
		t.Errorf("%d turns stored, want 3: a refused request was recorded", n)
	}
}
