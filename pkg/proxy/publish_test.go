package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// batchRecorder is a BatchPublisher that keeps the size of every batch it is handed.
type batchRecorder struct {
	mu      sync.Mutex
	batches []int
	at      []time.Time // when each batch came
	ids     map[string]int
	got     chan struct{}
}

func (b *batchRecorder) Publish(ctx context.Context, ev *event.Event) (bus.Result, error) {
	_, err := b.PublishBatch(ctx, []event.Event{*ev})
	return bus.Published, err
}

func (b *batchRecorder) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	for i := range evs {
		if _, err := event.Marshal(&evs[i]); err != nil {
			return 0, err
		}
	}
	b.mu.Lock()
	b.batches = append(b.batches, len(evs))
	b.at = append(b.at, time.Now())
	for _, ev := range evs {
		b.ids[ev.APITurn.MessageID]++
	}
	b.mu.Unlock()
	for range evs {
		b.got <- struct{}{}
	}
	return 0, nil
}

// TestProxy_PublishBatches: a turn after a quiet spell is published alone, at once; turns that
// end together are published together; turns that keep coming are published at most once per
// publishGap; each turn once.
func TestProxy_PublishBatches(t *testing.T) {
	const n = 64
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	var served sync.WaitGroup
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Case") == "burst" {
			arrived <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(benchJSON, "msg_bench", "msg_"+r.Header.Get("X-Id"), 1))
	}))
	t.Cleanup(upstream.Close)
	up := upstream.URL
	rec := &batchRecorder{ids: map[string]int{}, got: make(chan struct{}, 2*n)}
	p, err := New(Config{AnthropicUpstream: up, OpenAIUpstream: up, Publisher: rec, Coster: flatCost{}})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	srv := ps.URL
	send := func(id, kase string) {
		req, _ := http.NewRequest("POST", srv+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5-20250929","messages":[]}`))
		req.Header.Set("X-Id", id)
		req.Header.Set("X-Case", kase)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	wait := func(k int) {
		for range k {
			select {
			case <-rec.got:
			case <-time.After(10 * time.Second):
				t.Fatal("turns not published within 10 s")
			}
		}
	}

	send("lone", "")
	wait(1)
	for i := range n {
		served.Add(1)
		go func() { defer served.Done(); send(fmt.Sprint("burst_", i), "burst") }()
	}
	for range n {
		<-arrived
	}
	close(release)
	served.Wait()
	wait(n)
	time.Sleep(2 * publishGap)
	rec.mu.Lock()
	paced := len(rec.batches)
	rec.mu.Unlock()
	const m = 30
	for i := range m {
		send(fmt.Sprint("paced_", i), "")
		time.Sleep(publishGap / 5)
	}
	wait(m)
	p.Close()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.batches[0] != 1 {
		t.Errorf("the lone turn went in a batch of %d", rec.batches[0])
	}
	if len(rec.ids) != n+m+1 {
		t.Errorf("%d distinct turns published, want %d", len(rec.ids), n+m+1)
	}
	for id, k := range rec.ids {
		if k != 1 {
			t.Errorf("turn %s published %d times", id, k)
		}
	}
	if b := paced - 1; b > n/2 {
		t.Errorf("%d turns that ended together went in %d batches: %v", n, b, rec.batches[1:paced])
	}
	// One batch per publishGap at most (a fifth of slack for the scheduler), the first at once.
	b := len(rec.batches) - paced
	if span := rec.at[len(rec.at)-1].Sub(rec.at[paced]); b > 2+int(span/(publishGap*4/5)) {
		t.Errorf("%d turns sent %v apart went in %d batches over %v: %v", m, publishGap/5, b, span, rec.batches[paced:])
	}
}
