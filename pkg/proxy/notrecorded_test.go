package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// fullDisk is a BatchPublisher on a full disk: of every batch it records the even events and
// loses the odd ones, as a bus client whose stream and spool refuse them does.
type fullDisk struct {
	mu       sync.Mutex
	recorded int
}

func (f *fullDisk) Publish(ctx context.Context, ev *event.Event) (bus.Result, error) {
	return 0, fmt.Errorf("spool: write x: %w", syscall.ENOSPC)
}

func (f *fullDisk) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	var lost []int
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range evs {
		if i%2 == 1 {
			lost = append(lost, i)
		} else if evs[i].Kind == event.KindAPITurn {
			f.recorded++
		}
	}
	if len(lost) == 0 {
		return 0, nil
	}
	return 0, &bus.NotRecordedError{Lost: lost, Err: fmt.Errorf("spool: write x: %w", syscall.ENOSPC)}
}

// TestProxy_CountsTurnsNotRecorded: on a full disk the proxy answers every request, and counts
// exactly the turns whose record was lost; Stats.Problem says so and why while it lasts.
func TestProxy_CountsTurnsNotRecorded(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(benchJSON, "msg_bench", "msg_"+r.Header.Get("X-Id"), 1))
	}))
	t.Cleanup(upstream.Close)
	pub := &fullDisk{}
	p, err := New(Config{AnthropicUpstream: upstream.URL, OpenAIUpstream: upstream.URL, Publisher: pub, Coster: flatCost{}})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", ps.URL+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5-20250929","messages":[]}`))
			req.Header.Set("X-Id", fmt.Sprint(i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("request %d: status %d", i, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	// A turn is queued just after its client has the answer.
	for deadline := time.Now().Add(time.Minute); p.Stats().Turns < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	p.Close()
	st := p.Stats()
	pub.mu.Lock()
	recorded := pub.recorded
	pub.mu.Unlock()
	if st.Turns != n || int64(recorded)+st.NotRecorded != n {
		t.Errorf("served %d turns; recorded %d + not recorded %d, want %d in all", st.Turns, recorded, st.NotRecorded, n)
	}
	if st.NotRecorded == 0 {
		t.Error("no turn counted as not recorded")
	}
	if pr := st.Problem(time.Now()); pr != "turns may not have been recorded: disk full (count in detail)" {
		t.Errorf("Problem = %q", pr)
	}
	if pr := st.Problem(time.Now().Add(time.Hour)); pr != "" {
		t.Errorf("Problem an hour later = %q, want none", pr)
	}
	t.Logf("served %d, recorded %d, not recorded %d", st.Turns, recorded, st.NotRecorded)
}
