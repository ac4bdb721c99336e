package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
)

// request is one POST the receiver got.
type request struct {
	path, contentType string
	body              []byte
}

// receiver is a real HTTP server on loopback that answers each request with the next of its
// answers (the last one repeats), and hands every request it got to reqs.
type receiver struct {
	*httptest.Server
	reqs chan request
	mu   sync.Mutex
	ans  []func(w http.ResponseWriter)
}

func newReceiver(tb testing.TB, answers ...func(w http.ResponseWriter)) *receiver {
	tb.Helper()
	rc := &receiver{reqs: make(chan request, 1024), ans: answers}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.reqs <- request{path: r.URL.Path, contentType: r.Header.Get("Content-Type"), body: body}
		rc.mu.Lock()
		a := func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }
		if len(rc.ans) > 0 {
			a = rc.ans[0]
			if len(rc.ans) > 1 {
				rc.ans = rc.ans[1:]
			}
		}
		rc.mu.Unlock()
		a(w)
	}))
	tb.Cleanup(rc.Close)
	return rc
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "answer %d", code)
	}
}

func (rc *receiver) next(tb testing.TB) request {
	tb.Helper()
	select {
	case r := <-rc.reqs:
		return r
	case <-time.After(30 * time.Second):
		tb.Fatal("the receiver got no request")
		return request{}
	}
}

// start runs a Sender for url until the test ends; its waits between retries are recorded in
// waits instead of slept.
func start(tb testing.TB, url, format string, logs io.Writer, opts ...func(*Sender)) (*Sender, chan time.Duration) {
	tb.Helper()
	if logs == nil {
		logs = io.Discard
	}
	s := New(config.Alerts{WebhookURL: url, Format: format}, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	waits := make(chan time.Duration, 100)
	s.wait = func(ctx context.Context, d time.Duration) error { waits <- d; return ctx.Err() }
	for _, o := range opts {
		o(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	return s, waits
}

// waitFor polls cond until it holds (never a timing assertion: the bound only ends a hung test).
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var alert = event.Alert{ID: 7, Time: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Kind: event.AlertBudget, Scope: "day",
	Period: "2026-12-03", Threshold: 80, SpentUSD: 16, LimitUSD: 20,
	Message: "daily budget reached 80%: $16.00 of $20.00 spent (80%) in 2026-12-03"}

func TestSender_Bodies(t *testing.T) {
	amp := alert
	amp.Message = "budget of /src/a&b <x> reached 100%"
	long := alert
	long.Message = strings.Repeat("é", 3000)
	for _, tc := range []struct {
		name, format string
		a            event.Alert
		want         string
	}{
		{"Slack", "slack", alert, `{"text":"observer: daily budget reached 80%: $16.00 of $20.00 spent (80%) in 2026-12-03"}`},
		{"SlackEscapes", "slack", amp, `{"text":"observer: budget of /src/a&amp;b &lt;x&gt; reached 100%"}`},
		{"Discord", "discord", alert, `{"content":"observer: daily budget reached 80%: $16.00 of $20.00 spent (80%) in 2026-12-03"}`},
		{"DiscordLong", "discord", long, `{"content":"observer: ` + strings.Repeat("é", DiscordMaxContent-len("observer: ")-1) + `…"}`},
		{"JSON", "json", alert, `{"source":"observer","alert":{"id":7,"time":"2026-12-03T10:00:00Z","kind":"budget","scope":"day","period":"2026-12-03","threshold":80,"spent_usd":16,"limit_usd":20,"message":"daily budget reached 80%: $16.00 of $20.00 spent (80%) in 2026-12-03"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t)
			s, _ := start(t, rc.URL+"/services/T0/B0/token", tc.format, nil)
			s.Enqueue(tc.a)
			r := rc.next(t)
			if string(r.body) != tc.want {
				t.Errorf("body\n%s\nwant\n%s", r.body, tc.want)
			}
			if r.contentType != "application/json" || r.path != "/services/T0/B0/token" {
				t.Errorf("Content-Type %q, path %q", r.contentType, r.path)
			}
			if !json.Valid(r.body) {
				t.Errorf("body is not JSON: %s", r.body)
			}
			if tc.format == "discord" {
				var d struct{ Content string }
				json.Unmarshal(r.body, &d)
				if n := len([]rune(d.Content)); n > DiscordMaxContent {
					t.Errorf("Discord content of %d characters", n)
				}
			}
			if tc.format == "json" {
				var got struct {
					Source string
					Alert  event.Alert
				}
				if err := json.Unmarshal(r.body, &got); err != nil || got.Source != "observer" || got.Alert != tc.a {
					t.Errorf("decoded %+v, %v", got, err)
				}
			}
			waitFor(t, "the delivery counted", func() bool { return s.Status().Sent == 1 })
			if ok, _ := s.Status().Summary(); !ok {
				t.Errorf("status %+v not ok after a delivery", s.Status())
			}
		})
	}
}

// A 5xx and a 429 are retried, the 429 after its Retry-After, with backoff doubling otherwise;
// then the alert is delivered and the failures reset.
func TestSender_RetriesThenSuccess(t *testing.T) {
	rc := newReceiver(t, status(500), status(429, "Retry-After", "7"), status(503), status(200))
	s, waits := start(t, rc.URL+"/hook", "slack", nil, func(s *Sender) { s.Backoff = time.Second })
	s.Enqueue(alert)
	for range 4 {
		rc.next(t)
	}
	waitFor(t, "delivered", func() bool { return s.Status().Sent == 1 })
	// The n-th retry waits Backoff·2^(n-1), or what the 429 asked for instead.
	want := []time.Duration{time.Second, 7 * time.Second, 4 * time.Second}
	for i, w := range want {
		if got := <-waits; got != w {
			t.Errorf("wait %d = %s, want %s", i+1, got, w)
		}
	}
	st := s.Status()
	if st.Failed != 0 || st.ConsecutiveFailures != 0 || st.LastSuccess.IsZero() || st.LastError != "HTTP 503: answer 503" {
		t.Errorf("status %+v", st)
	}
}

// A 4xx other than 429 is not retried: the alert is given up at once and the status says why.
func TestSender_ClientErrorNotRetried(t *testing.T) {
	var logs syncBuffer
	rc := newReceiver(t, status(404))
	s, _ := start(t, rc.URL+"/services/T0/B0/secrettoken", "slack", &logs)
	s.Enqueue(alert)
	rc.next(t)
	waitFor(t, "given up", func() bool { return s.Status().Failed == 1 })
	second := alert
	second.ID = 8
	s.Enqueue(second) // the next request is the next alert, not a retry of the first
	r := rc.next(t)
	if !strings.Contains(string(r.body), "observer:") {
		t.Fatalf("second request %s", r.body)
	}
	waitFor(t, "second given up", func() bool { return s.Status().Failed == 2 })
	st := s.Status()
	if st.Sent != 0 || st.ConsecutiveFailures != 2 || !strings.HasPrefix(st.LastError, "HTTP 404") {
		t.Errorf("status %+v", st)
	}
	ok, detail := st.Summary()
	if ok || !strings.Contains(detail, "failed") || !strings.Contains(detail, "HTTP 404") {
		t.Errorf("summary %v %q", ok, detail)
	}
	// The URL is a credential: neither the log of the failure nor the status shows its path.
	for what, text := range map[string]string{"log": logs.String(), "summary": detail, "status": fmt.Sprintf("%+v", st)} {
		if strings.Contains(text, "secrettoken") || strings.Contains(text, "/services/") {
			t.Errorf("the %s shows the webhook URL's path:\n%s", what, text)
		}
	}
	if !strings.Contains(logs.String(), "alert not delivered") || !strings.Contains(logs.String(), strings.TrimPrefix(rc.URL, "http://")) {
		t.Errorf("the log does not say which host failed:\n%s", logs.String())
	}
}

// A receiver that does not answer (connection refused) fails every attempt: the error the HTTP
// client gives quotes the whole URL, and is logged without it.
func TestSender_NetworkErrorHidesURL(t *testing.T) {
	rc := newReceiver(t)
	url := rc.URL + "/api/webhooks/123/networktoken"
	rc.Close()
	var logs syncBuffer
	s, _ := start(t, url, "discord", &logs, func(s *Sender) { s.Attempts = 2 })
	s.Enqueue(alert)
	waitFor(t, "given up", func() bool { return s.Status().Failed == 1 })
	if st := s.Status(); st.ConsecutiveFailures != 2 || st.LastError == "" {
		t.Errorf("status %+v", st)
	}
	if strings.Contains(logs.String(), "networktoken") || strings.Contains(s.Status().LastError, "networktoken") {
		t.Errorf("the URL's token is in the log or the status:\n%s\n%+v", logs.String(), s.Status())
	}
}

// Enqueue never blocks: while the receiver hangs on the first alert, a thousand more return at
// once, the queue keeps the newest QueueSize, and the rest are counted as dropped, logged once.
func TestSender_QueueFullDoesNotBlock(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter) { <-release })
	defer close(release) // before the server's Close, which waits for the handler
	var logs syncBuffer
	s, _ := start(t, rc.URL+"/hook", "json", &logs, func(s *Sender) { s.Timeout = time.Hour })
	s.Enqueue(alert)
	rc.next(t) // in flight, hanging
	for i := range 1000 {
		a := alert
		a.ID = int64(100 + i)
		s.Enqueue(a)
	}
	st := s.Status()
	if st.Queued != QueueSize || st.Dropped != 1000-QueueSize {
		t.Errorf("queued %d, dropped %d; want %d and %d", st.Queued, st.Dropped, QueueSize, 1000-QueueSize)
	}
	if n := strings.Count(logs.String(), "queue full"); n != 1 {
		t.Errorf("queue full logged %d times", n)
	}
	s.mu.Lock()
	first := s.queue[0].ID
	s.mu.Unlock()
	if first != 100+1000-QueueSize {
		t.Errorf("the oldest alert kept is %d: the oldest were not the ones dropped", first)
	}
}

// No URL: nothing is queued or sent; Configure turns delivery on and off while it runs.
func TestSender_Configure(t *testing.T) {
	s, _ := start(t, "", "", nil)
	s.Enqueue(alert)
	if st := s.Status(); st.Queued != 0 || st.Target != "" {
		t.Errorf("without a URL: %+v", st)
	}
	if ok, detail := s.Status().Summary(); !ok || !strings.Contains(detail, "not set") {
		t.Errorf("summary %v %q", ok, detail)
	}
	rc := newReceiver(t)
	s.Configure(config.Alerts{WebhookURL: rc.URL + "/x/y", Format: "discord"})
	s.Enqueue(alert)
	if r := rc.next(t); !bytes.HasPrefix(r.body, []byte(`{"content":`)) {
		t.Errorf("body %s", r.body)
	}
	if st := s.Status(); st.Target != rc.URL+"/…" || st.Format != "discord" {
		t.Errorf("status %+v", st)
	}
	s.Configure(config.Alerts{})
	s.Enqueue(alert)
	if st := s.Status(); st.Queued != 0 || st.Target != "" {
		t.Errorf("turned off: %+v", st)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "0.5": 500 * time.Millisecond, "-1": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", h, got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer the Sender's goroutine and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
