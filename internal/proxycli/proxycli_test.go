package proxycli

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/testlog"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
)

// TestRun_OTLPPortTaken: when another program holds the OTLP/HTTP port, the proxy serves on, but
// its heartbeat says it is degraded, naming the listener, the address and the error, so that
// `observerctl status` and doctor show it instead of "ok".
func TestRun_OTLPPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0") // the other collector
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	beats, done, errOut := runProxy(t, map[string]string{"OBSERVER_OTLP_ADDR": taken.Addr().String(), "OBSERVER_OTLP_GRPC_ADDR": "127.0.0.1:0"})

	var h bus.Health
	select {
	case h = <-beats:
	case code := <-done:
		t.Fatalf("the proxy exited (%d) instead of serving on without the OTLP/HTTP listener:\n%s", code, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no heartbeat from the proxy:\n%s", errOut.String())
	}
	if !h.OK || h.Component != "proxy" {
		t.Errorf("heartbeat %+v, want the proxy's, ok (it serves)", h)
	}
	want := "otlp/http listener " + taken.Addr().String() + ": address already in use"
	if len(h.Degraded) != 1 || !strings.HasPrefix(h.Degraded[0], want) {
		t.Fatalf("degraded %q, want one problem starting %q", h.Degraded, want)
	}
	if !strings.Contains(h.Degraded[0], "[otlp] addr") {
		t.Errorf("degraded %q does not say which setting to change", h.Degraded[0])
	}
	if !strings.Contains(h.Detail, "otlp grpc://127.0.0.1:") {
		t.Errorf("detail %q lacks the gRPC listener that works", h.Detail)
	}
}

// runProxy runs observer-proxy (Run) on a bus of its own with env set, until the test ends, and
// returns its heartbeats, its exit code once it exits, and its log.
func runProxy(t *testing.T, env map[string]string) (<-chan bus.Health, <-chan int, *testlog.Buffer) {
	t.Helper()
	home := t.TempDir()
	token, err := bus.LoadOrCreateToken(filepath.Join(home, "bus.token"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := busserver.Start(context.Background(), busserver.Config{Dir: filepath.Join(home, "bus"), Host: "127.0.0.1", Port: -1, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cl, err := bus.Connect(context.Background(), bus.Options{Server: srv, Token: token, Name: "proxycli-test", Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	beats := make(chan bus.Health, 16)
	sub, err := cl.SubscribeHealth(func(h bus.Health) {
		select {
		case beats <- h:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	t.Setenv("OBSERVER_BUS_PORT", srv.ClientURL()[strings.LastIndex(srv.ClientURL(), ":")+1:])
	t.Setenv("OBSERVER_PROXY_ADDR", "127.0.0.1:0")
	for k, v := range env {
		t.Setenv(k, v)
	}

	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &testlog.Buffer{}, &testlog.Buffer{}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"observer-proxy", "--home", home}, out, errOut) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the proxy did not stop")
		}
	})
	return beats, done, errOut
}

// TestRun_OTLPBodyTimeout: [otlp] body_timeout reaches the receiver: a body that stops arriving
// is answered 408 once it passes.
func TestRun_OTLPBodyTimeout(t *testing.T) {
	beats, done, errOut := runProxy(t, map[string]string{"OBSERVER_OTLP_ADDR": "127.0.0.1:0", "OBSERVER_OTLP_GRPC_ADDR": "",
		"OBSERVER_OTLP_BODY_TIMEOUT": "200ms"})
	var h bus.Health
	select {
	case h = <-beats:
	case code := <-done:
		t.Fatalf("the proxy exited (%d):\n%s", code, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no heartbeat from the proxy:\n%s", errOut.String())
	}
	_, addr, ok := strings.Cut(h.Detail, "otlp http://")
	if !ok {
		t.Fatalf("detail %q names no OTLP/HTTP listener", h.Detail)
	}
	addr, _, _ = strings.Cut(addr, ": ") // "otlp http://127.0.0.1:PORT: 0 exports, ..."
	addr = strings.Fields(addr)[0]
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang guard, not a measure
	fmt.Fprintf(conn, "POST /v1/logs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n\x0a", addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped arriving: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
}
