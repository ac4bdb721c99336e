// Package otlp receives the AI clients' own OpenTelemetry exports (OTLP over HTTP, JSON or
// protobuf, and over gRPC) and turns what they say about model calls, tool calls and sessions into
// observer events: a third capture path beside the proxy and the transcripts.
//
// Claude Code (CLAUDE_CODE_ENABLE_TELEMETRY=1) sends log events claude_code.api_request (tokens,
// cost, duration, the API's request id), api_error, tool_decision, tool_result, user_prompt and
// assistant_response, keyed by session.id (its transcript's file name), and delta metrics
// claude_code.token.usage and cost.usage. Codex ([otel] in config.toml) sends codex.sse_event logs
// (event.kind=response.completed, twice per response: once with token counts), codex.tool_result,
// codex.tool_decision and codex.api_request, keyed by conversation.id; attribute values arrive as
// strings or numbers.
//
// The receiver answers as soon as a body is read and decoded, and maps and publishes it after, on
// its own goroutine: an exporter that waits for its answer (Codex waits at exit) never waits for
// the bus. Events that neither the bus nor its spool take (both on a full disk) are lost, since
// the exporter has had its 200 and will not send them again: the receiver counts them
// (Stats.NotRecorded, and Stats.Problem for a while after the last) and logs them at most every
// 10 s. A body must arrive whole within Config.BodyTimeout (408 otherwise: a trickled body does
// not hold its connection), and be at most Config.MaxBodyBytes; the rest of an oversized one is
// read and dropped, within bounds, before the 413, so that an exporter that sends its whole body
// before reading gets the answer and not a reset. Decoding uses
// go.opentelemetry.io/collector/pdata, which reads trace and span ids right in OTLP/JSON (hex, not
// base64 as the plain protobuf JSON mapping would).
package otlp

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// Publisher publishes events in batches; *bus.Client is one.
type Publisher interface {
	PublishBatch(ctx context.Context, evs []event.Event) (spooled int, err error)
}

// Coster prices a turn; *pricing.Table is one.
type Coster interface {
	Cost(model string, tok event.Tokens) (usd float64, known bool)
}

// Config configures a Receiver.
type Config struct {
	Publisher Publisher // nil: events are mapped and counted only (tests, benchmarks)
	Coster    Coster    // nil: turns are unpriced
	Logger    *slog.Logger
	Host      string // stamped on events
	User      string
	// MaxBodyBytes bounds a request body, compressed and decompressed (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// BodyTimeout bounds the time a request's body takes to arrive, from the moment its headers
	// have (0: DefaultBodyTimeout). A body still arriving then is answered 408 (HTTP) or
	// DeadlineExceeded (gRPC, whose bound covers the whole call): a client that trickles its
	// body must not hold a connection and its goroutine open.
	BodyTimeout time.Duration
	// Refuse, when set, checks every HTTP request first (loopback host, no browser marks); a
	// refusal is a 403.
	Refuse func(r *http.Request) (class, msg string)
	// QueueSize is the number of decoded exports waiting to be mapped (0: 1024). A full queue
	// answers 503, which exporters retry.
	QueueSize int
}

// DefaultMaxBodyBytes is the largest export accepted: 16 MiB, twice what the clients send at most
// (the OTLP exporters' batches stay under 8 MB).
const DefaultMaxBodyBytes = 16 << 20

// DefaultBodyTimeout is the longest an export's body may take to arrive: an 8 MB batch takes
// milliseconds on loopback, and seconds over a slow link.
const DefaultBodyTimeout = 30 * time.Second

// minDrainBytes is the least of an oversized body the receiver reads and discards before it
// answers 413 (drainBytes).
const minDrainBytes = 64 << 20

// Receiver is an http.Handler for POST /v1/logs, /v1/metrics and /v1/traces (traces are accepted
// and dropped), and a gRPC service (RegisterGRPC).
type Receiver struct {
	cfg    Config
	logger *slog.Logger
	queue  chan work
	done   chan struct{}
	closed atomic.Bool
	mu     sync.RWMutex // held for reading while queueing; Close takes it to close the queue
	m      mapper

	stats struct {
		requests, refused, rejected, logs, metricPoints, events, pubErrors atomic.Int64
		last                                                               atomic.Int64
	}
	nr  bus.LossCounter  // events neither published nor spooled
	now func() time.Time // the clock of the not-recorded counters; tests set it
}

// work is one decoded export.
type work struct {
	logs    plog.Logs
	metrics pmetric.Metrics
	isLogs  bool
}

// New makes a receiver and starts its mapping goroutine; Close stops it after the queue drains.
func New(cfg Config) *Receiver {
	r := &Receiver{cfg: cfg, logger: cfg.Logger, done: make(chan struct{}), now: time.Now}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	r.nr.What, r.nr.Key, r.nr.Logger = "OTLP events", "events", r.logger
	r.nr.Msg = "otlp: events may not have been recorded: the exporter was answered, but the bus did not acknowledge them and the spool did not take them"
	r.nr.Now = func() time.Time { return r.now() }
	r.cfg.MaxBodyBytes = cmp.Or(max(cfg.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	r.cfg.BodyTimeout = cmp.Or(max(cfg.BodyTimeout, 0), DefaultBodyTimeout)
	r.queue = make(chan work, cmp.Or(max(cfg.QueueSize, 0), 1024))
	r.m = newMapper(cfg)
	go r.loop()
	return r
}

// Stats are the receiver's counters since it started.
type Stats struct {
	Requests     int64     // exports received (HTTP and gRPC)
	Refused      int64     // refused by the host and browser check
	Rejected     int64     // answered 4xx or 503
	LogRecords   int64     // log records read
	MetricPoints int64     // metric data points read
	Events       int64     // events published
	PubErrors    int64     // events the bus refused (spooled or lost)
	LastExport   time.Time // zero before the first
	// NotRecorded counts the events mapped from exports that neither the bus nor the spool took
	// (a full disk): the exporter had its 200, the record is gone. NotRecordedAt is when the last
	// was lost and NotRecordedWhy why ("disk full").
	NotRecorded    int64
	NotRecordedAt  time.Time
	NotRecordedWhy string
}

// Stats returns the counters.
func (r *Receiver) Stats() Stats {
	s := Stats{Requests: r.stats.requests.Load(), Refused: r.stats.refused.Load(), Rejected: r.stats.rejected.Load(),
		LogRecords: r.stats.logs.Load(), MetricPoints: r.stats.metricPoints.Load(), Events: r.stats.events.Load(),
		PubErrors: r.stats.pubErrors.Load()}
	if ms := r.stats.last.Load(); ms > 0 {
		s.LastExport = time.UnixMilli(ms)
	}
	l := r.nr.Losses()
	s.NotRecorded, s.NotRecordedAt, s.NotRecordedWhy = l.N, l.At, l.Why
	return s
}

// Close stops accepting exports and waits until the queued ones are mapped and published.
func (r *Receiver) Close() {
	r.mu.Lock()
	if !r.closed.Swap(true) {
		close(r.queue)
	}
	r.mu.Unlock()
	<-r.done
}

// errFull is a full queue: the exporter retries.
var errFull = errors.New("the receiver's queue is full")

// enqueue hands a decoded export to the mapping goroutine without waiting.
func (r *Receiver) enqueue(w work) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed.Load() {
		return errors.New("the receiver is shutting down")
	}
	select {
	case r.queue <- w:
		r.stats.last.Store(time.Now().UnixMilli())
		return nil
	default:
		return errFull
	}
}

func (r *Receiver) loop() {
	defer close(r.done)
	for w := range r.queue {
		var evs []event.Event
		if w.isLogs {
			evs = r.m.logs(w.logs)
			r.stats.logs.Add(int64(w.logs.LogRecordCount()))
		} else {
			r.stats.metricPoints.Add(int64(w.metrics.DataPointCount()))
			evs = r.m.metrics(w.metrics)
		}
		if len(evs) == 0 {
			continue
		}
		r.stats.events.Add(int64(len(evs)))
		if r.cfg.Publisher == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		spooled, err := r.cfg.Publisher.PublishBatch(ctx, evs)
		cancel()
		switch {
		case err != nil:
			lost := lostOf(len(evs), err)
			r.stats.pubErrors.Add(int64(spooled + lost))
			r.nr.Add(lost, len(evs), err)
		case spooled > 0:
			r.stats.pubErrors.Add(int64(spooled))
			r.logger.Warn("otlp: events not published to the bus; spooled", "events", len(evs), "spooled", spooled)
		}
	}
}

// Signals and their paths.
const (
	PathLogs    = "/v1/logs"
	PathMetrics = "/v1/metrics"
	PathTraces  = "/v1/traces"
)

// ServeHTTP answers one OTLP/HTTP export.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.cfg.Refuse != nil {
		if class, msg := r.cfg.Refuse(req); class != "" {
			r.stats.refused.Add(1)
			r.logger.Warn("otlp: refused a request", "class", class, "host", req.Host, "remote", req.RemoteAddr)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
	}
	switch req.URL.Path {
	case PathLogs, PathMetrics, PathTraces:
	default:
		r.fail(w, http.StatusNotFound, "observer otlp: unknown path %q: the receiver takes POST /v1/logs, /v1/metrics and /v1/traces", req.URL.Path)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.fail(w, http.StatusMethodNotAllowed, "observer otlp: %s takes POST", req.URL.Path)
		return
	}
	r.stats.requests.Add(1)
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	isJSON := ct == "application/json"
	if !isJSON && ct != "application/x-protobuf" {
		r.fail(w, http.StatusUnsupportedMediaType, "observer otlp: content type %q: want application/x-protobuf or application/json", ct)
		return
	}
	// The whole body must arrive within BodyTimeout. A server that cannot set the deadline (a
	// test's recorder) has no connection to hold open.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(r.cfg.BodyTimeout))
	body, status, err := r.readBody(req)
	if err != nil {
		if status == http.StatusRequestTimeout || status == http.StatusRequestEntityTooLarge {
			// What is left of the body, if anything, will not be read: the connection ends with
			// the answer rather than being read as the next request.
			w.Header().Set("Connection", "close")
		}
		r.fail(w, status, "observer otlp: %v", err)
		return
	}
	var wk work
	var resp interface {
		MarshalProto() ([]byte, error)
		MarshalJSON() ([]byte, error)
	}
	switch req.URL.Path {
	case PathLogs:
		er := plogotlp.NewExportRequest()
		err = unmarshal(er, body, isJSON)
		wk = work{logs: er.Logs(), isLogs: true}
		resp = plogotlp.NewExportResponse()
	case PathMetrics:
		er := pmetricotlp.NewExportRequest()
		err = unmarshal(er, body, isJSON)
		wk = work{metrics: er.Metrics()}
		resp = pmetricotlp.NewExportResponse()
	case PathTraces:
		// Accepted and dropped: neither client's spans say anything the logs do not.
		er := ptraceotlp.NewExportRequest()
		err = unmarshal(er, body, isJSON)
		resp = ptraceotlp.NewExportResponse()
	}
	if err != nil {
		r.fail(w, http.StatusBadRequest, "observer otlp: the body is not an OTLP export request (%s): %v", ct, err)
		return
	}
	if req.URL.Path != PathTraces {
		if err := r.enqueue(wk); err != nil {
			w.Header().Set("Retry-After", "1")
			r.fail(w, http.StatusServiceUnavailable, "observer otlp: %v; retry", err)
			return
		}
	}
	var out []byte
	if isJSON {
		out, _ = resp.MarshalJSON()
	} else {
		out, _ = resp.MarshalProto()
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

func unmarshal(er interface {
	UnmarshalProto([]byte) error
	UnmarshalJSON([]byte) error
}, body []byte, isJSON bool) (err error) {
	defer func() {
		if p := recover(); p != nil { // a decoder bug must not take the proxy down
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	if isJSON {
		return er.UnmarshalJSON(body)
	}
	return er.UnmarshalProto(body)
}

// readBody reads a body of at most MaxBodyBytes, decompressing gzip, deflate-free zstd as sent.
func (r *Receiver) readBody(req *http.Request) ([]byte, int, error) {
	limit := r.cfg.MaxBodyBytes
	if req.ContentLength > limit {
		r.drain(req, req.ContentLength)
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is %d bytes, over the receiver's %d ([otlp] max_body_bytes)", req.ContentLength, limit)
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, http.StatusRequestTimeout, fmt.Errorf("the body did not arrive within %s ([otlp] body_timeout); %d bytes came", r.cfg.BodyTimeout, len(raw))
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("read the body: %w", err)
	}
	if int64(len(raw)) > limit {
		r.drain(req, -1)
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is over the receiver's %d bytes ([otlp] max_body_bytes)", limit)
	}
	var dec io.Reader
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return raw, 0, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip: %w", err)
		}
		dec = zr
	case "zstd":
		// Bound the window and the decoder's memory: a tiny frame may declare a 512 MB window.
		zr, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(uint64(max(limit, 1<<20))), zstd.WithDecoderMaxMemory(uint64(limit)))
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("zstd: %w", err)
		}
		defer zr.Close()
		dec = zr
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("content encoding %q: want gzip, zstd or none", enc)
	}
	body, err := io.ReadAll(io.LimitReader(dec, limit+1))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("decompress the body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the decompressed body is over the receiver's %d bytes", limit)
	}
	return body, 0, nil
}

// drain reads and discards what is left of an oversized body (n bytes, -1 when unknown), at most
// drainBytes of it and within the body's deadline, so that the 413 reaches the exporter. Most
// exporters send their whole body before they read the answer; a server that closes with the body
// unread resets the connection, and the exporter sees a broken pipe or a reset instead of the
// 413. A client that waits for 100 Continue has sent nothing yet, and is answered at once.
func (r *Receiver) drain(req *http.Request, n int64) {
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		return
	}
	bound := r.drainBytes()
	if n > bound {
		return // too much to read: the answer goes out at once, the connection is closed
	}
	io.Copy(io.Discard, io.LimitReader(req.Body, bound))
}

// drainBytes is the most of an oversized body drain reads: four times the limit, at least
// minDrainBytes.
func (r *Receiver) drainBytes() int64 { return max(4*r.cfg.MaxBodyBytes, minDrainBytes) }

func (r *Receiver) fail(w http.ResponseWriter, status int, format string, args ...any) {
	r.stats.rejected.Add(1)
	msg := fmt.Sprintf(format, args...)
	r.logger.Warn("otlp: rejected an export", "status", status, "err", msg)
	http.Error(w, msg, status)
}
