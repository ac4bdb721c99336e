package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message. A client sends this server small messages only (the
// largest are tool calls, whose string arguments argLimits bounds to a few KB), so a longer line
// is refused without being held: the guard reads it through to its end keeping only its id
// (idFinder), never the SDK's 16 MB, which it would decode three times over.
const maxLine = 1 << 20

// drainGrace bounds the wait, once stdin has ended, for the answers to the requests already
// read; the tools answer in milliseconds.
const drainGrace = 10 * time.Second

// A guard is the transport Serve runs the SDK on: newline-delimited JSON-RPC over stdin and
// stdout, where every inbound line is checked before the SDK sees it, since the SDK's stdio
// transport ends the whole session, without a reply, on a line it cannot take. The guard answers
// such a line itself and the session goes on:
//
//   - -32700 for a line that is not JSON;
//   - -32600 for JSON that is not a JSON-RPC message, a message with an id but neither a method
//     nor a result or error, a request whose id is that of a request still in progress, a line
//     over maxLine bytes, and any batch (a JSON array: MCP 2025-06-18 removed JSON-RPC batching,
//     and the SDK ends the session on one);
//
// each with the line's id when it has a string or number one, else a null id.
//
// It also keeps the ids of the requests it passed on until their answers go out, so that when
// stdin ends it ends the session only once those are answered (or after drainGrace, or once
// stdout fails): the SDK, told of the end at once, would drop them.
//
// The SDK writes each outbound message with a single Write; the guard's replies share a mutex
// with it, so lines never interleave.
type guard struct {
	in   io.Reader
	pr   *io.PipeReader
	pw   *io.PipeWriter
	out  *replyWriter
	done chan struct{} // closed by stop, when the session is over
	once sync.Once
}

func newGuard(in io.Reader, out io.Writer) *guard {
	pr, pw := io.Pipe()
	g := &guard{in: in, pr: pr, pw: pw, done: make(chan struct{}),
		out: &replyWriter{w: out, pending: map[jsonrpc.ID]bool{}, changed: make(chan struct{}, 1)}}
	go g.pump()
	return g
}

func (g *guard) transport() mcp.Transport { return &mcp.IOTransport{Reader: g.pr, Writer: g.out} }

// stop ends a wait for answers: the session is over.
func (g *guard) stop() { g.once.Do(func() { close(g.done) }) }

// pump copies the valid lines of in to the SDK, answers the others, and, when in ends, closes the
// SDK's input once the requests read are answered. It returns early when the SDK closed its side
// or stdout failed.
func (g *guard) pump() {
	r := bufio.NewReaderSize(g.in, 64<<10)
	for {
		line, id, tooLong, err := readLine(r)
		switch {
		case tooLong:
			if !g.reply(errorReply(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message longer than %d bytes", maxLine))) {
				return
			}
		case len(line) > 0:
			if !g.pass(line) {
				return
			}
		}
		if err != nil {
			g.out.drain(drainGrace, g.done)
			g.pw.Close()
			return
		}
	}
}

// pass hands a line to the SDK, or answers it; false when the session is over.
func (g *guard) pass(line []byte) bool {
	msg, reply := check(line)
	if req, ok := msg.(*jsonrpc.Request); ok && reply == nil {
		switch {
		case req.IsCall() && !g.out.track(req.ID):
			reply = errorReply(idJSON(req.ID), jsonrpc.CodeInvalidRequest, "invalid request: the id is that of a request still in progress")
		case req.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					g.out.untrack(id) // the SDK may not answer it
				}
			}
		}
	}
	if reply != nil {
		return g.reply(reply)
	}
	_, err := g.pw.Write(append(line, '\n'))
	return err == nil
}

// reply writes one of the guard's own replies; false when stdout failed, which ends the session.
func (g *guard) reply(b []byte) bool {
	if err := g.out.writeReply(b); err != nil {
		g.pw.CloseWithError(err)
		return false
	}
	return true
}

// readLine returns the next line without its line ending and surrounding space. A line longer
// than maxLine is read to its end without being kept, and reported as tooLong with its id (nil
// when it has none).
func readLine(r *bufio.Reader) (line []byte, id json.RawMessage, tooLong bool, err error) {
	var buf []byte
	var f idFinder
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong && len(buf)+len(chunk) > maxLine {
			tooLong = true
			f.feed(buf)
			buf = nil
		}
		switch {
		case tooLong:
			f.feed(chunk)
		case cap(buf)-len(buf) < len(chunk):
			// Grow by doubling up to maxLine (append would grow a long line by a quarter at a
			// time, allocating five times its size).
			nb := make([]byte, len(buf), min(max(2*cap(buf), len(buf)+len(chunk)), maxLine))
			buf = append(nb[:copy(nb, buf)], chunk...)
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, f.id, true, err
		}
		return bytes.TrimSpace(buf), nil, false, err
	}
}

// check decodes a line. It returns the message when the SDK can take it, else the error reply
// the guard sends instead.
func check(line []byte) (jsonrpc.Message, []byte) {
	if !json.Valid(line) {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	if line[0] == '[' {
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest,
			"invalid request: batches are not supported (MCP 2025-06-18 removed JSON-RPC batching): send one message per line")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &probe)
		return nil, errorReply(validID(probe.ID), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.Result == nil && r.Error == nil {
		return nil, errorReply(idJSON(r.ID), jsonrpc.CodeInvalidRequest,
			"invalid request: a message with an id needs a method (a request), or a result or an error (a response)")
	}
	return msg, nil
}

// validID returns id when it is a JSON string or number, the ids JSON-RPC allows; else nil,
// which replies carry as a null id.
func validID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || !json.Valid(id) || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return nil
	}
	return id
}

func idJSON(id jsonrpc.ID) json.RawMessage {
	if !id.IsValid() {
		return nil
	}
	b, _ := json.Marshal(id.Raw())
	return b
}

func errorReply(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// A replyWriter is the transport's output: it serializes the SDK's writes and the guard's, and
// keeps the ids of the requests in progress (passed to the SDK, not answered yet).
type replyWriter struct {
	mu      sync.Mutex
	w       io.Writer
	err     error // the first write error: nothing more can be answered
	pending map[jsonrpc.ID]bool
	changed chan struct{} // signalled when pending shrinks or err is set
}

// Write writes one message of the SDK's, and notes the answer to a request in progress.
func (o *replyWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
		o.signal()
	}
	if len(o.pending) > 0 {
		if msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
			if r, ok := msg.(*jsonrpc.Response); ok && o.pending[r.ID] {
				delete(o.pending, r.ID)
				o.signal()
			}
		}
	}
	return n, err
}

// writeReply writes one of the guard's replies, which answer no request in progress.
func (o *replyWriter) writeReply(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
		o.signal()
	}
	return err
}

// Close leaves the process's stdout open: the SDK closes its transport at the end of a session.
func (o *replyWriter) Close() error { return nil }

// track notes a request passed to the SDK; false when its id is that of one in progress.
func (o *replyWriter) track(id jsonrpc.ID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending[id] {
		return false
	}
	o.pending[id] = true
	return true
}

func (o *replyWriter) untrack(id jsonrpc.ID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.pending, id)
	o.signal()
}

func (o *replyWriter) signal() {
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

// drain waits until every request in progress is answered, stdout failed, grace passed or done
// is closed.
func (o *replyWriter) drain(grace time.Duration, done <-chan struct{}) {
	t := time.NewTimer(grace)
	defer t.Stop()
	for {
		o.mu.Lock()
		idle := len(o.pending) == 0 || o.err != nil
		o.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-o.changed:
		case <-t.C:
			return
		case <-done:
			return
		}
	}
}

// An idFinder picks the top-level "id" member out of a JSON object fed to it in pieces, keeping
// a few bytes whatever the object's size: it follows strings (with their escapes) and nesting,
// reads each top-level key, and keeps the value of "id" when it is short.
type idFinder struct {
	id json.RawMessage // the id found (the last, as encoding/json would take), or nil

	depth     int
	object    bool // the outermost value is an object
	inString  bool
	escaped   bool
	inKey     bool    // the string being read is a top-level key
	key       [2]byte // its first bytes
	keyLen    int
	expectKey bool // a top-level key comes next
	inID      bool // reading the value of "id"
	val       []byte
	valTooBig bool
}

// maxIDBytes bounds the id an over-long line is answered with; longer ones are answered null.
const maxIDBytes = 128

func (f *idFinder) feed(p []byte) {
	for _, c := range p {
		if f.inString {
			switch {
			case f.escaped:
				f.escaped = false
			case c == '\\':
				f.escaped = true
			case c == '"':
				f.inString = false
			}
			switch {
			case f.inKey && f.inString:
				if f.keyLen < len(f.key) {
					f.key[f.keyLen] = c
				}
				f.keyLen++
			case f.inKey:
				f.inKey = false
			case f.inID:
				f.keep(c)
			}
			continue
		}
		top := f.depth == 1 && f.object
		switch c {
		case '"':
			f.inString = true
			if top && f.expectKey {
				f.inKey, f.keyLen, f.expectKey = true, 0, false
			} else if f.inID {
				f.keep(c)
			}
		case '{', '[':
			if f.depth == 0 {
				f.object, f.expectKey = c == '{', c == '{'
			} else if f.inID {
				f.keep(c)
			}
			f.depth++
		case '}', ']':
			if top && f.inID {
				f.endID()
			} else if f.inID {
				f.keep(c)
			}
			f.depth--
		case ':':
			if top {
				f.inID = f.keyLen == 2 && f.key == [2]byte{'i', 'd'}
				f.val, f.valTooBig = f.val[:0], false
			} else if f.inID {
				f.keep(c)
			}
		case ',':
			if top {
				if f.inID {
					f.endID()
				}
				f.expectKey = true
			} else if f.inID {
				f.keep(c)
			}
		case ' ', '\t', '\r', '\n':
		default:
			if f.inID {
				f.keep(c)
			}
		}
	}
}

func (f *idFinder) keep(c byte) {
	if len(f.val) < maxIDBytes {
		f.val = append(f.val, c)
	} else {
		f.valTooBig = true
	}
}

func (f *idFinder) endID() {
	f.inID = false
	if !f.valTooBig {
		f.id = validID(bytes.Clone(f.val))
	}
}
