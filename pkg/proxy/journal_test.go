package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// stuckPublisher is a BatchPublisher whose publishing never returns until release is closed: what
// it is handed stays in the proxy's memory, as behind a bus that does not answer.
type stuckPublisher struct {
	release chan struct{}
	free    func() // closes release, once
	entered chan struct{}
	once    sync.Once
}

// newStuckPublisher returns a stuckPublisher released when the test ends.
func newStuckPublisher(tb testing.TB) *stuckPublisher {
	s := &stuckPublisher{release: make(chan struct{}), entered: make(chan struct{})}
	s.free = sync.OnceFunc(func() { close(s.release) })
	tb.Cleanup(s.free)
	return s
}

func (s *stuckPublisher) Publish(ctx context.Context, ev *event.Event) (bus.Result, error) {
	_, err := s.PublishBatch(ctx, []event.Event{*ev})
	return bus.Published, err
}

func (s *stuckPublisher) PublishBatch(context.Context, []event.Event) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return 0, nil
}

// gatedPublisher is a BatchPublisher that publishes a batch each time gate lets one through.
type gatedPublisher struct {
	gate chan struct{}
	mu   sync.Mutex
	ids  map[string]int
	got  chan struct{}
}

func (g *gatedPublisher) Publish(ctx context.Context, ev *event.Event) (bus.Result, error) {
	_, err := g.PublishBatch(ctx, []event.Event{*ev})
	return bus.Published, err
}

func (g *gatedPublisher) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	<-g.gate
	g.mu.Lock()
	for _, ev := range evs {
		g.ids[ev.APITurn.MessageID]++
	}
	g.mu.Unlock()
	for range evs {
		g.got <- struct{}{}
	}
	return 0, nil
}

// idUpstream answers like the Messages API, with the message id the request's X-Id names: a JSON
// body, or a stream when the URL asks for one.
func idUpstream(tb testing.TB) *httptest.Server {
	tb.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		id := "msg_" + r.Header.Get("X-Id")
		if r.URL.Query().Get("stream") == "1" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, strings.Replace(anthropicStream, "msg_01abc", id, 1))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(benchJSON, "msg_bench", id, 1))
	}))
	tb.Cleanup(up.Close)
	return up
}

// sendTurn sends one Messages request through the proxy at base and reads the whole answer.
func sendTurn(tb testing.TB, base, id string, stream bool) {
	tb.Helper()
	u := base + "/v1/messages"
	if stream {
		u += "?stream=1"
	}
	req, _ := http.NewRequest("POST", u, strings.NewReader(claudeBody))
	req.Header.Set("X-Id", id)
	req.Header.Set("x-api-key", "sk-ant-journal-test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		tb.Fatalf("turn %s: status %d", id, resp.StatusCode)
	}
}

// kill drops a proxy the way kill -9 does: its memory (the queue) is gone without Close, and the
// kernel closes its files, which releases the flocks on its journal. The proxy's goroutines stay
// blocked in their publisher; the journal no longer touches its files.
func kill(p *Proxy) {
	j := p.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, s := range j.segs {
		s.f.Close()
	}
	j.closed = true
}

// journalFiles returns the journal's segment files and their sizes.
func journalFiles(tb testing.TB, dir string) map[string]int64 {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// TestProxy_JournalSurvivesKill: turns the client got its answer for, queued behind a publisher
// that never returns, are published by the next proxy on the same journal after the first is
// killed, each once, with the event the first proxy made; the journal is gone after.
func TestProxy_JournalSurvivesKill(t *testing.T) {
	up := idUpstream(t)
	dir := filepath.Join(t.TempDir(), "proxy-journal")
	stuck := newStuckPublisher(t)
	p1, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: stuck, Coster: flatCost{},
		JournalDir: dir, Host: "h1", User: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stuck.free(); p1.Close() })
	srv1 := httptest.NewServer(p1)
	const n = 40
	want := map[string]bool{}
	for i := range n {
		id := fmt.Sprint("kill_", i)
		sendTurn(t, srv1.URL, id, i%2 == 1)
		want["msg_"+id] = true
	}
	<-stuck.entered // the first turn is in the publisher, the rest in the queue
	// Close waits for the handlers, which record each turn once the client has its answer.
	srv1.Close()
	kill(p1)

	cp := newCapture()
	p2, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, JournalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for range n {
		ev := cp.nextEvent(t)
		if ev.Kind != event.KindAPITurn || ev.APITurn == nil {
			t.Fatalf("replayed a %s event", ev.Kind)
		}
		if ev.Host != "h1" || ev.User != "u1" || ev.Source != "observer-proxy" || ev.ID == "" {
			t.Errorf("replayed turn %s lost its envelope: %+v", ev.APITurn.MessageID, ev)
		}
		if ev.APITurn.Output != 45 || ev.APITurn.CostUSD == 0 {
			t.Errorf("replayed turn %s lost its figures: %+v", ev.APITurn.MessageID, *ev.APITurn)
		}
		got[ev.APITurn.MessageID]++
	}
	p2.Close()
	for id := range want {
		if got[id] != 1 {
			t.Errorf("turn %s published %d times after the kill, want once", id, got[id])
		}
	}
	if len(got) != n {
		t.Errorf("%d distinct turns published, want %d: %v", len(got), n, got)
	}
	if files := journalFiles(t, dir); len(files) != 0 {
		t.Errorf("journal files left after the replay and a clean stop: %v", files)
	}
}

// TestProxy_JournalEmptied: the journal holds only what waits to be published. A turn published
// leaves the segment empty; under steady load segments are set aside at their size bound and
// removed once published, and the journal ends empty.
func TestProxy_JournalEmptied(t *testing.T) {
	up := idUpstream(t)
	dir := t.TempDir()
	gp := &gatedPublisher{gate: make(chan struct{}), ids: map[string]int{}, got: make(chan struct{}, 1000)}
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: gp, Coster: flatCost{}, JournalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p.journal.mu.Lock()
	p.journal.maxSeg = 2 << 10 // a couple of turns per segment
	p.journal.mu.Unlock()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	waitPublished := func(k int) {
		t.Helper()
		for range k {
			select {
			case <-gp.got:
			case <-time.After(10 * time.Second):
				t.Fatal("turns not published within 10 s")
			}
		}
	}
	// waitEmpty waits until the journal is one empty segment, the state a drained journal is in.
	waitEmpty := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			files := journalFiles(t, dir)
			var total int64
			for _, size := range files {
				total += size
			}
			if len(files) == 1 && total == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the journal holds %d bytes in %v, want one empty segment", what, total, files)
			}
			time.Sleep(time.Millisecond)
		}
	}

	sendTurn(t, srv.URL, "one", false)
	gp.gate <- struct{}{}
	waitPublished(1)
	waitEmpty("after one turn")

	// A turn stuck in the publisher while 30 more come: the journal grows, in several segments.
	var wg sync.WaitGroup
	sendTurn(t, srv.URL, "first", false)
	const m = 30
	for i := range m {
		wg.Add(1)
		go func() { defer wg.Done(); sendTurn(t, srv.URL, fmt.Sprint("load_", i), i%3 == 0) }()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(journalFiles(t, dir)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("31 turns waiting are in %v, want several segments", journalFiles(t, dir))
		}
		time.Sleep(time.Millisecond)
	}
	close(gp.gate)
	waitPublished(m + 1)
	waitEmpty("after 31 turns")

	p.Close()
	if files := journalFiles(t, dir); len(files) != 0 {
		t.Errorf("journal files left after Close: %v", files)
	}
	for id, k := range gp.ids {
		if k != 1 {
			t.Errorf("turn %s published %d times", id, k)
		}
	}
}

// TestProxy_JournalHoldsScrubbedEvents: the journal holds the turn as it would be published: the
// credential an upstream's error echoed is taken out, no request header is there, and its files
// are the user's alone.
func TestProxy_JournalHoldsScrubbedEvents(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(echoKeyHandler))
	t.Cleanup(up.Close)
	dir := filepath.Join(t.TempDir(), "proxy-journal")
	stuck := newStuckPublisher(t)
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: stuck, JournalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stuck.free(); p.Close() })
	srv := httptest.NewServer(p)
	const key = "gateway-issued-journal-0123456789"
	for _, path := range []string{"/v1/messages", "/v1/chat/completions"} {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if path == "/v1/messages" {
			req.Header.Set("X-Api-Key", key)
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		req.Header.Set("X-Custom-Header", "header-value-never-journaled")
		req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, cli)")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), key) {
			t.Fatalf("the upstream's error did not echo the key: %s", body)
		}
	}
	srv.Close()
	kill(p)
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("journal directory mode %o, want 700", perm)
	}
	var all []byte
	for name := range journalFiles(t, dir) {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("journal file %s mode %o, want 600", name, perm)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	if n := bytes.Count(all, []byte("\n")); n != 2 {
		t.Fatalf("the journal holds %d lines, want the 2 turns:\n%s", n, all)
	}
	for _, secret := range []string{key, "header-value-never-journaled", "X-Custom-Header", "x-api-key", "Authorization", "Bearer"} {
		if bytes.Contains(bytes.ToLower(all), bytes.ToLower([]byte(secret))) {
			t.Errorf("the journal holds %q:\n%s", secret, all)
		}
	}
	if !bytes.Contains(all, []byte("API key not valid")) {
		t.Errorf("the journal lacks the turns' error messages:\n%s", all)
	}
}

// TestProxy_JournalReplay: at start the proxy publishes the segments no live process holds, skips
// a last line the kill cut short, removes them and an old .partial file; a segment whose owner
// still holds its lock (a proxy running beside it on the same home) is neither published nor
// removed, nor a .partial a starting proxy may be about to lock.
func TestProxy_JournalReplay(t *testing.T) {
	dir := t.TempDir()
	line := func(id string) string {
		ev := event.New(event.KindAPITurn, "observer-proxy")
		ev.ID = "id_" + id
		ev.APITurn = &event.APITurn{Provider: Anthropic, Endpoint: "/v1/messages", Model: "m", MessageID: id, Status: 200}
		data, err := event.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		return string(data) + "\n"
	}
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cut := line("cut")
	write("100-2000-1.jsonl", line("a")+line("b"))
	write("100-2000-2.jsonl", line("c")+cut[:len(cut)/2])
	write("99-3000-1.jsonl", line("d"))
	old := time.Now().Add(-2 * time.Minute)
	for name, mtime := range map[string]time.Time{"98-1000-1.partial": old, "97-4000-1.partial": time.Now()} {
		if err := os.Chtimes(write(name, ""), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	live := write("200-1500-1.jsonl", line("live"))
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: "http://127.0.0.1:1", OpenAIUpstream: "http://127.0.0.1:1", Publisher: cp, JournalDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for range 4 {
		order = append(order, cp.next(t).MessageID)
	}
	p.Close()
	if got := strings.Join(order, " "); got != "a b c d" {
		t.Errorf("replayed %s, want a b c d (oldest proxy first, each segment in order, the cut line skipped)", got)
	}
	cp.mu.Lock()
	if len(cp.evs) != 4 {
		t.Errorf("%d events published, want 4", len(cp.evs))
	}
	cp.mu.Unlock()
	files := journalFiles(t, dir)
	_, kept := files["200-1500-1.jsonl"]
	_, young := files["97-4000-1.partial"]
	if !kept || !young || len(files) != 2 {
		t.Errorf("journal files after the replay: %v, want only the live proxy's segment and the young .partial", files)
	}
}

// BenchmarkJournal_Write is what journaling costs a turn: encoding its event and one write on the
// handler's goroutine, and the publisher's share of emptying the journal (one truncate per batch):
// batch-256 as under load, batch-1 as when turns come apart and each is its own batch.
//
//	go test -run '^$' -bench Journal -benchmem ./pkg/proxy/
func BenchmarkJournal_Write(b *testing.B) {
	ev := event.New(event.KindAPITurn, "observer-proxy")
	ev.ID, ev.Client, ev.SessionID = event.RandomID(), "claude-code", "11111111-2222-3333-4444-555555555555"
	ev.APITurn = &event.APITurn{Provider: Anthropic, Endpoint: "/v1/messages", Model: "claude-sonnet-4-5-20250929",
		MessageID: "msg_01abc", RequestID: "req_xyz", Stream: true, Status: 200, StopReason: "end_turn",
		Tokens: event.Tokens{Input: 100, Output: 45, CacheRead: 1000, CacheCreation: 300}, CostUSD: 0.0123,
		LatencyMs: 812.5, TTFBMs: 230.1, Messages: 3, Tools: 2, BytesIn: 4096, BytesOut: 2048}
	for _, batch := range []int{256, 1} {
		b.Run(fmt.Sprint("batch-", batch), func(b *testing.B) {
			j, _, err := openJournal(b.TempDir(), slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			defer j.close()
			segs := make([]*segment, 0, batch)
			b.ReportAllocs()
			for range b.N {
				segs = append(segs, j.write(nil, &ev))
				if len(segs) == batch {
					j.published(segs...)
					segs = segs[:0]
				}
			}
		})
	}
}
