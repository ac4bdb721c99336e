package bus_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

func TestSplit(t *testing.T) {
	one := []byte(`{"id":"a"}`)
	for _, c := range []struct {
		name   string
		header string
		data   string
		want   int
		err    bool
	}{
		{"an event alone", "", string(one), 1, false},
		{"a batch", "3", `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"c"}`, 3, false},
		{"fewer lines than its header says", "3", `{"id":"a"}` + "\n" + `{"id":"b"}`, 0, true},
		{"a header that is no count", "many", `{"id":"a"}`, 0, true},
	} {
		h := nats.Header{}
		if c.header != "" {
			h.Set(bus.EventsHeader, c.header)
		}
		got, err := bus.Split(h, []byte(c.data))
		if (err != nil) != c.err || len(got) != c.want {
			t.Errorf("%s: %d events, %v; want %d, error %v", c.name, len(got), err, c.want, c.err)
		}
	}
}

// PublishBatch sends the events of one kind and client in as few messages as BatchEvents allows,
// and every reader gets each event back, with its id, in order within its kind and client: the
// writer's consumer (Consume, Split) and a live subscription.
func TestPublishBatch_BatchMessages(t *testing.T) {
	srv := newServer(t)
	pub := connect(t, bus.Options{Server: srv, Wait: true, Name: "producer"})
	tail := connect(t, bus.Options{URL: srv.ClientURL(), Wait: true, Name: "tail"})
	var live collector
	s, err := tail.Subscribe(bus.Filter{}, live.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	// 600 hooks of codex, 5 actions of claude-code in between, 1 hook of claude-code.
	var evs []event.Event
	for i := range 600 {
		evs = append(evs, hookEvent(fmt.Sprint("h", i), "codex"))
		if i%120 == 0 {
			evs = append(evs, sample(event.KindAction, fmt.Sprint("a", i), "claude-code"))
		}
	}
	evs = append(evs, hookEvent("h-claude", "claude-code"))
	if n, err := pub.PublishBatch(context.Background(), evs); err != nil || n != 0 {
		t.Fatalf("PublishBatch = %d spooled, %v", n, err)
	}
	// codex hooks: 256 + 256 + 88; claude-code actions: 1; claude-code hooks: 1.
	if st := stats(t, srv); st.Published != 5 {
		t.Errorf("the stream holds %d messages for %d events, want 5", st.Published, len(evs))
	}
	bySubject := func(ids []string) map[string][]string {
		out := map[string][]string{}
		at := map[string]string{}
		for _, e := range evs {
			at[e.ID] = e.Subject()
		}
		for _, id := range ids {
			out[at[id]] = append(out[at[id]], id)
		}
		return out
	}
	want := map[string][]string{}
	for _, e := range evs {
		want[e.Subject()] = append(want[e.Subject()], e.ID)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var consumed []string
	var sizes []int
	go pub.Consume(ctx, bus.ConsumeOptions{BatchSize: 300, BulkBatchSize: 300, FlushInterval: 100 * time.Millisecond}, func(_ context.Context, batch []bus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, m := range batch {
			raws, err := bus.Split(m.Header, m.Data)
			if err != nil {
				t.Errorf("message on %s: %v", m.Subject, err)
				continue
			}
			if len(raws) != m.Events() {
				t.Errorf("message on %s: %d events, Events() %d", m.Subject, len(raws), m.Events())
			}
			for _, raw := range raws {
				ev, err := event.Decode(raw)
				if err != nil || ev.Subject() != m.Subject {
					t.Errorf("event of a message on %s: subject %q, %v", m.Subject, ev.Subject(), err)
					continue
				}
				consumed = append(consumed, ev.ID)
				n++
			}
		}
		sizes = append(sizes, n)
		return nil
	})
	waitFor(t, "every event consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(consumed) == len(evs)
	})
	waitFor(t, "every event seen live", func() bool { ids, _ := live.snapshot(); return len(ids) == len(evs) })
	mu.Lock()
	defer mu.Unlock()
	for name, got := range map[string][]string{"consumed": consumed, "live": func() []string { ids, _ := live.snapshot(); return ids }()} {
		g := bySubject(got)
		for subj, ids := range want {
			if !slices.Equal(g[subj], ids) {
				t.Errorf("%s: the events of %s came as %d, not in the order published (%d)", name, subj, len(g[subj]), len(ids))
			}
		}
	}
	// A batch fills to BulkBatchSize events or a little over (by whole messages), not to that
	// many messages.
	for _, n := range sizes {
		if n >= 300+bus.BatchEvents {
			t.Errorf("a batch of %d events for at most 300 (sizes %v)", n, sizes)
		}
	}
	if len(sizes) < 2 {
		t.Errorf("%d events in batches %v, want at least two", len(evs), sizes)
	}
}

// ConsumePrepared prepares the next batch while the one before is being stored: a store that
// waits for the next batch's prepare ends only because the two overlap. Every batch is acked once
// stored.
func TestConsumePrepared_PreparesTheNextWhileStoring(t *testing.T) {
	srv := newServer(t)
	c := connect(t, bus.Options{Server: srv, Wait: true, Name: "writer"})
	for i := range 6 {
		publish(t, c, hookEvent(fmt.Sprint("p", i), "c"), bus.Published)
	}
	waitFor(t, "6 events pending for the writer", func() bool { return stats(t, srv).Pending == 6 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prepared := make(chan int, 16)
	var mu sync.Mutex
	stored, overlapped := 0, 0
	go bus.ConsumePrepared(ctx, c, bus.ConsumeOptions{BatchSize: 2, BulkBatchSize: 2, FlushInterval: 50 * time.Millisecond},
		func(b []bus.Message) int { prepared <- len(b); return len(b) },
		func(_ context.Context, n int) error {
			mu.Lock()
			first := stored == 0
			mu.Unlock()
			if first {
				// The first batch's store waits for the second batch's prepare.
				<-prepared
				select {
				case <-prepared:
					mu.Lock()
					overlapped++
					mu.Unlock()
				case <-time.After(5 * time.Second):
				}
			}
			mu.Lock()
			stored += n
			mu.Unlock()
			return nil
		})
	waitFor(t, "every event stored and acked", func() bool { return stats(t, srv).Pending == 0 })
	mu.Lock()
	defer mu.Unlock()
	if stored != 6 || overlapped != 1 {
		t.Errorf("stored %d of 6; the next batch was prepared during a store %d time(s), want 1", stored, overlapped)
	}
}

// PublishBacklog marks every message of a backlog's batches BacklogPart, but for the last message
// of the batch published with last set: BacklogEnd. A message published otherwise has no mark.
// The writer's consumer gets the marks, and ends a batch at the backlog's end (the writer stores
// it at once) rather than waiting for the batch to fill.
func TestPublishBacklog_MarksItsMessagesAndItsEnd(t *testing.T) {
	srv := newServer(t)
	pub := connect(t, bus.Options{Server: srv, Wait: true, Name: "producer"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first, last []event.Event
	for i := range 300 {
		first = append(first, hookEvent(fmt.Sprint("a", i), "codex"))
		last = append(last, hookEvent(fmt.Sprint("b", i), "codex"))
	}
	last = append(last, sample(event.KindAction, "c", "claude-code"))
	if _, err := pub.PublishBacklog(ctx, first, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.PublishBacklog(ctx, last, true); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.PublishBatch(ctx, []event.Event{hookEvent("live", "codex")}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var marks []string
	var batchEnds []string // the mark of each batch's last message
	go pub.Consume(ctx, bus.ConsumeOptions{BatchSize: 100, BulkBatchSize: 5000, FlushInterval: 2 * time.Second}, func(_ context.Context, batch []bus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			marks = append(marks, bus.Backlog(m.Header))
		}
		batchEnds = append(batchEnds, bus.Backlog(batch[len(batch)-1].Header))
		return nil
	})
	// 300 hooks: 256 + 44; then 256 + 44 hooks and 1 action; then the live hook.
	want := []string{bus.BacklogPart, bus.BacklogPart, bus.BacklogPart, bus.BacklogPart, bus.BacklogEnd, ""}
	waitFor(t, "every message consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(marks) == len(want)
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(marks, want) {
		t.Errorf("marks %q, want %q", marks, want)
	}
	if !slices.Contains(batchEnds, bus.BacklogEnd) {
		t.Errorf("batches ending with %q: the backlog's end was not the last message of its batch", batchEnds)
	}
}
