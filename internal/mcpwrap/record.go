package mcpwrap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
)

// maxPayloadText bounds each of the arguments and result a raw-payload Call keeps.
const maxPayloadText = 16 << 10

// Call is one tools/call as the trace tools show it.
type Call struct {
	Seq           int64     `json:"seq"`
	Time          time.Time `json:"time"`
	Tool          string    `json:"tool"`
	RequestID     string    `json:"request_id,omitempty"`
	DurationMs    float64   `json:"duration_ms"`
	InputBytes    int64     `json:"input_bytes"`
	OutputBytes   int64     `json:"output_bytes"`
	InputHash     string    `json:"input_hash,omitempty"`
	OutputHash    string    `json:"output_hash,omitempty"`
	Error         string    `json:"error,omitempty"`
	TokenEstimate int64     `json:"token_estimate"`
	ReplayOf      int64     `json:"replay_of,omitempty"` // the seq a replay re-sent
	// Input and Output are the redacted arguments and result, with raw payloads on only.
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`

	args json.RawMessage // the raw arguments, up to MaxReplayBytes, for replay; never shown
}

// hash is the hex SHA-256 of b, cut to 16 characters like the input hashes of transcript actions;
// empty for no bytes.
func hash(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// tokenEstimate is what a result costs the agent's context, at four bytes a token.
func tokenEstimate(n int) int64 { return int64(n+3) / 4 }

// record keeps a finished tools/call for the trace tools and queues its event. m is the server's
// answer (nil when the proxy answered: timeout, exit, cancel), errText the proxy's error then.
func (p *Proxy) record(c *call, m *jsonrpc.Response, errText string, d time.Duration) *Call {
	var result json.RawMessage
	if m != nil {
		if m.Error != nil {
			errText = m.Error.Error()
		} else {
			result = m.Result
			errText = toolError(result)
		}
	}
	rc := &Call{
		Seq: p.seq.Add(1), Time: c.start.UTC(), Tool: c.tool, RequestID: idString(c.id),
		DurationMs:  float64(d.Microseconds()) / 1000,
		InputBytes:  int64(len(c.args)),
		OutputBytes: int64(len(result)),
		InputHash:   hash(c.args), OutputHash: hash(result),
		Error: p.redact(errText), TokenEstimate: tokenEstimate(len(result)),
		ReplayOf: c.replayOf,
	}
	if len(c.args) <= MaxReplayBytes {
		rc.args = c.args
	}
	if p.opts.RawPayloads {
		rc.Input, rc.Output = p.payloadText(c.args), p.payloadText(result)
	}
	p.hist.add(rc)

	p.mu.Lock()
	client, server := p.client, p.server
	p.mu.Unlock()
	ev := event.New(event.KindMCPCall, Source)
	ev.ID = event.ID(Source, p.instance, strconv.FormatInt(rc.Seq, 10))
	ev.Time = rc.Time
	ev.Client, ev.SessionID, ev.Project = client, p.opts.SessionID, p.opts.Project
	ev.Host, ev.User = p.opts.Host, p.opts.User
	ev.MCPCall = &event.MCPCall{Server: server, Tool: rc.Tool, RequestID: rc.RequestID,
		InputBytes: rc.InputBytes, OutputBytes: rc.OutputBytes, InputHash: rc.InputHash, OutputHash: rc.OutputHash,
		DurationMs: rc.DurationMs, Error: rc.Error, TokenEstimate: rc.TokenEstimate}
	p.rec.add(ev)
	p.log.Debug("tools/call", "tool", rc.Tool, "ms", rc.DurationMs, "in", rc.InputBytes, "out", rc.OutputBytes, "error", rc.Error)
	return rc
}

// toolError returns the text of a result that reports a tool error (isError), else "".
func toolError(result json.RawMessage) string {
	if !bytes.Contains(result, []byte(`"isError"`)) {
		return ""
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError {
		return ""
	}
	msg := "tool error"
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != "" {
			msg += ": " + c.Text
			break
		}
	}
	// Scrubbed whole before the cut: a secret the cut split would no longer be recognized.
	msg = scrub.String(msg)
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return msg
}

func idString(id jsonrpc.ID) string {
	if !id.IsValid() {
		return ""
	}
	return fmt.Sprint(id.Raw())
}

// redact removes secrets and the configured patterns from s.
func (p *Proxy) redact(s string) string {
	if s == "" {
		return s
	}
	s = scrub.String(s)
	for _, re := range p.opts.Redact {
		s = re.ReplaceAllString(s, "[REDACTED]")
	}
	return s
}

func (p *Proxy) payloadText(b []byte) string {
	s := string(b)
	if len(s) > maxPayloadText {
		s = s[:maxPayloadText] + fmt.Sprintf("…[%d more bytes]", len(b)-maxPayloadText)
	}
	return p.redact(s)
}

// history keeps the last calls of this process, oldest first.
type history struct {
	mu    sync.Mutex
	max   int
	calls []*Call
}

func newHistory(max int) *history { return &history{max: max} }

func (h *history) add(c *Call) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	if len(h.calls) > h.max {
		h.calls = append(h.calls[:0:0], h.calls[len(h.calls)-h.max:]...)
	}
}

// snapshot returns the kept calls, oldest first. Calls are never changed once added.
func (h *history) snapshot() []*Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Call(nil), h.calls...)
}

func (h *history) get(seq int64) *Call {
	for _, c := range h.snapshot() {
		if c.Seq == seq {
			return c
		}
	}
	return nil
}

// recorder publishes events from a queue on one goroutine, so that the relay never waits on the
// bus. The bus client spools what the bus cannot take.
type recorder struct {
	pub     Publisher
	log     *slog.Logger
	mu      sync.Mutex
	closed  bool
	q       chan event.Event
	done    chan struct{}
	dropped atomic.Int64
}

func newRecorder(pub Publisher, logger *slog.Logger) *recorder {
	return &recorder{pub: pub, log: logger, q: make(chan event.Event, queueSize), done: make(chan struct{})}
}

func (r *recorder) start() {
	go func() {
		defer close(r.done)
		for ev := range r.q {
			if r.pub == nil {
				continue
			}
			if res, err := r.pub.Publish(context.Background(), &ev); err != nil {
				r.log.Warn("mcp_call event lost", "tool", ev.MCPCall.Tool, "err", err)
			} else if res == bus.Spooled {
				r.log.Debug("mcp_call event spooled", "tool", ev.MCPCall.Tool)
			}
		}
	}()
}

// add queues an event, or drops it when the queue is full or closed.
func (r *recorder) add(ev event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	select {
	case r.q <- ev:
	default:
		if r.dropped.Add(1)%100 == 1 {
			r.log.Warn("bus too slow; mcp_call events dropped", "dropped", r.dropped.Load())
		}
	}
}

// close stops taking events and waits, at most d, for the queued ones to be published or spooled.
func (r *recorder) close(d time.Duration) {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.q)
	}
	r.mu.Unlock()
	select {
	case <-r.done:
	case <-time.After(d):
		r.log.Warn("events still queued at exit were not published", "queued", len(r.q))
	}
}
