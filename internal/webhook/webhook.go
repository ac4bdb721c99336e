// Package webhook sends the alerts observer raises to the webhook of [alerts] webhook_url: a Slack
// incoming webhook ({"text": ...}), a Discord webhook ({"content": ...}, at most 2000 characters)
// or any receiver of JSON ({"source": "observer", "alert": {...event.Alert...}}).
//
// Delivery. Enqueue never blocks: it puts the alert on a bounded queue (QueueSize) and returns;
// when the queue is full the oldest alert waiting is dropped (the newer one says more: 100% after
// 80%), counted in Status.Dropped and logged once per run of drops. One goroutine (Run) posts the
// alerts in order, each with a per-request timeout, and retries a failed one with exponential
// backoff up to Attempts times: a network error, a timeout and a 5xx are retried; a 429 is
// retried after its Retry-After (capped at MaxRetryAfter); any other 4xx, and a redirect (not
// followed), are not. An alert given up is logged and counted; it is still in the store, on the
// dashboard and in the live tail, which is where observer's alerts live: the webhook only tells
// people where they are, and its failures never reach the writer that raised the alert. At a
// stop, what is still queued gets one attempt each within a few seconds.
//
// Secrets. The URL of a Slack or Discord webhook is its credential (the token is in the path):
// the log lines and the Status name it by its scheme and host only (scrub.URL), and an error of
// the HTTP client, which quotes the whole URL, is replaced by its cause.
//
// Delivery is at most once per alert and process: an alert queued when the writer stops and not
// sent within the grace period is not sent later.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
)

// Body formats, the values of [alerts] format.
const (
	FormatSlack   = "slack"
	FormatDiscord = "discord"
	FormatJSON    = "json"
)

// QueueSize is how many alerts wait for delivery at most.
const QueueSize = 256

// DiscordMaxContent is the most characters Discord accepts in a webhook message's content.
const DiscordMaxContent = 2000

// Defaults of the Sender's tuning fields.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultAttempts      = 5
	DefaultBackoff       = time.Second
	DefaultMaxBackoff    = time.Minute
	DefaultMaxRetryAfter = 5 * time.Minute
	stopGrace            = 5 * time.Second
)

// Sender delivers alerts to one webhook. Its zero value is unusable: make one with New. All its
// methods are safe for concurrent use.
type Sender struct {
	// Client posts the alerts; nil: a client of its own that follows no redirect.
	Client *http.Client
	Logger *slog.Logger
	// Timeout bounds each request; Attempts is the most requests per alert; the wait before a
	// retry starts at Backoff and doubles up to MaxBackoff; a 429's Retry-After is honoured up to
	// MaxRetryAfter. Zero values are the defaults.
	Timeout, Backoff, MaxBackoff, MaxRetryAfter time.Duration
	Attempts                                    int

	// wait sleeps for d or until ctx ends (tests replace it, to see the waits asked for).
	wait func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	url     string
	format  string
	queue   []event.Alert
	st      Status
	dropLog bool // the current run of drops was logged
	wake    chan struct{}
}

// Status is what the Sender has done, for health reports and observerctl doctor. It never holds
// the URL whole.
type Status struct {
	Target string `json:"target,omitempty"` // scheme and host of the URL; empty: no webhook set
	Format string `json:"format,omitempty"`
	// Sent and Failed count the alerts delivered and given up; Dropped those the full queue lost.
	Sent        int64     `json:"sent"`
	Failed      int64     `json:"failed"`
	Dropped     int64     `json:"dropped"`
	Queued      int       `json:"queued"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// ConsecutiveFailures counts the requests that failed since the last one that succeeded.
	ConsecutiveFailures int `json:"consecutive_failures"`
}

// Failing reports whether the last request failed.
func (s Status) Failing() bool { return s.ConsecutiveFailures > 0 }

// Summary says in a line where alerts go and how their delivery went; ok is false while the last
// request failed.
func (s Status) Summary() (ok bool, detail string) {
	if s.Target == "" {
		return true, "not set ([alerts] webhook_url is empty): alerts stay in observer"
	}
	var b strings.Builder
	if s.Failing() {
		fmt.Fprintf(&b, "the last delivery to %s (%s) failed at %s: %s (%d request(s) in a row failed)",
			s.Target, s.Format, s.LastErrorAt.Local().Format("2006-01-02 15:04:05"), s.LastError, s.ConsecutiveFailures)
	} else if !s.LastSuccess.IsZero() {
		fmt.Fprintf(&b, "alerts go to %s (%s); the last was delivered at %s", s.Target, s.Format, s.LastSuccess.Local().Format("2006-01-02 15:04:05"))
	} else {
		fmt.Fprintf(&b, "alerts go to %s (%s); none sent yet", s.Target, s.Format)
	}
	fmt.Fprintf(&b, "; %d sent, %d not delivered", s.Sent, s.Failed)
	if s.Dropped > 0 {
		fmt.Fprintf(&b, ", %d dropped (queue full)", s.Dropped)
	}
	if s.Queued > 0 {
		fmt.Fprintf(&b, ", %d waiting", s.Queued)
	}
	return !s.Failing(), b.String()
}

// New returns a Sender for cfg (a cfg without webhook_url makes one that sends nothing until
// Configure sets one). Run delivers.
func New(cfg config.Alerts, logger *slog.Logger) *Sender {
	s := &Sender{Logger: logger, wake: make(chan struct{}, 1)}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	s.Configure(cfg)
	return s
}

// Configure applies cfg from now on (the alerts waiting go to the new URL); an empty webhook_url
// turns delivery off and empties the queue.
func (s *Sender) Configure(cfg config.Alerts) {
	format := cfg.Format
	if format == "" {
		format = FormatSlack
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.WebhookURL == s.url && format == s.format {
		return
	}
	old := s.url
	s.url, s.format = cfg.WebhookURL, format
	s.st = Status{Sent: s.st.Sent, Failed: s.st.Failed, Dropped: s.st.Dropped}
	if s.url == "" {
		s.queue = nil
		if old != "" {
			s.Logger.Info("alerts webhook turned off ([alerts] webhook_url is empty)")
		}
		return
	}
	s.st.Target, s.st.Format = scrub.URL(s.url), s.format
	s.Logger.Info("alerts go to a webhook", "webhook", s.st.Target, "format", s.format)
}

// Enabled reports whether a webhook is set.
func (s *Sender) Enabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url != ""
}

// Enqueue hands a over for delivery and returns at once. Without a webhook it does nothing; with
// the queue full it drops the oldest alert waiting.
func (s *Sender) Enqueue(a event.Alert) {
	s.mu.Lock()
	if s.url == "" {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= QueueSize {
		s.queue = s.queue[1:]
		s.st.Dropped++
		if !s.dropLog {
			s.dropLog = true
			s.Logger.Warn("alerts webhook queue full: dropping the oldest alerts waiting (they stay in the store and on the dashboard)",
				"webhook", s.st.Target, "queue", QueueSize)
		}
	}
	s.queue = append(s.queue, a)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Status returns a snapshot.
func (s *Sender) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Queued = len(s.queue)
	return st
}

// Run delivers the queued alerts until ctx ends, then gives what is still queued one attempt
// each, within a few seconds.
func (s *Sender) Run(ctx context.Context) {
	for {
		a, ok := s.pop()
		if !ok {
			select {
			case <-ctx.Done():
				s.drain(context.WithoutCancel(ctx))
				return
			case <-s.wake:
				continue
			}
		}
		if !s.deliver(ctx, a, s.attempts()) {
			s.pushFront(a) // interrupted by the stop
		}
		if ctx.Err() != nil {
			s.drain(context.WithoutCancel(ctx))
			return
		}
	}
}

// drain gives each queued alert one attempt, within stopGrace.
func (s *Sender) drain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, stopGrace)
	defer cancel()
	for ctx.Err() == nil {
		a, ok := s.pop()
		if !ok {
			return
		}
		s.deliver(ctx, a, 1)
	}
	if n := s.Status().Queued; n > 0 {
		s.Logger.Warn("alerts not sent to the webhook before the stop (they are in the store)", "webhook", s.Status().Target, "alerts", n)
	}
}

func (s *Sender) pop() (event.Alert, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 || s.url == "" {
		return event.Alert{}, false
	}
	a := s.queue[0]
	s.queue = s.queue[1:]
	return a, true
}

func (s *Sender) pushFront(a event.Alert) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.url != "" && len(s.queue) < QueueSize {
		s.queue = append([]event.Alert{a}, s.queue...)
	}
}

func (s *Sender) attempts() int {
	if s.Attempts > 0 {
		return s.Attempts
	}
	return DefaultAttempts
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// deliver posts a, retrying up to attempts requests. It reports false when ctx ended before a was
// delivered or given up.
func (s *Sender) deliver(ctx context.Context, a event.Alert, attempts int) bool {
	backoff := orDefault(s.Backoff, DefaultBackoff)
	for i := 1; ; i++ {
		s.mu.Lock()
		target, format := s.url, s.format
		s.mu.Unlock()
		if target == "" {
			return true // turned off meanwhile
		}
		body, err := Body(format, a)
		if err != nil {
			s.fail(a, target, err, "")
			return true
		}
		retry, after, err := s.post(ctx, target, body)
		if err == nil {
			s.mu.Lock()
			s.st.Sent++
			s.st.LastSuccess = time.Now().UTC()
			s.st.ConsecutiveFailures = 0
			s.dropLog = false
			s.mu.Unlock()
			s.Logger.Debug("alert sent to the webhook", "webhook", scrub.URL(target), "kind", a.Kind, "id", a.ID)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.record(target, err)
		if !retry || i >= attempts {
			how := fmt.Sprintf("after %d attempt(s)", i)
			if !retry {
				how = "not retried"
			}
			s.fail(a, target, err, how)
			return true
		}
		wait := backoff
		if after > 0 {
			wait = min(after, orDefault(s.MaxRetryAfter, DefaultMaxRetryAfter))
		}
		s.Logger.Debug("alert delivery failed; retrying", "webhook", scrub.URL(target), "attempt", i, "wait", wait, "err", err)
		if s.sleep(ctx, wait) != nil {
			return false
		}
		backoff = min(2*backoff, orDefault(s.MaxBackoff, DefaultMaxBackoff))
	}
}

func (s *Sender) sleep(ctx context.Context, d time.Duration) error {
	if s.wait != nil {
		return s.wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// record notes a failed request.
func (s *Sender) record(target string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if target != s.url {
		return
	}
	s.st.ConsecutiveFailures++
	s.st.LastError = err.Error()
	s.st.LastErrorAt = time.Now().UTC()
}

// fail gives a up.
func (s *Sender) fail(a event.Alert, target string, err error, how string) {
	s.mu.Lock()
	s.st.Failed++
	if s.st.ConsecutiveFailures == 0 && target == s.url {
		s.st.ConsecutiveFailures = 1
		s.st.LastError, s.st.LastErrorAt = err.Error(), time.Now().UTC()
	}
	s.mu.Unlock()
	s.Logger.Warn("alert not delivered to the webhook (it is in the store and on the dashboard)", "webhook", scrub.URL(target),
		"kind", a.Kind, "id", a.ID, "tries", how, "err", err)
}

// errStatus is a response that is not a success.
type errStatus struct {
	code int
	body string
}

func (e *errStatus) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.code)
	}
	return fmt.Sprintf("HTTP %d: %s", e.code, e.body)
}

// post sends one request. It returns whether a failure is worth retrying, and the wait a 429's
// Retry-After asks for (0: none). Its errors never hold the URL.
func (s *Sender) post(ctx context.Context, target string, body []byte) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(s.Timeout, DefaultTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false, 0, errors.New("the URL does not make a request; check [alerts] webhook_url")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "observer")
	resp, err := s.client().Do(req)
	if err != nil {
		return true, 0, cause(err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	e := &errStatus{code: resp.StatusCode, body: oneLine(scrub.String(string(snippet)))}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, retryAfter(resp.Header.Get("Retry-After"), time.Now()), e
	case resp.StatusCode >= 500:
		return true, 0, e
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		e.body = "a redirect, which observer does not follow: set [alerts] webhook_url to the final URL"
		return false, 0, e
	}
	return false, 0, e
}

func (s *Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return defaultClient
}

var defaultClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// cause strips the URL the HTTP client puts in its errors (Post "https://...": ...).
func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("no answer within the request timeout")
	}
	return errors.New(scrub.String(err.Error()))
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when absent or past.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(h, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = truncate(s, 200)
	}
	return s
}

// Text is the line an alert is told in: "observer: " and its message.
func Text(a event.Alert) string {
	msg := a.Message
	if msg == "" {
		msg = a.Kind + " alert"
	}
	return "observer: " + msg
}

// Body is the request body of a for format (FormatSlack, FormatDiscord or FormatJSON).
func Body(format string, a event.Alert) ([]byte, error) {
	var v any
	switch format {
	case FormatSlack, "":
		// Slack reads &, < and > as its markup's own: they are escaped as its docs say.
		v = struct {
			Text string `json:"text"`
		}{slackEscape.Replace(Text(a))}
	case FormatDiscord:
		v = struct {
			Content string `json:"content"`
		}{truncate(Text(a), DiscordMaxContent)}
	case FormatJSON:
		v = struct {
			Source string      `json:"source"`
			Alert  event.Alert `json:"alert"`
		}{"observer", a}
	default:
		return nil, fmt.Errorf("unknown [alerts] format %q (slack, discord or json)", format)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// truncate cuts s to at most n characters, the last of them "…" when it was cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
