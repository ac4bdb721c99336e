// Package proxy is observer-proxy: a reverse proxy in front of the model APIs (Anthropic, OpenAI,
// the Gemini API) that reads the exact usage of every turn from the API's own response and
// publishes one api_turn event per request.
//
// What the client gets: exactly what the upstream sent, byte for byte and as it arrives (streams
// are never buffered), with one exception: for a streaming OpenAI chat request that did not ask for
// usage, the proxy asks for it upstream (stream_options.include_usage) and removes the extra
// usage-only chunk before the client sees it.
//
// What is recorded: provider, endpoint, model, upstream message or response id, the client and its
// session id, status, error class and message, latency, time to first byte, the four token buckets
// stored net (input excludes cached tokens; reasoning stays inside output and is also shown apart;
// Gemini's thoughts, which it counts beside the output, are added to it), cost, message and tool
// counts, bytes in and out. Never a header that carries a credential, nor the query of a URL (where
// a Gemini client may put its key), never a prompt or completion. The credentials the request
// carried (x-api-key, the Authorization credential, x-goog-api-key, ?key=) are replaced, whatever
// their format, in everything recorded of it, such as an upstream's error that echoes them.
//
// What it never does: fail or slow a client because of observer. A turn is recorded once the
// upstream's response has ended (the request body is parsed then, except an OpenAI chat body, read
// before forwarding to decide whether to ask for usage), after the client has been handed the
// response, but for the last bytes of a response of known length when the proxy journals: those
// wait until the turn is journaled (below). Its event goes to an in-memory queue that a background
// worker publishes in batches (under load a turn waits there at most publishGap, 5 ms), and the
// bus client spools events to disk while the bus is down.
//
// What survives a kill: with Config.JournalDir set (observer-proxy sets
// $OBSERVER_HOME/run/proxy-journal), each event is appended to a journal file before it is queued,
// on the handler's goroutine, and the journal is emptied as the publisher takes its events (see
// journal). A proxy killed with kill -9 leaves its journal, and the next proxy on the same home
// publishes it at its start, with the same event ids, so what was published already is stored once.
// The journal is written without fsync: it survives the process, not an OS crash or a power cut.
// A turn is in the journal before its client can hold the response complete, so a kill -9 loses
// no turn whose client has the whole response: a response of unknown length (a stream, chunked or
// on HTTP/2) ends, with its terminating chunk or HTTP/2's end of stream, only when the handler
// returns, after its turn is journaled; a response of known length (Content-Length), complete at
// its last byte, is recorded in the read of the upstream's body that brings its last bytes, and
// those bytes go to the client once the turn is journaled (see meter). Only that last read waits,
// for as long as parsing the request body and building and writing the event take (microseconds to
// a millisecond); the bytes before it, and every byte of a stream of unknown length, pass as they
// come. A journal write that fails is logged and the bytes go out all the same; without a journal
// (none set, or one that could not be opened) nothing is held back. What a kill still loses: a
// turn whose response had not ended, and one whose client acted on a stream's final event
// (message_stop, [DONE]) without waiting for the stream's end.
//
// What it answers itself, in the provider's error shape: 403 to a request from a web page (see
// guard), 413 to a body over Config.MaxBodyBytes (read no further), 502 when the upstream cannot
// be reached, 504 when it cannot be connected to within Config.ConnectTimeout or sends no headers
// within Config.ResponseHeaderTimeout. All but the 403s are recorded as turns with their error
// class (upstream_unreachable, upstream_connect_timeout, upstream_timeout, request_too_large).
package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/event"
)

// Publisher takes the events the proxy produces; *bus.Client is one.
type Publisher interface {
	Publish(ctx context.Context, ev *event.Event) (bus.Result, error)
}

// Coster prices a turn; *pricing.Table is one. known is false for a model without a price.
type Coster interface {
	Cost(model string, tok event.Tokens) (usd float64, known bool)
}

// Config configures a Proxy.
type Config struct {
	AnthropicUpstream string
	OpenAIUpstream    string
	GeminiUpstream    string    // "": DefaultGeminiUpstream
	Publisher         Publisher // nil: events are only counted (benchmarks)
	Coster            Coster    // nil: costs are 0 and marked unknown
	Logger            *slog.Logger
	Host, User        string // stamped on events
	// Transport reaches the upstreams; nil uses a tuned clone of http.DefaultTransport with the
	// two timeouts below. A given Transport keeps its own.
	Transport http.RoundTripper
	// ConnectTimeout bounds connecting to an upstream, TCP and TLS (0: DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an upstream's response headers once the request
	// is sent (0: DefaultResponseHeaderTimeout). The body, a stream say, is not bounded.
	ResponseHeaderTimeout time.Duration
	// MaxBodyBytes is the largest request body of a model endpoint (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ListenAddr is where the proxy listens: its host is accepted in a Host header besides the
	// loopback names.
	ListenAddr string
	// Compressor, when set, compresses the requests of the Messages, Chat Completions and
	// Responses APIs before they go upstream ([compression] enabled).
	Compressor *compress.Compressor
	// JournalDir, when set, is where queued events are journaled until published (see journal),
	// and where New finds the journals of a proxy killed before it published them.
	JournalDir string
}

// Defaults of the Config limits, as in config.Default.
const (
	DefaultConnectTimeout        = 10 * time.Second
	DefaultResponseHeaderTimeout = 10 * time.Minute
	// DefaultMaxBodyBytes is twice the largest request the Messages API accepts (32 MB).
	DefaultMaxBodyBytes = 64 << 20
	// DefaultGeminiUpstream is the Gemini API (Google AI Studio keys).
	DefaultGeminiUpstream = "https://generativelanguage.googleapis.com"
)

// Proxy is an http.Handler.
type Proxy struct {
	cfg       Config
	upstreams map[string]*url.URL
	rp        *httputil.ReverseProxy
	logger    *slog.Logger
	guard     guard
	maxBody   int64
	timeouts  [2]time.Duration // connect, response headers (what the messages say)

	queueMu sync.RWMutex // held for reading while sending to queue; Close takes it to close queue
	queue   chan queued
	closed  bool
	wg      sync.WaitGroup
	journal *journal // nil: none

	requests  atomic.Int64
	turns     atomic.Int64
	pubErrors atomic.Int64
	lastTurn  atomic.Int64
	nr        bus.LossCounter // turns served but not recorded (notrecorded.go)

	// journaled, set by tests only, is called on the handler's goroutine once a turn has been
	// handed to the journal, before it is queued.
	journaled func(ev *event.Event)
}

// New makes a proxy and starts its publishing workers; Close stops them after the queue drains.
func New(cfg Config) (*Proxy, error) {
	p := &Proxy{cfg: cfg, upstreams: map[string]*url.URL{}, logger: cfg.Logger,
		queue: make(chan queued, 65536)}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.nr.What, p.nr.Key, p.nr.Logger = "turns", "turns", p.logger
	p.nr.Msg = "api turns may not have been recorded: the client was served, but the bus did not acknowledge the record and the spool did not take it"
	p.guard = newGuard(cfg.ListenAddr)
	p.maxBody = cmp.Or(max(cfg.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	p.timeouts = [2]time.Duration{cmp.Or(max(cfg.ConnectTimeout, 0), DefaultConnectTimeout),
		cmp.Or(max(cfg.ResponseHeaderTimeout, 0), DefaultResponseHeaderTimeout)}
	for name, raw := range map[string]string{Anthropic: cfg.AnthropicUpstream, OpenAI: cfg.OpenAIUpstream,
		Google: cmp.Or(cfg.GeminiUpstream, DefaultGeminiUpstream)} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("proxy: %s upstream %q is not an http(s) URL", name, raw)
		}
		p.upstreams[name] = u
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
		t.IdleConnTimeout = 90 * time.Second
		// A silent upstream must not hold a client for ever: bound the connection (TCP and TLS) and
		// the wait for the response headers, never the body (a stream runs as long as it runs).
		t.DialContext = (&net.Dialer{Timeout: p.timeouts[0], KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = p.timeouts[0]
		t.ResponseHeaderTimeout = p.timeouts[1]
		// The proxy reads usage from compressed bodies itself and passes them on untouched.
		t.DisableCompression = true
		tr = t
	}
	// FlushInterval stays 0: a stream (text/event-stream, or a body of unknown length such as
	// Gemini's JSON array or a filtered chat stream) is flushed after every write anyway, and a
	// body of known length goes out in one write with its headers, as a bare ReverseProxy sends it
	// (flushing every write cost a timer goroutine and a second write per response).
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      tr,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slogErrorLog(p.logger),
		BufferPool:     copyBuffers,
	}
	if cfg.JournalDir != "" && cfg.Publisher != nil {
		j, orphans, err := openJournal(cfg.JournalDir, p.logger)
		if err != nil {
			p.logger.Error("the proxy runs without its journal: turns queued when it is killed are lost", "err", err)
		} else {
			p.journal = j
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.replayJournals(orphans) }()
		}
	}
	p.wg.Add(1)
	go p.publishLoop()
	return p, nil
}

// queued is an event waiting to be published, and the journal segment that holds it.
type queued struct {
	ev  *event.Event
	seg *segment
}

// copyBuffers are the buffers responses are copied to the client through (32 KB each, as the
// ReverseProxy's own), reused rather than made for every response; the filtered chat stream reads
// through them too.
var copyBuffers = &bufferPool{}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte {
	if p, ok := b.pool.Get().(*[]byte); ok {
		return *p
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == 32<<10 {
		buf = buf[:cap(buf)]
		b.pool.Put(&buf)
	}
}

// turnCtx travels with a metered request.
type turnCtx struct {
	route route
	start time.Time
	// body is the request body until it is parsed into info: once the turn is recorded, after
	// the client has its answer (the OpenAI chat path parses it before forwarding instead).
	body   []byte
	info   requestInfo
	parsed bool
	// forward is the body sent upstream (the request body, or the chat body asking for usage).
	forward []byte
	// client and headerSession are read from the request headers when the request comes in
	// (the headers themselves are never kept, nor stored).
	client, headerSession string
	bytesIn               int64
	filter                bool
	// compressed is what compression did to the request, when it changed it.
	compressed *compress.Result
	// limits are the plan usage limit windows the response's headers gave (planLimits), and when.
	limits   []event.Limit
	limitsAt time.Time
	// creds are the request's credentials, kept to take them out of what is recorded (see
	// credentials); never recorded themselves.
	creds credentials
	// connected is set once the proxy holds a connection to the upstream: a timeout before it
	// is a connect timeout, after it a response header timeout.
	connected atomic.Bool

	// pending is the recording of the turn, left by the response body's meter when the body
	// ends (for a held meter, which journals the turn before the body's last bytes go out, the
	// queueing of the turn); ServeHTTP runs it once the client has the whole response. served is
	// set then: recording left later runs at once, in a goroutine of its own.
	mu      sync.Mutex
	pending func()
	served  bool
}

// requestInfo parses the request body, once.
func (tc *turnCtx) requestInfo() requestInfo {
	if !tc.parsed {
		if tc.route.provider == Google {
			tc.info = parseGeminiRequest(tc.body, tc.route)
		} else {
			tc.info = parseRequest(tc.body)
		}
		tc.parsed, tc.body = true, nil
	}
	return tc.info
}

// later runs fn once the client has its response (see pending).
func (tc *turnCtx) later(fn func()) {
	tc.mu.Lock()
	if tc.served {
		tc.mu.Unlock()
		go fn()
		return
	}
	if prev := tc.pending; prev != nil {
		tc.pending = func() { prev(); fn() }
	} else {
		tc.pending = fn
	}
	tc.mu.Unlock()
}

// done marks the response served and returns the recording left for it, if any.
func (tc *turnCtx) done() func() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.served = true
	fn := tc.pending
	tc.pending = nil
	return fn
}

type ctxKey struct{}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	rt := routeFor(r)
	if class, msg := p.guard.refuse(r); class != "" {
		p.logger.Warn("refused a request", "class", class, "host", r.Host, "origin", r.Header.Get("Origin"),
			"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "remote", r.RemoteAddr, "path", r.URL.Path)
		p.writeError(w, rt.provider, http.StatusForbidden, class, msg)
		return
	}
	if !rt.metered {
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, &turnCtx{route: rt, start: time.Now()}))
		p.rp.ServeHTTP(w, r)
		return
	}
	tc := &turnCtx{route: rt, start: time.Now(), client: clientOf(r.Header), headerSession: sessionOf(r.Header, requestInfo{})}
	tc.creds = forwardedCredentials(r)
	body, err := readBody(r, p.maxBody)
	r.Body.Close()
	if errors.Is(err, errTooLarge) {
		tc.bytesIn = max(r.ContentLength, p.maxBody+1)
		msg := fmt.Sprintf("observer-proxy: the request body is larger than [proxy] max_body_bytes (%d bytes); "+
			"raise it in config.toml (or OBSERVER_PROXY_MAX_BODY_BYTES) if the API takes larger requests", p.maxBody)
		// The rest of the body stays unread: the connection cannot carry another request.
		w.Header().Set("Connection", "close")
		p.writeError(w, rt.provider, http.StatusRequestEntityTooLarge, "request_too_large", msg)
		tc.parsed = true // nothing to parse: the body was not read
		p.recordFailure(tc, http.StatusRequestEntityTooLarge, "request_too_large", msg)
		return
	}
	if err != nil {
		p.writeError(w, rt.provider, http.StatusBadRequest, "invalid_request_error",
			"observer-proxy: could not read the request body: "+err.Error())
		return
	}
	tc.bytesIn = int64(len(body))
	tc.body = body
	if c := p.cfg.Compressor; c != nil {
		if api := compressAPI(rt); api != "" {
			res, err := compressSafely(c, api, body)
			switch {
			case errors.Is(err, errCompressionPanic):
				p.logger.Error("request left uncompressed", "endpoint", rt.endpoint, "err", err)
			case err != nil:
				p.logger.Debug("request left uncompressed", "endpoint", rt.endpoint, "err", err)
			case len(res.Decisions) > 0:
				body, tc.compressed = res.Body, res
			}
		}
	}
	if rt.provider == OpenAI && rt.endpoint == "/v1/chat/completions" {
		// The body must be read before forwarding here, to decide whether to ask for usage.
		info := tc.requestInfo()
		if !info.NotJSON && info.Stream && !info.IncludeUsage {
			if nb, ok := injectIncludeUsage(body); ok {
				body, tc.filter = nb, true
			}
		}
	}
	tc.forward = body
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, tc))
	complete := false
	defer func() {
		// The turn is recorded here, on the handler's goroutine, once the client has its answer
		// (a held response of known length has its turn journaled before its last bytes go out,
		// and only queued here). The deferred call also runs when the ReverseProxy aborts the
		// handler (a client gone mid-stream).
		if fn := tc.done(); fn != nil {
			if complete {
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			fn()
		}
	}()
	p.rp.ServeHTTP(w, r)
	complete = true
}

// errTooLarge is a request body over the proxy's limit.
var errTooLarge = errors.New("request body too large")

// readBody reads a request body of at most limit bytes, holding no more than that: a body whose
// Content-Length is larger is refused unread, one without a length is read to one byte past the
// limit at most, and a body of known length is read into a buffer of its exact size.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errTooLarge
	}
	if r.ContentLength >= 0 {
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	// Chunked: read into blocks, not a slice that grows by copying (io.ReadAll would leave about
	// four times the body in garbage behind it), and join them once the end is seen.
	var blocks [][]byte
	var n int64
	for {
		b := make([]byte, min(1<<20, limit+1-n))
		k, err := io.ReadFull(r.Body, b)
		blocks, n = append(blocks, b[:k]), n+int64(k)
		switch {
		case n > limit:
			return nil, errTooLarge
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			body := make([]byte, 0, n)
			for _, b := range blocks {
				body = append(body, b...)
			}
			return body, nil
		case err != nil:
			return nil, err
		}
	}
}

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	tc := pr.In.Context().Value(ctxKey{}).(*turnCtx)
	pr.SetURL(p.upstreams[tc.route.provider])
	if data := tc.forward; len(data) > 0 && pr.Out.Body != nil {
		// The body is in memory: hand it to the transport as such rather than through the
		// ReverseProxy's wrapper of the inbound body, so that the transport writes headers and body
		// in one write (it flushes the headers apart before a body it does not know), and, with
		// GetBody, can send it again where a retry is allowed (HTTP/2 after a GOAWAY).
		pr.Out.Body = io.NopCloser(bytes.NewReader(data))
		pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	pr.Out = pr.Out.WithContext(httptrace.WithClientTrace(pr.Out.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { tc.connected.Store(true) },
	}))
	pr.Out.Host = ""
	if tc.filter {
		// The proxy edits this stream; keep it uncompressed.
		pr.Out.Header.Set("Accept-Encoding", "identity")
	} else if ae := pr.Out.Header.Get("Accept-Encoding"); ae != "" {
		// The proxy can read gzip, deflate and zstd, not brotli: offer the upstream only those.
		pr.Out.Header.Set("Accept-Encoding", dropEncoding(ae, "br"))
	}
}

func dropEncoding(ae, drop string) string {
	var keep []string
	for _, part := range strings.Split(ae, ",") {
		name := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		if !strings.EqualFold(name, drop) && name != "" {
			keep = append(keep, strings.TrimSpace(part))
		}
	}
	if len(keep) == 0 {
		return "identity"
	}
	return strings.Join(keep, ", ")
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	tc, _ := resp.Request.Context().Value(ctxKey{}).(*turnCtx)
	if tc == nil || !tc.route.metered {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	stream := strings.HasPrefix(ct, "text/event-stream")
	format := formatJSON
	switch {
	case stream:
		format = formatSSE
	case tc.route.geminiStream:
		// Without alt=sse Gemini streams one JSON array; an error before the stream is one object,
		// which the array reader takes too.
		format = formatJSONArray
		stream = resp.StatusCode < 400
	}
	ctx := resp.Request.Context()
	status := resp.StatusCode
	if now := time.Now(); tc.route.provider != Google {
		tc.limits, tc.limitsAt = planLimits(tc.route.provider, resp.Header, status, now), now
	}
	reqID := firstNonEmpty(resp.Header.Get("Request-Id"), resp.Header.Get("X-Request-Id"))
	if tc.filter && (!stream || resp.Header.Get("Content-Encoding") != "") {
		tc.filter = false
	}
	m := newMeter(ctx, resp.Body, tc.route.provider, format, tc.filter, resp.Header.Get("Content-Encoding"),
		func(m *meter, reason endReason, clientGone bool) {
			p.record(tc, status, reqID, stream, m, reason, clientGone)
		})
	m.later = tc.later
	if p.journal != nil && !tc.filter && resp.ContentLength >= 0 {
		// The client may count this response complete at its last byte, before the handler
		// returns: that byte goes out once the turn is journaled (see meter).
		m.hold, m.remaining = true, resp.ContentLength
	}
	m.usage.creds = tc.creds
	if format == formatJSON && resp.ContentLength > 0 && resp.ContentLength <= maxJSONCopy {
		m.jsonCopy.Grow(int(resp.ContentLength))
	}
	resp.Body = m
	if tc.filter {
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
	}
	return nil
}

// record builds and queues the api_turn event of one request.
func (p *Proxy) record(tc *turnCtx, status int, reqID string, stream bool, m *meter, reason endReason, clientGone bool) {
	info := tc.requestInfo()
	u := &m.usage
	t := &event.APITurn{
		Tokens:     u.Tokens,
		Provider:   tc.route.provider,
		Endpoint:   tc.route.endpoint,
		Model:      firstNonEmpty(u.Model, info.Model),
		MessageID:  u.MessageID,
		Stream:     stream,
		Status:     status,
		StopReason: u.StopReason,
		LatencyMs:  ms(time.Since(tc.start)),
		Messages:   info.Messages,
		Tools:      info.Tools,
		BytesIn:    tc.bytesIn,
		BytesOut:   m.bytesOut,
	}
	if !m.firstByte.IsZero() {
		t.TTFBMs = ms(m.firstByte.Sub(tc.start))
	}
	t.RequestID = reqID
	t.ErrorClass, t.ErrorMessage = u.ErrClass, truncate(u.ErrMsg, 2000)
	switch {
	case status >= 400 && t.ErrorClass == "":
		t.ErrorClass = fmt.Sprintf("http_%d", status)
	case stream && !u.Final:
		t.Partial = true
		switch {
		case reason == endClosed || clientGone:
			t.ErrorClass, t.ErrorMessage = "client_disconnected", "the client closed the connection before the stream ended"
		case reason == endReadError:
			t.ErrorClass, t.ErrorMessage = "upstream_read_error", truncate(errText(m.readErr), 2000)
		default:
			t.ErrorClass, t.ErrorMessage = "stream_truncated", "the upstream stream ended before its final event"
		}
	case !stream && reason != endEOF && clientGone:
		t.Partial = true
		t.ErrorClass, t.ErrorMessage = "client_disconnected", "the client closed the connection before the response ended"
	}
	if info.NotJSON && status >= 400 && t.ErrorMessage == "" {
		t.ErrorMessage = "request body is not JSON"
	}
	p.price(t)
	p.enqueue(tc, info, t, m.early)
}

func (p *Proxy) price(t *event.APITurn) {
	t.Reliability = event.ReliabilityAccurate
	if p.cfg.Coster == nil || t.Model == "" {
		if t.Input+t.Output+t.CacheRead+t.CacheCreation > 0 {
			t.Reliability = event.ReliabilityUnknown
		}
		return
	}
	var cost float64
	var approximate, known bool
	if q, ok := p.cfg.Coster.(quoter); ok {
		cost, approximate, known = q.Quote(t.Model, t.Tokens, time.Time{})
	} else {
		cost, known = p.cfg.Coster.Cost(t.Model, t.Tokens)
	}
	t.CostUSD = cost
	if !known {
		t.Reliability = event.ReliabilityUnknown
	} else if approximate {
		// A price found by the family fallback (a deployment name around a known model).
		t.Reliability = event.ReliabilityApproximate
	}
}

// quoter is a Coster that also says when a price is only approximate (*pricing.Table is one).
type quoter interface {
	Quote(model string, tok event.Tokens, at time.Time) (usd float64, approximate, known bool)
}

// enqueue journals a turn and queues it for the publisher. early says that the client does not
// have the response's last bytes yet (a held meter): the turn is queued once it has them, as
// queueing may publish on the spot (the proxy closing) and the client must not wait for that.
func (p *Proxy) enqueue(tc *turnCtx, info requestInfo, t *event.APITurn, early bool) {
	ev := event.New(event.KindAPITurn, "observer-proxy")
	ev.Time = tc.start.UTC()
	ev.ID = event.RandomID()
	ev.Client = tc.client
	ev.SessionID = firstNonEmpty(tc.headerSession, info.SessionID)
	ev.Host, ev.User = p.cfg.Host, p.cfg.User
	tc.creds.redactTurn(t, tc)
	scrubError(t)
	ev.APITurn = t
	comps := p.compressionEvents(tc, &ev, t)
	comps = append(comps, limitEvents(tc, &ev)...)
	p.turns.Add(1)
	p.lastTurn.Store(time.Now().UnixMilli())
	if p.cfg.Publisher == nil {
		return
	}
	// Journaled before it is queued: the turn survives a kill from here on (see journal).
	seg := p.journal.write(comps, &ev)
	if p.journaled != nil {
		p.journaled(&ev)
	}
	if early {
		tc.later(func() { p.queueTurn(comps, &ev, seg) })
		return
	}
	p.queueTurn(comps, &ev, seg)
}

// queueTurn queues a turn's compression events and the turn, journaled in seg.
func (p *Proxy) queueTurn(comps []event.Event, ev *event.Event, seg *segment) {
	for i := range comps {
		p.queueEvent(queued{&comps[i], seg})
	}
	p.queueEvent(queued{ev, seg})
}

// queueEvent hands one event to the publishing loop.
func (p *Proxy) queueEvent(ev queued) {
	p.queueMu.RLock()
	closed := p.closed
	if !closed {
		select {
		case p.queue <- ev:
			p.queueMu.RUnlock()
			return
		default:
		}
		// The queue is full (the bus has been slow for a while): publish apart, off the handler's
		// goroutine, which would otherwise keep the client's connection from its next request.
		// Close waits for it.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.publish(ev)
		}()
	}
	p.queueMu.RUnlock()
	if closed {
		// Shutting down: publish before the bus client closes. The client has its answer.
		p.publish(ev)
	}
}

// BatchPublisher is a Publisher that can also publish many events with one wait for their acks;
// *bus.Client is one. The proxy uses it when it can.
type BatchPublisher interface {
	PublishBatch(ctx context.Context, evs []event.Event) (spooled int, err error)
}

// publishGap is the least time between two batches of a publishing worker. A turn that comes
// after a quiet spell is published at once; under load, turns wait at most this long in memory
// and go to the bus together, which costs the bus, the writer and the dashboard one wake-up per
// batch instead of one per turn (at c=1 a third of their CPU time per turn, at c=16 a half).
// Each bus message still costs the bus host about 0.4 ms of CPU (storing it in the stream,
// delivering it, taking its acknowledgement): at 5 ms, c=16 sent 150 messages a second of 37
// turns each, and the bus host spent 0.80 s of CPU in a 7 s round; at 20 ms, 41 messages a second
// of 135 turns each, and 0.53 s. The turns are journaled before they wait (journal), and the client has its answer.
const publishGap = 20 * time.Millisecond

func (p *Proxy) publishLoop() {
	defer p.wg.Done()
	bp, batching := p.cfg.Publisher.(BatchPublisher)
	batch := make([]event.Event, 0, 256)
	segs := make([]*segment, 0, 256)
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	var last time.Time
	for ev := range p.queue {
		if !batching {
			p.publish(ev)
			continue
		}
		batch, segs = append(batch[:0], *ev.ev), append(segs[:0], ev.seg)
		if wait := publishGap - time.Since(last); wait > 0 {
			gap.Reset(wait)
		gather:
			for len(batch) < cap(batch) {
				select {
				case more, ok := <-p.queue:
					if !ok {
						break gather // closing: publish what is here now
					}
					batch, segs = append(batch, *more.ev), append(segs, more.seg)
				case <-gap.C:
					break gather
				}
			}
			gap.Stop()
		}
	fill:
		for len(batch) < cap(batch) {
			select {
			case more, ok := <-p.queue:
				if !ok {
					break fill
				}
				batch, segs = append(batch, *more.ev), append(segs, more.seg)
			default:
				break fill
			}
		}
		last = time.Now()
		if _, err := bp.PublishBatch(context.Background(), batch); err != nil {
			p.lostBatch(batch, err)
		}
		p.journal.published(segs...)
	}
}

func (p *Proxy) publish(ev queued) {
	if _, err := p.cfg.Publisher.Publish(context.Background(), ev.ev); err != nil {
		p.lost([]event.Event{*ev.ev}, err)
	}
	p.journal.published(ev.seg)
}

// errorHandler answers when the upstream cannot be reached, in the provider's error shape.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	tc, _ := r.Context().Value(ctxKey{}).(*turnCtx)
	provider := OpenAI
	if tc != nil {
		provider = tc.route.provider
	}
	status, class := http.StatusBadGateway, "upstream_unreachable"
	up := p.upstreams[provider].Redacted()
	err = withoutQuery(err)
	msg := fmt.Sprintf("observer-proxy: the %s upstream %s could not be reached: %v", provider, up, err)
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) || r.Context().Err() != nil:
		status, class, msg = 499, "client_disconnected", "the client closed the connection before the upstream answered"
	case errors.As(err, &ne) && ne.Timeout() && (tc == nil || !tc.connected.Load()):
		status, class = http.StatusGatewayTimeout, "upstream_connect_timeout"
		msg = fmt.Sprintf("observer-proxy: could not connect to the %s upstream %s within %v ([proxy] connect_timeout): %v",
			provider, up, p.timeouts[0], err)
	case errors.As(err, &ne) && ne.Timeout():
		status, class = http.StatusGatewayTimeout, "upstream_timeout"
		msg = fmt.Sprintf("observer-proxy: the %s upstream %s sent no response headers within %v ([proxy] response_header_timeout)",
			provider, up, p.timeouts[1])
	}
	if status != 499 {
		p.writeError(w, provider, status, class, msg)
		p.logger.Warn("upstream failed", "provider", provider, "class", class, "err", err)
	}
	if tc == nil || !tc.route.metered {
		return
	}
	// Recorded once the client has the error (see turnCtx.pending).
	tc.later(func() { p.recordFailure(tc, status, class, msg) })
}

// recordFailure queues the turn of a request the proxy answered itself.
func (p *Proxy) recordFailure(tc *turnCtx, status int, class, msg string) {
	info := tc.requestInfo()
	t := &event.APITurn{Provider: tc.route.provider, Endpoint: tc.route.endpoint, Model: info.Model, Stream: info.Stream,
		Status: status, ErrorClass: class, ErrorMessage: truncate(msg, 2000), LatencyMs: ms(time.Since(tc.start)),
		Messages: info.Messages, Tools: info.Tools, BytesIn: tc.bytesIn, Reliability: event.ReliabilityAccurate}
	p.enqueue(tc, info, t, false)
}

// writeError answers in the provider's error shape, so the client shows a useful message.
func (p *Proxy) writeError(w http.ResponseWriter, provider string, status int, class, msg string) {
	var body any
	switch provider {
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]string{"type": anthropicErrorType(status), "message": msg}}
	case Google:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": googleErrorStatus(status)}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": class, "code": class, "param": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Observer-Proxy-Error", class)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// googleErrorStatus is the google.rpc.Code name the Gemini API gives an HTTP status.
func googleErrorStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "UNAVAILABLE"
}

// withoutQuery drops the query from the URL a transport error names: a Gemini client's API key
// can be there (?key=), and the error goes into a log line, the client's error message and the
// recorded turn.
func withoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return &url.Error{Op: ue.Op, URL: "(an unreadable URL)", Err: ue.Err}
	}
	if u.RawQuery == "" {
		return err
	}
	u.RawQuery = ""
	return &url.Error{Op: ue.Op, URL: u.Redacted(), Err: ue.Err}
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	return "api_error"
}

// Stats are the proxy's counters since it started.
type Stats struct {
	Requests, Turns, PublishErrors int64
	LastTurn                       time.Time
	Queued                         int
	// NotRecorded counts the turns served whose record neither the bus nor the spool took (a full
	// disk); NotRecordedAt is when the last was lost and NotRecordedWhy why ("disk full").
	NotRecorded    int64
	NotRecordedAt  time.Time
	NotRecordedWhy string
}

// Stats returns the counters.
func (p *Proxy) Stats() Stats {
	s := Stats{Requests: p.requests.Load(), Turns: p.turns.Load(), PublishErrors: p.pubErrors.Load(), Queued: len(p.queue)}
	if ms := p.lastTurn.Load(); ms > 0 {
		s.LastTurn = time.UnixMilli(ms).UTC()
	}
	l := p.nr.Losses()
	s.NotRecorded, s.NotRecordedAt, s.NotRecordedWhy = l.N, l.At, l.Why
	return s
}

// Close stops the publishing workers after the queued events are handed to the publisher.
func (p *Proxy) Close() {
	p.queueMu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.queueMu.Unlock()
	p.wg.Wait()
	p.journal.close()
}

func slogErrorLog(l *slog.Logger) *log.Logger { return slog.NewLogLogger(l.Handler(), slog.LevelWarn) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
