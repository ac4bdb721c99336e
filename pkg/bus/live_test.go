package bus_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// collector gathers what a subscription delivers.
type collector struct {
	mu   sync.Mutex
	ids  []string
	errs []error
}

func (c *collector) fn(ev event.Event, _ []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	c.ids = append(c.ids, ev.ID)
}

func (c *collector) snapshot() ([]string, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...), append([]error(nil), c.errs...)
}

func TestClient_SubscribeFilter(t *testing.T) {
	srv := newServer(t)
	pub := connect(t, bus.Options{Server: srv, Wait: true, Name: "producer"})
	sub := connect(t, bus.Options{URL: srv.ClientURL(), Wait: true, Name: "tail"})

	evs := []event.Event{
		hookEvent("h-codex-1", "codex"),
		hookEvent("h-claude", "claude-code"),
		sample(event.KindAction, "a-codex", "codex"),
		hookEvent("h-codex-2", "codex"),
		sample(event.KindAction, "a-claude", "claude-code"),
		hookEvent("h-none", ""),
		hookEvent("h-codex-last", "codex"), // matches every filter below but the action ones
	}
	id := func(i int) string { return evs[i].ID }
	filters := []struct {
		name string
		f    bus.Filter
		want []string
	}{
		{"All", bus.Filter{}, []string{id(0), id(1), id(2), id(3), id(4), id(5), id(6)}},
		{"KindAndClient", bus.Filter{Kind: event.KindHook, Client: "codex"}, []string{id(0), id(3), id(6)}},
		{"Kind", bus.Filter{Kind: event.KindAction}, []string{id(2), id(4)}},
		{"Client", bus.Filter{Client: "claude-code"}, []string{id(1), id(4)}},
		{"NoClient", bus.Filter{Kind: event.KindHook, Client: "unknown"}, []string{id(5)}},
	}
	cols := make([]*collector, len(filters))
	for i, tc := range filters {
		cols[i] = &collector{}
		s, err := sub.Subscribe(tc.f, cols[i].fn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
	}
	for _, ev := range evs {
		publish(t, pub, ev, bus.Published)
	}
	// The "All" subscription sees the last event last; by then every other one has had its share.
	waitFor(t, "every event on the unfiltered subscription", func() bool {
		ids, _ := cols[0].snapshot()
		return len(ids) == len(evs)
	})
	// And the "Kind" one, which does not see the last event, gets a final marker.
	marker := sample(event.KindAction, "a-marker", "x")
	publish(t, pub, marker, bus.Published)
	waitFor(t, "the marker", func() bool {
		ids, _ := cols[2].snapshot()
		return len(ids) > 0 && ids[len(ids)-1] == marker.ID
	})
	filters[2].want = append(filters[2].want, marker.ID)
	filters[0].want = append(filters[0].want, marker.ID)
	waitFor(t, "the marker on the unfiltered subscription", func() bool {
		ids, _ := cols[0].snapshot()
		return len(ids) == len(evs)+1
	})
	for i, tc := range filters {
		ids, errs := cols[i].snapshot()
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("%s (%s): got %v\nwant %v", tc.name, tc.f.Subject(), ids, tc.want)
		}
		if len(errs) != 0 {
			t.Errorf("%s: errors %v", tc.name, errs)
		}
	}
}

func sample(k event.Kind, name, client string) event.Event {
	ev := event.New(k, "bus-test")
	ev.ID = event.ID("bus-test", name)
	ev.Client = client
	switch k {
	case event.KindAction:
		ev.Action = &event.Action{Type: event.ActionRunCommand, Target: name}
	case event.KindHook:
		ev.Hook = &event.Hook{Event: name}
	}
	return ev
}

func TestClient_SubscribeStop(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true})
	var col collector
	s, err := c.Subscribe(bus.Filter{}, col.fn)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, c, hookEvent("before", "c"), bus.Published)
	waitFor(t, "the first event", func() bool { ids, _ := col.snapshot(); return len(ids) == 1 })
	s.Stop()
	s.Stop() // twice is fine
	(*bus.Subscription)(nil).Stop()

	// A second subscription still running tells when the next event has been delivered.
	var other collector
	s2, err := c.Subscribe(bus.Filter{}, other.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	publish(t, c, hookEvent("after", "c"), bus.Published)
	waitFor(t, "the second event elsewhere", func() bool { ids, _ := other.snapshot(); return len(ids) == 1 })
	if ids, _ := col.snapshot(); len(ids) != 1 {
		t.Errorf("a stopped subscription got %v", ids)
	}
}

func TestClient_SubscribeUndecodable(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true})
	var mu sync.Mutex
	var raws []string
	var errs []error
	s, err := c.Subscribe(bus.Filter{Kind: event.KindHook}, func(_ event.Event, raw []byte, err error) {
		mu.Lock()
		defer mu.Unlock()
		raws, errs = append(raws, string(raw)), append(errs, err)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	nc, err := nats.Connect(srv.ClientURL(), nats.Token(testToken))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Publish(event.Subject(event.KindHook, "x"), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	waitFor(t, "the garbage message", func() bool { mu.Lock(); defer mu.Unlock(); return len(raws) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if raws[0] != "garbage" || !errors.Is(errs[0], event.ErrMalformedJSON) {
		t.Errorf("got raw %q err %v, want the raw bytes and ErrMalformedJSON", raws[0], errs[0])
	}
}

func TestClient_Health(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true})
	got := make(chan bus.Health, 4)
	s, err := c.SubscribeHealth(func(h bus.Health) { got <- h })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// The subscription and the heartbeat share a connection, so the server sees them in order.
	want := bus.Health{Component: "observer-proxy", PID: 42, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		OK: true, Detail: "fine", Events: 7}
	if err := c.PublishHealth(want); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-got:
		if !reflect.DeepEqual(h, want) {
			t.Errorf("got %+v, want %+v", h, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat delivered")
	}
}

// Through the bus: every report that says something new is delivered, and one that keeps saying
// the same still arrives again (the supervisor's liveness).
func TestHeartbeat_DeliversEachNewReportAndRepeatsTheSame(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true})
	var mu sync.Mutex
	var got []bus.Health
	sub, err := c.SubscribeHealth(func(h bus.Health) {
		mu.Lock()
		got = append(got, h)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	var calls sync.Mutex
	n := 0
	report := func() bus.Health { // events 1, 2, 3, then 3 for ever
		calls.Lock()
		defer calls.Unlock()
		n++
		return bus.Health{Component: "observer-proxy", OK: true, Events: int64(min(n, 3))}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Heartbeat(ctx, 5*time.Millisecond, report) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		threes := 0
		seen := map[int64]bool{}
		for _, h := range got {
			seen[h.Events] = true
			if h.Events == 3 {
				threes++
			}
		}
		mu.Unlock()
		if seen[1] && seen[2] && threes >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: reports delivered %+v; want events 1, 2 and 3, and 3 again twice", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestClient_ConsumeRedeliversUntilHandled(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true, Name: "writer"})
	var want []string
	for _, n := range []string{"r0", "r1", "r2"} {
		ev := hookEvent(n, "c")
		publish(t, c, ev, bus.Published)
		want = append(want, ev.ID)
	}
	// The consumer's count catches up with the stream's a moment after the publish acks.
	waitFor(t, "3 events pending for the writer", func() bool { return stats(t, srv).Pending == 3 })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		calls   [][]string
		pending []uint64 // Stats().Pending seen inside each call
	)
	succeeded := make(chan struct{})
	handle := func(_ context.Context, batch []bus.Message) error {
		var ids []string
		for _, m := range batch {
			ev, err := event.Decode(m.Data)
			if err != nil {
				t.Errorf("undecodable message on %s: %v", m.Subject, err)
				continue
			}
			if m.Subject != ev.Subject() {
				t.Errorf("message subject %q, event subject %q", m.Subject, ev.Subject())
			}
			ids = append(ids, ev.ID)
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, ids)
		st, err := srv.Stats(context.Background())
		if err != nil {
			t.Errorf("Stats: %v", err)
		}
		pending = append(pending, st.Pending)
		if len(calls) == 1 {
			return errors.New("store is locked")
		}
		if len(calls) == 2 {
			close(succeeded)
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		done <- c.Consume(ctx, bus.ConsumeOptions{BatchSize: 10, FlushInterval: 200 * time.Millisecond}, handle)
	}()
	select {
	case <-succeeded:
	case <-time.After(8 * time.Second):
		t.Fatal("the failed batch was not redelivered")
	}
	waitFor(t, "the batch to be acked", func() bool { return stats(t, srv).Pending == 0 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Consume returned %v after its context ended, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Consume did not return after its context ended")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("handler called %d times: %v", len(calls), calls)
	}
	for i, ids := range calls {
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("call %d got %v, want %v", i, ids, want)
		}
	}
	// Nothing is acked while the handler runs, whether it then fails or succeeds.
	for i, p := range pending {
		if p != 3 {
			t.Errorf("pending during call %d = %d, want 3", i, p)
		}
	}
}
