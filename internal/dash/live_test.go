package dash

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
)

const busToken = "dash-test-token"

// liveBus starts a real bus, and makes srv's hub follow it as observer-dash does; it returns a
// second client to publish with.
func liveBus(tb testing.TB, srv *Server) *bus.Client {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(tb.TempDir(), "bus"), Port: -1, Token: busToken, AckWait: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	connect := func(name string) *bus.Client {
		cl, err := bus.Connect(ctx, bus.Options{URL: b.ClientURL(), Token: busToken, Name: name, Wait: true, Timeout: 2 * time.Second})
		if err != nil {
			tb.Fatal(err)
		}
		return cl
	}
	sub, pub := connect("observer-dash"), connect("test-producer")
	done := make(chan struct{})
	go func() { srv.Live().Follow(ctx, sub, srv.logger); close(done) }()
	tb.Cleanup(func() { cancel(); <-done; pub.Close(); sub.Close(); b.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for !srv.Live().Connected() {
		if time.Now().After(deadline) {
			tb.Fatal("the hub did not subscribe to the bus")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return pub
}

func testAction(client, session, target string, ok bool) *event.Event {
	ev := event.New(event.KindAction, "test")
	ev.ID = event.RandomID()
	ev.Client, ev.SessionID, ev.Project = client, session, "/tmp/project"
	ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: target, Success: &ok, Output: strings.Repeat("secret output ", 10)}
	if !ok {
		ev.Action.Error = "exit status 1"
	}
	return &ev
}

// sseReader reads one Server-Sent Events stream.
type sseReader struct {
	sc   *bufio.Scanner
	resp *http.Response
}

type sse struct{ name, data string }

func openSSE(tb testing.TB, u string) *sseReader {
	tb.Helper()
	resp, err := http.Get(u)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		tb.Fatalf("GET %s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sseReader{sc: bufio.NewScanner(resp.Body), resp: resp}
}

// next returns the next event, skipping comments and the retry field.
func (r *sseReader) next(tb testing.TB, within time.Duration) sse {
	tb.Helper()
	ch := make(chan sse, 1)
	go func() {
		var e sse
		for r.sc.Scan() {
			line := r.sc.Text()
			switch {
			case line == "" && (e.data != "" || e.name != ""):
				ch <- e
				return
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
			}
		}
		close(ch)
	}()
	select {
	case e, ok := <-ch:
		if !ok {
			tb.Fatal("the stream ended")
		}
		return e
	case <-time.After(within):
		tb.Fatalf("no event within %v", within)
	}
	return sse{}
}

// TestLive_BusEventsReachTheStream: an event published on the bus reaches /api/live within a
// second, filtered by client, summarised without its output; the stream starts by saying the bus
// is connected.
func TestLive_BusEventsReachTheStream(t *testing.T) {
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	pub := liveBus(t, srv.Server)
	r := openSSE(t, srv.URL+"/api/live?client=codex")
	hello := r.next(t, 2*time.Second)
	if hello.name != "hello" || !strings.Contains(hello.data, `"bus_connected":true`) {
		t.Fatalf("first event %+v, want hello with the bus connected", hello)
	}
	ctx := context.Background()
	for deadline := time.Now().Add(2 * time.Second); srv.Live().Clients() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stream did not register")
		}
	}
	if _, err := pub.Publish(ctx, testAction("claude-code", "s-other", "ls", true)); err != nil {
		t.Fatal(err)
	}
	want := testAction("codex", "s-1", "go test ./...", false)
	start := time.Now()
	if _, err := pub.Publish(ctx, want); err != nil {
		t.Fatal(err)
	}
	got := r.next(t, time.Second)
	t.Logf("bus to stream: %v", time.Since(start))
	var le LiveEvent
	if err := json.Unmarshal([]byte(got.data), &le); err != nil {
		t.Fatalf("%v: %q", err, got.data)
	}
	if le.ID != want.ID || le.Client != "codex" || !le.Failed || !strings.Contains(le.Summary, "go test ./...") {
		t.Fatalf("got %+v, want the codex event %s (the claude-code one is filtered out)", le, want.ID)
	}
	if strings.Contains(got.data, "secret output") {
		t.Error("the live stream carried a tool's output")
	}
}

// TestLive_SlowBrowserLosesOverflowOnly: a browser that does not read never blocks the hub; it
// is told how many events it lost.
func TestLive_SlowBrowserLosesOverflowOnly(t *testing.T) {
	h := NewHub()
	s := &liveSub{ch: make(chan []byte, liveBuffer)}
	if !h.add(s) {
		t.Fatal("add failed")
	}
	done := make(chan struct{})
	go func() {
		for i := 0; i < liveBuffer+10; i++ {
			h.Publish(*testAction("codex", "s", "ls", true))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a browser that does not read")
	}
	if len(s.ch) != liveBuffer || s.dropped.Load() != 10 {
		t.Fatalf("buffered %d, dropped %d; want %d and 10", len(s.ch), s.dropped.Load(), liveBuffer)
	}
}

// TestLive_TailOnlyWhileFollowed: the dashboard subscribes to every event only while a browser
// follows /api/live (decoding every event for nobody cost 15-20 µs of CPU per event), in place
// before the stream says hello, and lets it go a while after the last browser left.
func TestLive_TailOnlyWhileFollowed(t *testing.T) {
	defer func(d time.Duration) { tailLinger = d }(tailLinger)
	tailLinger = 100 * time.Millisecond
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	pub := liveBus(t, srv.Server)
	if srv.Live().Tailing() {
		t.Fatal("subscribed to every event with no browser following")
	}
	ch := openSSE(t, srv.URL+"/api/changes")
	ch.next(t, 2*time.Second)
	if srv.Live().Tailing() {
		t.Error("a /api/changes stream subscribed to every event")
	}
	r := openSSE(t, srv.URL+"/api/live")
	if hello := r.next(t, 2*time.Second); hello.name != "hello" || !srv.Live().Tailing() {
		t.Fatalf("hello %+v, tailing %v", hello, srv.Live().Tailing())
	}
	want := testAction("codex", "s-1", "make", true)
	if _, err := pub.Publish(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if got := r.next(t, time.Second); !strings.Contains(got.data, want.ID) {
		t.Fatalf("got %+v, want %s", got, want.ID)
	}
	r.resp.Body.Close()
	for deadline := time.Now().Add(5 * time.Second); srv.Live().Tailing(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("still subscribed to every event after the last browser left")
		}
	}
}
