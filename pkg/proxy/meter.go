package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// maxJSONCopy bounds the copy of a non-streaming body kept for reading its usage.
const maxJSONCopy = 64 << 20

// meter wraps an upstream response body. The client reads exactly the upstream's bytes (except
// the usage-only chat chunk the proxy itself asked for); a copy, decompressed where needed, is
// parsed for usage as it passes. When the body ends, or the client goes away, done is called once.
//
// A held meter (hold, for a body of known length when the proxy journals) runs done inside the
// Read that ends the body, before that Read returns: the bytes it read, the body's last, reach the
// client only after the turn is recorded. Nothing else is held back, and no byte is copied aside.
type meter struct {
	body     io.ReadCloser
	provider string
	format   bodyFormat
	filter   bool // drop usage-only chat chunks from what the client reads

	usage    turnUsage
	sse      sseSplitter
	arr      arraySplitter
	jsonCopy bytes.Buffer
	tooBig   bool
	lag      []byte // read but not yet parsed

	// compressed bodies: bytes go through a pipe to a decoder goroutine
	pw      *io.PipeWriter
	decoded chan struct{}

	// filter mode: output waiting to be read, and the raw bytes of the event being read
	pending []byte
	raw     []byte
	rbuf    []byte // what the upstream's bytes are read into (from copyBuffers, back on Close)

	firstByte time.Time
	bytesOut  int64
	eof       bool
	readErr   error
	once      sync.Once
	ctx       context.Context // the client's request
	done      func(m *meter, reason endReason, clientGone bool)
	// later runs the end of the body's work (reading the usage, done); nil runs it in a goroutine.
	later func(func())
	// hold makes the Read that ends the body run done before it returns; remaining is what is
	// left of the body's known length. early is set when done runs so, before the client has the
	// body's last bytes.
	hold      bool
	remaining int64
	early     bool
}

// bodyFormat is how a response body is read for usage.
type bodyFormat int

const (
	formatJSON      bodyFormat = iota // one JSON value, parsed when it ends
	formatSSE                         // server-sent events, parsed one by one
	formatJSONArray                   // a JSON array streamed element by element (Gemini without alt=sse)
)

type endReason int

const (
	endEOF endReason = iota
	endClosed
	endReadError
)

func newMeter(ctx context.Context, body io.ReadCloser, provider string, format bodyFormat, filter bool, encoding string, done func(*meter, endReason, bool)) *meter {
	m := &meter{ctx: ctx, body: body, provider: provider, format: format, filter: filter, done: done}
	m.sse.onEvent = func(data []byte) bool { return m.usage.streamEvent(m.provider, data) }
	m.arr.onValue = func(data []byte) { m.usage.streamEvent(m.provider, data) }
	enc := strings.ToLower(strings.TrimSpace(encoding))
	if enc != "" && enc != "identity" && !filter {
		pr, pw := io.Pipe()
		m.pw = pw
		m.decoded = make(chan struct{})
		go m.decode(enc, pr)
	}
	return m
}

// decode reads the compressed copy and feeds the parser with the plain bytes.
func (m *meter) decode(enc string, r *io.PipeReader) {
	defer close(m.decoded)
	defer r.Close()
	var dr io.Reader
	switch enc {
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(r)
		if err != nil {
			io.Copy(io.Discard, r)
			return
		}
		dr = gz
	case "deflate":
		dr = flate.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			io.Copy(io.Discard, r)
			return
		}
		defer zr.Close()
		dr = zr
	default: // an encoding we cannot read (br): the usage stays unknown
		io.Copy(io.Discard, r)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := dr.Read(buf)
		if n > 0 {
			m.parse(buf[:n])
		}
		if err != nil {
			io.Copy(io.Discard, r) // never block the writer side
			return
		}
	}
}

// parse feeds plain response bytes to the usage parser.
func (m *meter) parse(p []byte) {
	switch m.format {
	case formatSSE:
		m.sse.write(p)
		return
	case formatJSONArray:
		m.arr.write(p)
		return
	}
	if m.tooBig {
		return
	}
	if m.jsonCopy.Len()+len(p) > maxJSONCopy {
		m.tooBig = true
		m.jsonCopy.Reset()
		return
	}
	m.jsonCopy.Write(p)
}

func (m *meter) Read(p []byte) (int, error) {
	if m.filter {
		return m.readFiltered(p)
	}
	// The bytes read last time are parsed now, after the client has been handed them: parsing
	// stays off the path to the client's first byte.
	if len(m.lag) > 0 {
		m.parse(m.lag)
		m.lag = m.lag[:0]
	}
	n, err := m.body.Read(p)
	if n > 0 {
		m.account(p[:n])
		switch {
		case m.pw != nil:
			m.pw.Write(p[:n])
		case m.format == formatJSON:
			m.parse(p[:n]) // a copy, parsed when the body ends
		default:
			m.lag = append(m.lag, p[:n]...)
		}
	}
	end := err
	if m.hold && err == nil {
		// A transport may hand out a body's last bytes without io.EOF, which comes with the next
		// Read (HTTP/2's does), and the client would have them by then: the bytes that complete
		// the known length end the body.
		if m.remaining -= int64(n); m.remaining <= 0 {
			end = io.EOF
		}
	}
	if end != nil {
		if len(m.lag) > 0 {
			m.parse(m.lag)
			m.lag = m.lag[:0]
		}
		m.end(end)
	}
	return n, err
}

func (m *meter) account(p []byte) {
	if m.firstByte.IsZero() {
		m.firstByte = time.Now()
	}
	m.bytesOut += int64(len(p))
}

// readFiltered passes whole SSE events through, minus the usage-only chunk the proxy added.
func (m *meter) readFiltered(p []byte) (int, error) {
	for len(m.pending) == 0 {
		if m.eof || m.readErr != nil {
			if len(m.raw) > 0 { // a last event without its blank line
				m.pending, m.raw = m.raw, nil
				break
			}
			if m.readErr != nil {
				return 0, m.readErr
			}
			return 0, io.EOF
		}
		if m.rbuf == nil {
			m.rbuf = copyBuffers.Get()
		}
		buf := m.rbuf
		n, err := m.body.Read(buf)
		if n > 0 {
			m.account(buf[:n])
			m.splitEvents(buf[:n])
		}
		if err != nil {
			if err == io.EOF {
				m.eof = true
			} else {
				m.readErr = err
			}
			m.end(err)
		}
	}
	n := copy(p, m.pending)
	m.pending = m.pending[n:]
	return n, nil
}

// splitEvents moves complete events from raw to pending, dropping usage-only chunks.
func (m *meter) splitEvents(b []byte) {
	m.raw = append(m.raw, b...)
	for {
		i, sep := eventEnd(m.raw)
		if i < 0 {
			return
		}
		ev := m.raw[:i+sep]
		drop := false
		for _, line := range bytes.Split(ev, []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if m.usage.streamEvent(m.provider, bytes.TrimSpace(data)) {
					drop = true
				}
			}
		}
		if !drop {
			m.pending = append(m.pending, ev...)
		}
		m.raw = append([]byte(nil), m.raw[i+sep:]...)
	}
}

// eventEnd finds the blank line that ends an SSE event: the index of its start and its length.
func eventEnd(b []byte) (int, int) {
	for i := 0; i < len(b)-1; i++ {
		if b[i] != '\n' {
			continue
		}
		if b[i+1] == '\n' {
			return i, 2
		}
		if b[i+1] == '\r' && i+2 < len(b) && b[i+2] == '\n' {
			return i, 3
		}
	}
	return -1, 0
}

func (m *meter) end(err error) {
	reason := endEOF
	if !errors.Is(err, io.EOF) {
		reason = endReadError
		m.readErr = err
	}
	m.finish(reason)
}

func (m *meter) Close() error {
	err := m.body.Close()
	if m.rbuf != nil {
		copyBuffers.Put(m.rbuf)
		m.rbuf = nil
	}
	if len(m.lag) > 0 {
		m.parse(m.lag)
		m.lag = m.lag[:0]
	}
	m.finish(endClosed)
	return err
}

func (m *meter) finish(reason endReason) {
	m.once.Do(func() {
		// Read now: the request's context is cancelled anyway once the handler returns.
		clientGone := m.ctx.Err() != nil
		if m.pw != nil {
			m.pw.Close()
		}
		work := func() {
			if m.decoded != nil {
				<-m.decoded
			}
			switch {
			case m.format == formatSSE:
				m.sse.flush()
			case m.format == formatJSONArray:
				if m.arr.closed {
					m.usage.Final = true
				}
			case !m.tooBig:
				m.usage.parseJSONBody(m.provider, m.jsonCopy.Bytes())
			}
			m.done(m, reason, clientGone)
		}
		switch {
		case m.hold && reason != endClosed:
			// Called from the Read that ended the body, which has not returned its bytes yet.
			m.early = true
			work()
		case m.later != nil:
			m.later(work)
		default:
			go work()
		}
	})
}

// sseSplitter turns a byte stream into SSE data payloads, however the bytes are chunked.
type sseSplitter struct {
	line    []byte
	data    []byte
	hasData bool
	onEvent func(data []byte) bool
}

func (s *sseSplitter) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.line = append(s.line, p...)
			return
		}
		s.line = append(s.line, p[:i]...)
		p = p[i+1:]
		s.handleLine(bytes.TrimRight(s.line, "\r"))
		s.line = s.line[:0]
	}
}

func (s *sseSplitter) handleLine(line []byte) {
	if len(line) == 0 {
		s.dispatch()
		return
	}
	if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, bytes.TrimPrefix(data, []byte(" "))...)
		s.hasData = true
	}
}

func (s *sseSplitter) dispatch() {
	if s.hasData {
		s.onEvent(s.data)
	}
	s.data, s.hasData = s.data[:0], false
}

// flush handles a last event that had no blank line after it.
func (s *sseSplitter) flush() {
	if len(s.line) > 0 {
		s.handleLine(bytes.TrimRight(s.line, "\r"))
		s.line = s.line[:0]
	}
	s.dispatch()
}

// arraySplitter hands out the elements of a JSON array as their bytes arrive, however the bytes
// are chunked: the Gemini API streams without alt=sse as one array of responses. A body that is one
// object (an error) is handed out whole. It follows strings and nesting only; the elements are
// checked when they are parsed. An element larger than maxJSONCopy is skipped.
type arraySplitter struct {
	state   arrayState
	top     bool // the body is one object, not an array
	depth   int  // nesting inside the element being read
	inStr   bool
	esc     bool
	tooBig  bool
	elem    []byte
	closed  bool // the array (or the single object) ended
	onValue func(data []byte)
}

type arrayState int

const (
	arrayBefore  arrayState = iota // before the body's first byte that is not white space
	arrayBetween                   // inside the array, between elements
	arrayElement                   // inside an element
	arrayDone                      // after the array, or in a body that is neither array nor object
)

func (s *arraySplitter) write(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case arrayBefore:
			switch c {
			case '[':
				s.state = arrayBetween
			case '{':
				s.top = true
				s.begin(c)
			case ' ', '\t', '\r', '\n':
			default:
				s.state = arrayDone
			}
		case arrayBetween:
			switch c {
			case '{', '[':
				s.begin(c)
			case ']':
				s.state, s.closed = arrayDone, true
			}
		case arrayElement:
			if s.inStr {
				if s.esc {
					s.esc = false
					s.add(p[i : i+1])
					continue
				}
				// Copy the run of string bytes up to the next quote or backslash at once.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					s.add(p[i:])
					i = len(p)
					continue
				}
				s.add(p[i : i+j+1])
				i += j
				if p[i] == '\\' {
					s.esc = true
				} else {
					s.inStr = false
				}
				continue
			}
			s.add(p[i : i+1])
			switch c {
			case '"':
				s.inStr = true
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
				if s.depth == 0 {
					s.end()
				}
			}
		case arrayDone:
			return
		}
	}
}

func (s *arraySplitter) begin(c byte) {
	s.state, s.depth, s.tooBig = arrayElement, 1, false
	s.elem = append(s.elem[:0], c)
}

func (s *arraySplitter) add(b []byte) {
	if s.tooBig {
		return
	}
	if len(s.elem)+len(b) > maxJSONCopy {
		s.tooBig, s.elem = true, nil
		return
	}
	s.elem = append(s.elem, b...)
}

func (s *arraySplitter) end() {
	if !s.tooBig {
		s.onValue(s.elem)
	}
	s.elem = s.elem[:0]
	s.state = arrayBetween
	if s.top {
		s.state, s.closed = arrayDone, true
	}
}
