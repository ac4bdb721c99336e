package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as the SDK's own stdio transport does.
const maxLine = mcp.DefaultMaxLineLength

// guard returns the transport Serve runs on: newline-delimited JSON-RPC over in and out, where
// every inbound line is checked before the SDK sees it. The SDK's stdio transport ends the whole
// session on a line it cannot decode, without a reply; a client that sent one garbled line would
// see its server vanish. Here such a line is answered with a JSON-RPC error (-32700 for text that
// is not JSON, -32600 for JSON that is not a JSON-RPC message, with the line's id when it has one)
// and the session goes on. Batches (JSON arrays) pass through: the SDK answers them itself.
//
// The SDK writes each outbound message with a single Write; the guard's replies share a mutex
// with it, so lines never interleave.
func guard(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go pump(in, pw, w)
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves the process's stdout open: the SDK closes its transport at the end of a session.
func (l *lockedWriter) Close() error { return nil }

// pump copies the valid lines of in to pw, answers the others on w, and closes pw when in ends
// (the SDK then ends the session) or when the SDK closed its side.
func pump(in io.Reader, pw *io.PipeWriter, w io.Writer) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(line) > 0 || tooLong {
			var reply []byte
			if tooLong {
				reply = errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes", maxLine))
			} else {
				reply = check(line)
			}
			if reply != nil {
				if _, werr := w.Write(reply); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the SDK closed the session
			}
		}
		if err != nil {
			pw.Close()
			return
		}
	}
}

// readLine returns the next line without its line ending and surrounding space. A line longer
// than maxLine is skipped to its end and reported as tooLong.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > maxLine {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

// check returns nil for a line the SDK can take, or the error reply the guard sends instead.
func check(line []byte) []byte {
	if line[0] == '[' && json.Valid(line) {
		return nil // a batch: the SDK answers it, or refuses it for protocols without batches
	}
	if _, err := jsonrpc.DecodeMessage(line); err == nil {
		return nil
	} else if !json.Valid(line) {
		return errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	} else {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &probe)
		id := probe.ID
		if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
			id = nil // ids are strings or numbers; anything else is answered with a null id
		}
		return errorReply(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
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
