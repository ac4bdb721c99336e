package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProxy_KilledAfterAnswer runs the components as the service units do (bus, writer and proxy
// apart), stops the bus (SIGSTOP) so that observer-proxy's first publish waits for an ack and the
// turns after it wait in its memory, kills the proxy with SIGKILL once its clients have their
// answers (their turns are in its journal by then, without waiting), and checks that the next
// observer-proxy on the same home publishes those turns from the journal the killed one left: each
// is stored once, and the journal ends empty.
func TestProxy_KilledAfterAnswer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		id := "msg_journal_" + r.Header.Get("X-Id")
		if r.URL.Query().Get("stream") == "1" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":%q,\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5\",\"content\":[],\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n", id)
			fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n")
			fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"type":"message","model":"claude-haiku-4-5","stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":3}}`, id)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL)
	busProc := s.spawn("observerctl", "bus")
	// The proxy starts once the bus has its stream, so its client publishes to the bus from the
	// first turn instead of spooling to disk (which would survive the kill without the journal).
	// The bus listens before its stream exists: a turn published in between is spooled, and the
	// client keeps spooling until its drain has ended, which may be after the turn is stored.
	waitTCP(t, "127.0.0.1:"+s.envValue("OBSERVER_BUS_PORT"))
	waitLogLine(t, filepath.Join(s.home, "observerctl-bus.log"), "bus is up")
	s.spawn("observerctl", "writer")
	proxyProc := s.spawn("observer-proxy")
	waitHTTP(t, "http://"+proxyAddr+"/")
	send := func(id string, stream bool) {
		t.Helper()
		u := "http://" + proxyAddr + "/v1/messages"
		if stream {
			u += "?stream=1"
		}
		req, _ := http.NewRequest("POST", u, strings.NewReader(`{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "msg_journal_"+id) {
			t.Fatalf("turn %s: status %d, %s", id, resp.StatusCode, body)
		}
	}
	// The whole path works: the proxy is connected to the bus, and the writer stores.
	send("warm", false)
	s.waitCount(60*time.Second, 1, "SELECT count(*) FROM api_turns")

	bus := busProc.cmd.Process.Pid
	if err := syscall.Kill(bus, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(bus, syscall.SIGCONT) })
	ids := []string{"held", "queued_json", "queued_stream"}
	for i, id := range ids {
		send(id, i == 2)
	}
	// A turn is journaled before its client has the whole response: kill as soon as they have it.
	dir := filepath.Join(s.home, "run", "proxy-journal")
	if !journalHolds(dir, ids) {
		t.Fatalf("the clients have their answers, and the proxy's journal in %s does not hold the turns %v", dir, ids)
	}
	proxyProc.kill9()
	if err := syscall.Kill(bus, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// They were in the proxy's memory, not in its spool: only the journal has them.
	if spooled := journalHolds(filepath.Join(s.home, "spool"), ids[1:]); spooled {
		t.Fatal("the turns were spooled: the proxy was not publishing to the bus, and the test does not exercise the journal")
	}

	s.spawn("observer-proxy")
	s.waitCount(60*time.Second, 1+len(ids), "SELECT count(DISTINCT message_id) FROM api_turns")
	for _, id := range ids {
		if n := s.count("SELECT count(*) FROM api_turns WHERE message_id = ? AND input_tokens = 7 AND output_tokens = 3", "msg_journal_"+id); n != 1 {
			t.Errorf("turn %s stored %d times with the upstream's figures, want once", id, n)
		}
	}
	if n := s.count("SELECT count(*) FROM api_turns"); n != 1+len(ids) {
		t.Errorf("%d api_turns rows, want %d", n, 1+len(ids))
	}
	// The killed proxy's journal is gone; the new proxy's holds nothing once it has published.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if info, err := e.Info(); err == nil && info.Size() > 0 {
				left = append(left, fmt.Sprintf("%s (%d bytes)", e.Name(), info.Size()))
			}
		}
		if len(left) == 0 && len(ents) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the journal holds %d files after the replay, %v not empty", len(ents), left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// journalHolds reports whether the files in dir (a journal, a spool) name every turn of ids.
func journalHolds(dir string, ids []string) bool {
	ents, _ := os.ReadDir(dir)
	var all []byte
	for _, e := range ents {
		if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
			all = append(all, data...)
		}
	}
	for _, id := range ids {
		if !strings.Contains(string(all), `"msg_journal_`+id+`"`) {
			return false
		}
	}
	return true
}

// waitLogLine waits until the log at path holds a line containing want.
func waitLogLine(tb testing.TB, path, want string) {
	tb.Helper()
	deadline := time.Now().Add(patient(0))
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s has no line with %q:\n%s", path, want, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitTCP waits until addr accepts connections.
func waitTCP(tb testing.TB, addr string) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("nothing accepts connections on %s", addr)
}

// envValue is the value the suite's environment gives name (the last one set), "" if none.
func (s *suite) envValue(name string) string {
	v := ""
	for _, kv := range s.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
