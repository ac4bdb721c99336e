package mcpwrap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
)

// Error codes of the errors the proxy makes itself, beside the JSON-RPC standard ones.
const (
	// CodeServerGone answers requests the wrapped server can no longer answer: it exited, crashed or
	// closed its output.
	CodeServerGone = -32000
	// CodeTimeout answers a request the wrapped server did not answer within CallTimeout.
	CodeTimeout = -32001
)

// Defaults for the zero values of Options.
const (
	DefaultCallTimeout = 120 * time.Second
	DefaultHistory     = 1000
	// MaxClientLine is the longest line accepted from the client; a longer one is answered with a
	// parse error and skipped, so a client cannot make the proxy hold unbounded memory.
	MaxClientLine = 64 << 20
	// MaxReplayBytes is the largest argument object kept in memory for observer_trace_replay.
	MaxReplayBytes = 64 << 10
	// queueSize bounds the events waiting for the bus; beyond it events are dropped, never waited for.
	queueSize = 4096
)

// Source is the envelope's source component of the events the proxy publishes.
const Source = "observer-mcp"

// Publisher takes the mcp_call events; *bus.Client is one.
type Publisher interface {
	Publish(ctx context.Context, ev *event.Event) (bus.Result, error)
}

// Options configures a Proxy.
type Options struct {
	Command []string // the server's command line; Command[0] is looked up in PATH
	Env     []string // the server's environment; nil inherits this process's
	Dir     string   // the server's working directory; empty inherits this process's

	// Name is the server's name in the events; empty takes the serverInfo.name of its initialize
	// answer, else the base name of Command[0].
	Name        string
	Hide        []string         // tool names removed from tools/list and refused in tools/call
	MaxTools    int              // most server tools listed (in the server's order); 0 lists all
	CallTimeout time.Duration    // longest wait for an answer; 0 means DefaultCallTimeout
	RawPayloads bool             // trace tools return (redacted) arguments and results
	Redact      []*regexp.Regexp // applied, after scrub.String, to whatever is kept beyond hashes
	History     int              // calls the trace tools remember; 0 means DefaultHistory

	SessionID, Project, Host, User string // envelope fields of the events

	Publisher Publisher    // nil: calls are only kept for the trace tools
	Logger    *slog.Logger // nil: silent
	Stderr    io.Writer    // receives the server's stderr; nil discards it
	// StopGrace is how long the server gets to exit after its input is closed, and again after
	// SIGTERM, before it is killed. 0 means 2s.
	StopGrace time.Duration
}

// Proxy relays one client's session to one wrapped server. A Proxy runs once.
type Proxy struct {
	opts     Options
	log      *slog.Logger
	hide     map[string]bool
	instance string // distinguishes this process's event ids and its own request ids

	toClient *lineWriter
	toServer *lineWriter

	mu        sync.Mutex
	pending   map[jsonrpc.ID]*call
	abandoned map[jsonrpc.ID]bool // answered by the proxy already (timeout, cancel): drop late answers
	goneErr   string              // set once the server is gone
	client    string              // from initialize
	server    string              // from initialize, unless Options.Name
	noTools   bool                // the server declared no tools capability
	listed    int                 // server tools shown so far in the current tools/list pagination
	capped    map[string]bool     // server tools cut by MaxTools
	serverSet map[string]bool     // names the server listed: they win over trace tools

	hist     *history
	rec      *recorder
	seq      atomic.Int64
	ownSeq   atomic.Int64
	stderr   tail
	stopping atomic.Bool   // the proxy is stopping the server: its exit is expected
	writeKO  chan struct{} // closed when a write to the client fails: it is gone
	koOnce   sync.Once
	wg       sync.WaitGroup // trace tool handlers in flight
}

// call is a request forwarded to the server and not answered yet.
type call struct {
	id       jsonrpc.ID
	method   string
	start    time.Time
	timer    *time.Timer
	progress string // the request's progress token, "" when none

	// tools/call
	tool string
	args json.RawMessage

	cursor   bool  // tools/list with a cursor: a later page
	replayOf int64 // the seq a replay re-sends

	// own is set for the proxy's own requests (replay): the answer goes there, not to the client.
	own chan *jsonrpc.Response
}

// New checks opts and returns a Proxy ready to Run.
func New(opts Options) (*Proxy, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return nil, errors.New("no server command: usage is observer-mcp wrap -- CMD [ARGS...]")
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{
		opts: opts, log: logger, hide: map[string]bool{}, instance: event.RandomID()[:12],
		pending: map[jsonrpc.ID]*call{}, abandoned: map[jsonrpc.ID]bool{}, capped: map[string]bool{},
		serverSet: map[string]bool{}, server: opts.Name,
		hist: newHistory(opts.History), writeKO: make(chan struct{}),
	}
	for _, h := range opts.Hide {
		p.hide[h] = true
	}
	p.rec = newRecorder(opts.Publisher, logger)
	return p, nil
}

// Run starts the server and relays until the client closes its input (then it waits for the answers
// still owed, each bounded by CallTimeout), the client stops reading, or ctx ends. It then stops the
// server (input closed, then SIGTERM, then SIGKILL, StopGrace apart) and publishes the events still
// queued. It fails only when the server cannot be started.
func (p *Proxy) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	cmd := exec.Command(p.opts.Command[0], p.opts.Command[1:]...)
	cmd.Env, cmd.Dir = p.opts.Env, p.opts.Dir
	cmd.Stderr = io.MultiWriter(p.opts.Stderr, &p.stderr)
	// A grandchild holding stderr open must not keep Wait from reporting the exit.
	cmd.WaitDelay = time.Second
	// Its own process group, so that stopping it reaches what it started (npx starts node).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	// The server's output is a pipe of our own rather than cmd.StdoutPipe, so that Wait, which can
	// then run as soon as the process exits, never closes it before its last lines are read.
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("start the MCP server %q: %w", p.opts.Command[0], err)
	}
	outW.Close()
	if p.server == "" {
		p.server = filepath.Base(p.opts.Command[0])
	}
	// A server's command line often carries its token (--api-key ..., a URL with a password).
	p.log.Info("wrapping an MCP server", "command", scrub.String(strings.Join(p.opts.Command, " ")), "pid", cmd.Process.Pid)
	p.toClient = &lineWriter{w: out, onError: p.clientGone}
	p.toServer = &lineWriter{w: stdin}
	p.rec.start()

	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	eof := make(chan struct{})
	go func() { p.readServer(outR); outR.Close(); close(eof) }()
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		// Gone at the end of its output or at its exit, whichever first; the other gets a moment,
		// so that the answers it wrote just before exiting are relayed first and the error can
		// name the exit status.
		select {
		case <-eof:
			select {
			case <-exited:
			case <-time.After(time.Second):
			}
		case <-exited:
			select {
			case <-eof:
			case <-time.After(time.Second):
			}
		}
		p.serverGone(p.goneMessage(exited, waitErr))
	}()

	clientDone := make(chan struct{})
	go func() { p.readClient(in); close(clientDone) }()
	select {
	case <-ctx.Done():
	case <-p.writeKO:
	case <-clientDone:
		p.waitPending(ctx)
	}
	p.stopServer(cmd, stdin, exited)
	<-serverDone
	p.wg.Wait()
	p.rec.close(10 * time.Second)
	p.log.Info("wrap stopped", "calls", p.seq.Load())
	return nil
}

// waitPending waits until no request is owed an answer. Each one ends by its answer, its timeout or
// the server's exit, so the wait is bounded; polling keeps the pending map free of a condition.
func (p *Proxy) waitPending(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		p.mu.Lock()
		n := len(p.pending)
		p.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-p.writeKO:
			return
		case <-t.C:
		}
	}
}

// stopServer closes the server's input, then signals its process group with SIGTERM, then SIGKILL,
// StopGrace apart.
func (p *Proxy) stopServer(cmd *exec.Cmd, stdin io.Closer, exited <-chan struct{}) {
	p.stopping.Store(true)
	stdin.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-exited:
			return
		case <-time.After(p.opts.StopGrace):
		}
		p.log.Warn("the MCP server did not exit; signalling it", "signal", sig.String())
		if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
			cmd.Process.Signal(sig)
		}
	}
	<-exited
}

func (p *Proxy) clientGone(err error) {
	p.koOnce.Do(func() {
		p.log.Info("the client stopped reading; stopping", "err", err)
		close(p.writeKO)
	})
}

// goneMessage says why the server is gone, for the errors the client gets.
func (p *Proxy) goneMessage(exited <-chan struct{}, waitErr error) string {
	msg := fmt.Sprintf("MCP server %s closed its output", p.serverName())
	select {
	case <-exited:
		status := "exited"
		if waitErr != nil {
			status = waitErr.Error()
		}
		msg = fmt.Sprintf("MCP server %s is gone (%s)", p.serverName(), status)
	default:
	}
	if last := p.stderr.lastLine(); last != "" {
		msg += "; its last stderr line: " + p.redact(last)
	}
	return msg + "; restart the client's MCP connection to start it again"
}

func (p *Proxy) serverName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.server
}

// readClient relays the client's lines until its input ends.
func (p *Proxy) readClient(in io.Reader) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, MaxClientLine)
		if tooLong {
			p.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("message longer than %d bytes", MaxClientLine))
		} else if len(bytes.TrimSpace(line)) > 0 {
			p.fromClient(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.log.Warn("read from the client", "err", err)
			}
			return
		}
	}
}

// readServer relays the server's lines until its output ends.
func (p *Proxy) readServer(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		line, _, err := readLine(r, 0)
		if len(line) > 0 {
			p.fromServer(line)
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line without its "\n". With max > 0, a longer line is read to its end,
// dropped, and reported as tooLong.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if max > 0 && len(line)+len(frag) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		return line, false, err
	}
}

// fromClient handles one line from the client.
func (p *Proxy) fromClient(line []byte) {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if !json.Valid(line) {
			p.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: the message is not JSON")
		} else {
			p.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message ("+err.Error()+")")
		}
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		p.forward(line) // the client's answer to a request of the server's
	case *jsonrpc.Request:
		if !m.IsCall() {
			if m.Method == "notifications/cancelled" {
				p.cancelled(m.Params)
			}
			p.forward(line)
			return
		}
		p.request(m, line)
	}
}

// forward writes a line to the server, unless it is gone: a notification or answer for a server
// that is gone has nobody to go to.
func (p *Proxy) forward(line []byte) {
	p.mu.Lock()
	gone := p.goneErr != ""
	p.mu.Unlock()
	if !gone {
		p.toServer.write(line)
	}
}

type toolCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken any `json:"progressToken"`
	} `json:"_meta"`
}

type initializeParams struct {
	ClientInfo struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
}

// request handles a request from the client.
func (p *Proxy) request(m *jsonrpc.Request, line []byte) {
	c := &call{id: m.ID, method: m.Method, start: time.Now()}
	var meta struct {
		Cursor *string `json:"cursor"`
		Meta   struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(m.Params, &meta)
	c.progress = tokenKey(meta.Meta.ProgressToken)
	switch m.Method {
	case "initialize":
		var ip initializeParams
		json.Unmarshal(m.Params, &ip)
		p.mu.Lock()
		p.client = ClientName(ip.ClientInfo.Name)
		p.mu.Unlock()
	case "tools/list":
		c.cursor = meta.Cursor != nil && *meta.Cursor != ""
		if p.answersToolsList() {
			p.respond(m.ID, p.ownToolsList(c.cursor))
			return
		}
	case "tools/call":
		var tp toolCallParams
		json.Unmarshal(m.Params, &tp)
		c.tool, c.args = tp.Name, tp.Arguments
		if p.refused(tp.Name) {
			p.reply(m.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("unknown tool %q: it is hidden by observer-mcp wrap", tp.Name))
			return
		}
		if p.isTraceCall(tp.Name) {
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.traceCall(m.ID, tp.Name, tp.Arguments)
			}()
			return
		}
	}
	if code, msg := p.track(c); code != 0 {
		p.reply(m.ID, code, msg)
		return
	}
	if err := p.toServer.write(line); err != nil {
		// The server stopped reading: it is exiting. Its exit will answer this request; if it
		// lingers, the timeout will.
		p.log.Debug("write to the server", "err", err)
	}
}

// track registers a request as pending and starts its timer. It returns an error code and message
// when the request cannot be forwarded.
func (p *Proxy) track(c *call) (int64, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.goneErr != "" {
		return CodeServerGone, p.goneErr
	}
	if _, dup := p.pending[c.id]; dup {
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %v is already in use by a pending request", c.id.Raw())
	}
	p.pending[c.id] = c
	c.timer = time.AfterFunc(p.opts.CallTimeout, func() { p.expire(c) })
	return 0, ""
}

// take removes a pending request; nil when it is not (or no longer) pending.
func (p *Proxy) take(id jsonrpc.ID) *call {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.pending[id]
	if c != nil {
		delete(p.pending, id)
		c.timer.Stop()
	}
	return c
}

// abandon takes a pending request the proxy answers itself, and remembers its id so that a late
// answer from the server is dropped.
func (p *Proxy) abandon(id jsonrpc.ID) *call {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.pending[id]
	if c == nil {
		return nil
	}
	delete(p.pending, id)
	c.timer.Stop()
	if len(p.abandoned) >= 10000 { // a server that never answers late must not grow this forever
		clear(p.abandoned)
	}
	p.abandoned[id] = true
	return c
}

// expire answers a request the server did not answer in time, and tells the server to stop.
func (p *Proxy) expire(c *call) {
	if p.abandon(c.id) != c {
		return
	}
	msg := fmt.Sprintf("MCP server %s did not answer %s within %v (observer-mcp wrap [mcp] call_timeout)",
		p.serverName(), c.method, p.opts.CallTimeout)
	p.log.Warn("request timed out", "method", c.method, "tool", c.tool, "id", c.id.Raw(), "after", p.opts.CallTimeout)
	p.fail(c, CodeTimeout, msg)
	if cancel, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": c.id.Raw(), "reason": "timed out in observer-mcp wrap"}}); err == nil {
		p.forward(cancel)
	}
}

// cancelled drops a request the client cancelled: the server need not answer it, and the client
// ignores an answer that comes anyway.
func (p *Proxy) cancelled(params json.RawMessage) {
	var cp struct {
		RequestID any `json:"requestId"`
	}
	json.Unmarshal(params, &cp)
	id, err := jsonrpc.MakeID(cp.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	if c := p.abandon(id); c != nil && c.method == "tools/call" && c.own == nil {
		p.record(c, nil, "cancelled by the client", time.Since(c.start))
	}
}

// fail answers a request with an error, and records it when it was a tools/call.
func (p *Proxy) fail(c *call, code int64, msg string) {
	resp := &jsonrpc.Response{ID: c.id, Error: &jsonrpc.Error{Code: code, Message: msg}}
	if c.own != nil {
		c.own <- resp
		return
	}
	if c.method == "tools/call" {
		p.record(c, nil, msg, time.Since(c.start))
	}
	p.writeResponse(resp)
}

// serverGone answers every pending request with msg, and every later one.
func (p *Proxy) serverGone(msg string) {
	p.mu.Lock()
	p.goneErr = msg
	calls := make([]*call, 0, len(p.pending))
	for id, c := range p.pending {
		c.timer.Stop()
		calls = append(calls, c)
		p.abandoned[id] = true
		delete(p.pending, id)
	}
	p.mu.Unlock()
	if p.stopping.Load() {
		p.log.Info("the MCP server stopped", "status", msg)
	} else {
		p.log.Warn("the MCP server is gone", "reason", msg, "pending", len(calls))
	}
	for _, c := range calls {
		p.fail(c, CodeServerGone, msg)
	}
}

// fromServer handles one line from the server.
func (p *Proxy) fromServer(line []byte) {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		p.toClient.write(line)
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" {
			p.progress(m.Params)
		}
		p.toClient.write(line)
	case *jsonrpc.Response:
		c := p.take(m.ID)
		if c == nil {
			p.mu.Lock()
			late := p.abandoned[m.ID]
			delete(p.abandoned, m.ID)
			p.mu.Unlock()
			if !late {
				p.toClient.write(line) // not ours to judge
			}
			return
		}
		if c.own != nil {
			c.own <- m
			return
		}
		switch c.method {
		case "initialize":
			line = p.onInitialize(m, line)
		case "tools/list":
			line = p.onToolsList(c, m, line)
		}
		// Recorded before the client has the answer, so that a trace tool called right after it
		// sees the call.
		if c.method == "tools/call" {
			p.record(c, m, "", time.Since(c.start))
		}
		p.toClient.write(line)
	}
}

// progress restarts the timer of the request a progress notification is about: a server that
// reports progress is still working on it.
func (p *Proxy) progress(params json.RawMessage) {
	var pp struct {
		ProgressToken any `json:"progressToken"`
	}
	json.Unmarshal(params, &pp)
	key := tokenKey(pp.ProgressToken)
	if key == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pending {
		if c.progress == key {
			c.timer.Reset(p.opts.CallTimeout)
		}
	}
}

func tokenKey(v any) string {
	switch v.(type) {
	case string, float64:
		return fmt.Sprint(v)
	}
	return ""
}

// respond answers a request of the client's with a result.
func (p *Proxy) respond(id jsonrpc.ID, result any) {
	raw, err := json.Marshal(result)
	if err != nil {
		p.reply(id, jsonrpc.CodeInternalError, "observer-mcp wrap: "+err.Error())
		return
	}
	p.writeResponse(&jsonrpc.Response{ID: id, Result: raw})
}

// reply answers the client with an error; an invalid id is written as null.
func (p *Proxy) reply(id jsonrpc.ID, code int64, msg string) {
	p.writeResponse(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
}

func (p *Proxy) writeResponse(resp *jsonrpc.Response) {
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		p.log.Error("encode a response", "err", err)
		return
	}
	if !resp.ID.IsValid() {
		// EncodeMessage leaves out a missing id; JSON-RPC wants "id": null on errors about
		// messages whose id could not be read.
		data = append(data[:len(data)-1], `,"id":null}`...)
	}
	p.toClient.write(data)
}

// lineWriter writes whole lines to one side; the mutex is held for one line.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	failed  bool
	onError func(error)
}

func (l *lineWriter) write(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed {
		return io.ErrClosedPipe
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := l.w.Write(buf); err != nil {
		l.failed = true
		if l.onError != nil {
			l.onError(err)
		}
		return err
	}
	return nil
}

// tail keeps the end of the server's stderr, for the error that reports its exit.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

// lastLine returns the last non-blank line, at most 300 bytes of it.
func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	last := string(bytes.TrimSpace(lines[len(lines)-1]))
	if len(last) > 300 {
		last = last[:300] + "…"
	}
	return last
}
