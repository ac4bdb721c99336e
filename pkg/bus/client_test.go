package bus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
)

func publish(tb testing.TB, c *bus.Client, ev event.Event, want bus.Result) {
	tb.Helper()
	res, err := c.Publish(context.Background(), &ev)
	if err != nil {
		tb.Fatalf("Publish %s: %v", ev.Hook.Event, err)
	}
	if res != want {
		tb.Fatalf("Publish %s = %v, want %v", ev.Hook.Event, res, want)
	}
}

// consumeIDs reads n events through the writer's consumer and returns their ids in order.
func consumeIDs(tb testing.TB, c *bus.Client, n int) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	done := make(chan error, 1)
	go func() {
		done <- c.Consume(ctx, bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond},
			func(_ context.Context, batch []bus.Message) error {
				for _, m := range batch {
					ev, err := event.Decode(m.Data)
					if err != nil {
						tb.Errorf("consumed an undecodable message: %v", err)
						continue
					}
					ids = append(ids, ev.ID)
				}
				if len(ids) >= n {
					cancel()
				}
				return nil
			})
	}()
	if err := <-done; err != nil {
		tb.Fatalf("Consume: %v", err)
	}
	if len(ids) != n {
		tb.Fatalf("consumed %d events, want %d", len(ids), n)
	}
	return ids
}

func TestClient_SpoolsWhileDownAndDrainsOnReconnect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	port := freePort(t)
	srv := startServer(t, dir, port)
	spoolDir := filepath.Join(t.TempDir(), "spool")
	c := connect(t, bus.Options{URL: urlFor(port), SpoolDir: spoolDir, Name: "producer"})

	evs := []event.Event{hookEvent("e0", "c"), hookEvent("e1", "c"), hookEvent("e2", "c"), hookEvent("e3", "c")}
	publish(t, c, evs[0], bus.Published)
	// The consumer's count catches up with the stream's a moment after the publish ack.
	waitFor(t, "one event published and pending", func() bool {
		st := stats(t, srv)
		return st.Published == 1 && st.Pending == 1
	})

	srv.Close()
	publish(t, c, evs[1], bus.Spooled)
	publish(t, c, evs[2], bus.Spooled)
	sp, err := bus.OpenSpool(spoolDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := sp.Files(); len(fs) == 0 {
		t.Fatal("Publish said Spooled but the spool is empty")
	}

	srv = startServer(t, dir, port)
	waitFor(t, "the spool to drain into the restarted bus", func() bool {
		fs, _ := sp.Files()
		return len(fs) == 0 && stats(t, srv).Published == 3
	})
	// Once drained, Publish goes straight to the bus again.
	waitFor(t, "Publish to go to the bus", func() bool {
		res, err := c.Publish(context.Background(), &evs[3])
		if err != nil {
			t.Fatal(err)
		}
		return res == bus.Published
	})
	if st := stats(t, srv); st.Published != 4 {
		t.Errorf("stream holds %d events, want 4 (%+v)", st.Published, st)
	}
	w := connect(t, bus.Options{Server: srv, Wait: true, Name: "writer"})
	got := consumeIDs(t, w, 4)
	for i, ev := range evs {
		if got[i] != ev.ID {
			t.Errorf("consumed %v, want the order e0..e3", got)
			break
		}
	}
}

// TestClient_DrainsWhenFirstConnectedLate covers a producer started before the bus: its events
// are spooled, and they must reach the bus once it comes up, without waiting for another event.
func TestClient_DrainsWhenFirstConnectedLate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bus")
	port := freePort(t)
	spoolDir := filepath.Join(t.TempDir(), "spool")
	c := connect(t, bus.Options{URL: urlFor(port), SpoolDir: spoolDir})
	if c.Connected() {
		t.Fatal("connected with no bus running")
	}
	ev := hookEvent("early", "c")
	publish(t, c, ev, bus.Spooled)

	srv := startServer(t, dir, port)
	waitFor(t, "the spooled event to reach the bus", func() bool { return stats(t, srv).Published == 1 })
	waitFor(t, "Publish to go to the bus", func() bool {
		e := hookEvent("late", "c")
		res, err := c.Publish(context.Background(), &e)
		if err != nil {
			t.Fatal(err)
		}
		return res == bus.Published
	})
}

// TestClient_DrainsAfterFailedPublish covers a publish that fails while the connection stays up
// (the stream does not answer): the event is spooled, and the spool drains once the stream is
// back, without waiting for a reconnect.
func TestClient_DrainsAfterFailedPublish(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{URL: srv.ClientURL(), SpoolDir: t.TempDir(), Timeout: 300 * time.Millisecond})

	nc, err := nats.Connect(srv.ClientURL(), nats.Token(testToken))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, bus.StreamName); err != nil {
		t.Fatal(err)
	}
	publish(t, c, hookEvent("lost-stream", "c"), bus.Spooled)
	if !c.Connected() {
		t.Fatal("client disconnected; this test needs a failure with the connection up")
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: bus.StreamName, Subjects: []string{event.SubjectPrefix + ".>"},
	}); err != nil {
		t.Fatal(err)
	}
	str, err := js.Stream(ctx, bus.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the spooled event to reach the stream", func() bool {
		info, err := str.Info(ctx)
		return err == nil && info.State.Msgs == 1
	})
}

// TestClient_PublishBatchStreamSilent: a stream that takes a batch and never answers (a
// JetStream whose store failed a write on a full disk answers nothing) leaves PublishBatch waiting
// no longer than its timeout, for the whole batch: every event is spooled. Before, the timer fired
// for the first event only, and PublishBatch waited forever on the second, holding up every
// producer's publishing behind it.
func TestClient_PublishBatchStreamSilent(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{URL: srv.ClientURL(), SpoolDir: t.TempDir(), Timeout: 300 * time.Millisecond})
	taken := silentStream(t, srv)

	evs := []event.Event{hookEvent("silent-a", "c"), hookEvent("silent-b", "c"), hookEvent("silent-c", "c")}
	r := publishBatchGuarded(t, c, evs, taken)
	if r.err != nil || r.spooled != len(evs) {
		t.Fatalf("PublishBatch on a silent stream = %d spooled, %v; want all %d spooled", r.spooled, r.err, len(evs))
	}
}

// TestClient_PublishBatchStreamSilentNoSpool: without a spool, PublishBatch to a stream that never
// answers returns after its timeout too, naming every event as not recorded, ErrUnavailable.
func TestClient_PublishBatchStreamSilentNoSpool(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{URL: srv.ClientURL(), Timeout: 300 * time.Millisecond})
	taken := silentStream(t, srv)

	evs := []event.Event{hookEvent("silent-a", "c"), hookEvent("silent-b", "c"), hookEvent("silent-c", "c")}
	r := publishBatchGuarded(t, c, evs, taken)
	var nr *bus.NotRecordedError
	if !errors.As(r.err, &nr) || !slices.Equal(nr.Lost, []int{0, 1, 2}) || !errors.Is(r.err, bus.ErrUnavailable) || r.spooled != 0 {
		t.Fatalf("PublishBatch without a spool on a silent stream = %d spooled, %v; want all 3 named, ErrUnavailable", r.spooled, r.err)
	}
}

// silentStream replaces the bus's stream with something that takes the events and never answers,
// as a JetStream whose store failed a write does; it returns how many it took.
func silentStream(tb testing.TB, srv *busserver.Server) *atomic.Int64 {
	tb.Helper()
	nc, err := nats.Connect(srv.ClientURL(), nats.Token(testToken))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, bus.StreamName); err != nil {
		tb.Fatal(err)
	}
	taken := new(atomic.Int64)
	if _, err := nc.Subscribe(event.SubjectPrefix+".>", func(*nats.Msg) { taken.Add(1) }); err != nil {
		tb.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return taken
}

type batchResult struct {
	spooled int
	err     error
}

// publishBatchGuarded runs PublishBatch and fails the test if it has not returned a minute later
// (a hang guard: the tests' timeout is 300 ms).
func publishBatchGuarded(tb testing.TB, c *bus.Client, evs []event.Event, taken *atomic.Int64) batchResult {
	tb.Helper()
	done := make(chan batchResult, 1)
	go func() {
		n, err := c.PublishBatch(context.Background(), evs)
		done <- batchResult{n, err}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		tb.Fatalf("PublishBatch still waiting a minute after its 300 ms timeout (%d events taken)", taken.Load())
		return batchResult{}
	}
}

func TestClient_PublishDeduplicatesIDs(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true})
	ev := hookEvent("once", "c")
	publish(t, c, ev, bus.Published)
	publish(t, c, ev, bus.Published)
	if st := stats(t, srv); st.Published != 1 {
		t.Errorf("stream has %d events after publishing one id twice, want 1", st.Published)
	}
	// A batch of one kind and client is one message, de-duplicated as a whole: the same batch
	// published again (a retry) adds nothing. (The event published alone before is in it again:
	// the writer stores it once.)
	batch := []event.Event{ev, hookEvent("two", "c"), hookEvent("three", "c")}
	for range 2 {
		n, err := c.PublishBatch(context.Background(), batch)
		if err != nil || n != 0 {
			t.Fatalf("PublishBatch = %d spooled, %v", n, err)
		}
	}
	if st := stats(t, srv); st.Published != 2 {
		t.Errorf("stream has %d messages, want 2 (the event alone, the batch once)", st.Published)
	}
}

func TestClient_PublishRejects(t *testing.T) {
	srv := newServer(t)
	spoolDir := t.TempDir()
	c := connect(t, bus.Options{Server: srv, Wait: true, SpoolDir: spoolDir})

	bad := hookEvent("bad", "c")
	bad.ID = ""
	if _, err := c.Publish(context.Background(), &bad); !errors.Is(err, event.ErrNoID) {
		t.Errorf("Publish without id = %v, want ErrNoID", err)
	}
	huge := hookEvent("huge", "c")
	huge.Hook.Cwd = strings.Repeat("x", bus.MaxPayload)
	if _, err := c.Publish(context.Background(), &huge); !errors.Is(err, bus.ErrTooLarge) {
		t.Errorf("Publish of %d bytes = %v, want ErrTooLarge", bus.MaxPayload, err)
	}
	if _, err := c.PublishBatch(context.Background(), []event.Event{hookEvent("ok", "c"), bad}); !errors.Is(err, event.ErrNoID) {
		t.Errorf("PublishBatch with an invalid event = %v, want ErrNoID", err)
	}
	if ents, _ := os.ReadDir(spoolDir); len(ents) != 0 {
		t.Errorf("rejected events were spooled: %v", ents)
	}
	if st := stats(t, srv); st.Published != 0 {
		t.Errorf("rejected events reached the stream: %+v", st)
	}
}

func TestClient_PublishWithoutSpoolFailsWhenDown(t *testing.T) {
	c := connect(t, bus.Options{URL: urlFor(freePort(t)), Timeout: 200 * time.Millisecond})
	ev := hookEvent("nowhere", "c")
	if _, err := c.Publish(context.Background(), &ev); !errors.Is(err, bus.ErrUnavailable) {
		t.Errorf("Publish with the bus down and no spool = %v, want ErrUnavailable", err)
	}
}

func TestConnect_Unavailable(t *testing.T) {
	start := time.Now()
	c, err := bus.Connect(context.Background(), bus.Options{URL: urlFor(freePort(t)), Token: testToken, Wait: true})
	if err == nil {
		c.Close()
		t.Fatal("Connect with Wait to a closed port succeeded")
	}
	if !errors.Is(err, bus.ErrUnavailable) {
		t.Errorf("Connect = %v, want ErrUnavailable", err)
	}
	t.Logf("Connect gave up after %v", time.Since(start).Round(time.Millisecond))
}

func TestConnect_WrongToken(t *testing.T) {
	srv := newServer(t)
	c, err := bus.Connect(context.Background(), bus.Options{URL: srv.ClientURL(), Token: "wrong", Wait: true})
	if err == nil {
		c.Close()
		t.Fatal("Connect with a wrong token succeeded")
	}
	if !strings.Contains(err.Error(), "refused the token") {
		t.Errorf("Connect = %v, want it to say the token was refused", err)
	}
	if errors.Is(err, bus.ErrUnavailable) {
		t.Errorf("Connect = %v: a refused token is not an unavailable bus", err)
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bus.token")
	tok, err := bus.LoadOrCreateToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Errorf("token %q is not 64 hex chars", tok)
	}
	if p := perm(t, path); p != 0o600 {
		t.Errorf("token file mode = %v, want 0600", p)
	}
	again, err := bus.LoadOrCreateToken(path)
	if err != nil || again != tok {
		t.Errorf("second LoadOrCreateToken = %q, %v; want %q", again, err, tok)
	}
	if read, err := bus.ReadToken(path); err != nil || read != tok {
		t.Errorf("ReadToken = %q, %v; want %q", read, err, tok)
	}
	other, err := bus.LoadOrCreateToken(filepath.Join(t.TempDir(), "bus.token"))
	if err != nil || other == tok {
		t.Errorf("a second token file got %q, %v; want a different token", other, err)
	}

	must(t, os.Chmod(path, 0o644))
	if got, err := bus.LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("LoadOrCreateToken on a 0644 file = %q, %v; want a refusal", got, err)
	}

	empty := filepath.Join(t.TempDir(), "bus.token")
	must(t, os.WriteFile(empty, []byte("\n"), 0o600))
	if got, err := bus.LoadOrCreateToken(empty); err == nil {
		t.Errorf("LoadOrCreateToken on an empty file = %q, want an error", got)
	}

	if _, err := bus.ReadToken(filepath.Join(t.TempDir(), "none")); !errors.Is(err, bus.ErrUnavailable) {
		t.Errorf("ReadToken of a missing file = %v, want ErrUnavailable", err)
	}
}

func TestLoadOrCreateToken_Concurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bus.token")
	toks := make([]string, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() {
			tok, err := bus.LoadOrCreateToken(path)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks[1:] {
		if tok != toks[0] {
			t.Fatalf("concurrent callers got different tokens: %q", toks)
		}
	}
}

// TestClient_NothingStrandedWhileDrainCatchesUp publishes from several goroutines while the bus
// goes down and comes back three times: every event must reach the stream, including those
// spooled while a drain was turning spooling off.
func TestClient_NothingStrandedWhileDrainCatchesUp(t *testing.T) {
	port := freePort(t)
	dir := filepath.Join(t.TempDir(), "bus")
	srv := startServer(t, dir, port)
	c := connect(t, bus.Options{URL: urlFor(port), SpoolDir: filepath.Join(t.TempDir(), "spool"), Timeout: 300 * time.Millisecond})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var published atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ev := hookEvent(fmt.Sprintf("strand-%d-%d", g, i), "claude-code")
				if _, err := c.Publish(context.Background(), &ev); err != nil {
					t.Error(err)
					return
				}
				published.Add(1)
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	for range 3 {
		time.Sleep(300 * time.Millisecond)
		srv.Close()
		time.Sleep(300 * time.Millisecond)
		srv = startServer(t, dir, port)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	want := uint64(published.Load())
	// Draining thousands of events one ack at a time takes a while under -race on a loaded machine.
	deadline := time.Now().Add(60 * time.Second)
	for stats(t, srv).Published < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := stats(t, srv).Published; got != want {
		t.Fatalf("stream holds %d events, %d were published", got, want)
	}
}

// TestServer_FullStreamRefusesNewEvents: with the writer away and the stream at its [bus]
// max_bytes, a new event is refused and its producer spools it; no event the stream acknowledged
// is dropped to make room. Once the writer takes events again, every one of them arrives.
func TestServer_FullStreamRefusesNewEvents(t *testing.T) {
	srv, err := busserver.Start(context.Background(), busserver.Config{
		Dir: filepath.Join(t.TempDir(), "bus"), Port: -1, Token: testToken, AckWait: 30 * time.Second,
		MaxBytes: 64 << 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	p := connect(t, bus.Options{Server: srv, SpoolDir: filepath.Join(t.TempDir(), "spool"), Name: "producer"})
	const n = 1000 // about 250 KB of events, four times what the stream may hold
	var published, spooled int
	for i := range n {
		ev := hookEvent(fmt.Sprintf("full-%04d", i), "claude-code")
		ev.SessionID = strings.Repeat("s", 100)
		res, err := p.Publish(context.Background(), &ev)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		switch res {
		case bus.Published:
			published++
		case bus.Spooled:
			spooled++
		}
	}
	t.Logf("published %d, spooled %d", published, spooled)
	if spooled == 0 {
		t.Fatalf("all %d events went into a stream of 64 KiB: nothing was refused", n)
	}
	if st := stats(t, srv); st.Pending != uint64(published) {
		t.Errorf("the stream holds %d events, want the %d it acknowledged", st.Pending, published)
	}
	// The writer comes back: the acknowledged events, then the spooled ones as room frees up.
	w := connect(t, bus.Options{Server: srv, Wait: true, Name: "writer"})
	got := consumeIDs(t, w, n)
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("the writer got %d distinct events of %d", len(seen), n)
	}
}
