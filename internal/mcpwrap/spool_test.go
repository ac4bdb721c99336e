package mcpwrap_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/mcpwrap"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/store"
)

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// spooledCalls counts the mcp_call events in the spool directory's files.
func spooledCalls(dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	n := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		n += bytes.Count(data, []byte(`"kind":"mcp_call"`))
	}
	return n
}

// TestProxy_SpoolsWhileBusDown: with the bus down, calls still go through and their events go to
// the disk spool; when a bus comes up, the wrap's client publishes them and the writer stores them.
func TestProxy_SpoolsWhileBusDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	home := t.TempDir()
	tokenPath, spoolDir := filepath.Join(home, "bus.token"), filepath.Join(home, "spool")
	token, err := bus.LoadOrCreateToken(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cl, err := bus.Connect(ctx, bus.Options{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), TokenFile: tokenPath,
		Name: "observer-mcp-wrap", SpoolDir: spoolDir, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	s := start(t, mcpwrap.Options{Publisher: cl, SessionID: "sess-spool"})
	s.initialize()
	t0 := time.Now()
	for i := range 5 {
		s.tool(i+1, "echo", map[string]any{"text": fmt.Sprint(i)})
		text(t, s.answer(fmt.Sprint(i+1), 5*time.Second))
	}
	t.Logf("5 calls with the bus down in %v", time.Since(t0).Round(time.Millisecond))
	deadline := time.Now().Add(5 * time.Second)
	for spooledCalls(spoolDir) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := spooledCalls(spoolDir); n != 5 {
		t.Fatalf("%d events in the spool, want 5", n)
	}

	srv, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(home, "bus"), Port: port, Token: token, AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wcl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: token, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wcl.Close()
	w := &writer.Writer{Store: st, Bus: wcl, Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	rows := func() int {
		var n int
		st.DB.QueryRow("SELECT count(*) FROM mcp_calls").Scan(&n)
		return n
	}
	waitRows := func(want int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for rows() != want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := rows(); n != want {
			t.Fatalf("mcp_calls has %d rows, want %d", n, want)
		}
	}
	waitRows(5)
	// With the bus up, a new call is published straight away.
	s.tool(6, "echo", map[string]any{"text": "live"})
	text(t, s.answer("6", 5*time.Second))
	waitRows(6)
	var tool, client, session, server string
	var in int64
	if err := st.DB.QueryRow(`SELECT tool, client, session_id, server, input_bytes FROM mcp_calls WHERE request_id = '6'`).
		Scan(&tool, &client, &session, &server, &in); err != nil {
		t.Fatal(err)
	}
	if tool != "echo" || client != "claude-code" || session != "sess-spool" || server != "fake-server" || in != int64(len(`{"text":"live"}`)) {
		t.Errorf("stored call: %s %s %s %s %d", tool, client, session, server, in)
	}
	cancel()
	<-done
}
