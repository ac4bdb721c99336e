package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckLine: whatever line a client sends, the guard either hands the SDK a message that
// encodes again, or answers it itself with a JSON-RPC error whose id is null, a string or a
// number; it never panics. And the id it finds in a line too long to keep (fed in pieces) is the
// one encoding/json reads from the whole line, when that id is valid and short.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":3}`, `[]`, `[1,2]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, `{"id":7,"id":8}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`, `not json`,
		`{"params":{"id":9},"id":"top","method":"m","jsonrpc":"2.0"}`, `{"a":"\"id\":5","id":6}`, `"str"`, `7`, "\xff",
	} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, line []byte, cut uint16) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return
		}
		msg, reply := check(line)
		switch {
		case msg != nil && reply != nil, msg == nil && reply == nil:
			t.Fatalf("check(%q) = %v, %q: want exactly one of a message and a reply", line, msg, reply)
		case msg != nil:
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("check(%q) passed a message that does not encode: %v", line, err)
			}
		default:
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(reply, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Message == "" {
				t.Fatalf("check(%q) replied %q", line, reply)
			}
			if id := string(r.ID); id != "null" && validID(r.ID) == nil {
				t.Fatalf("check(%q) replied with id %s", line, id)
			}
		}

		if !json.Valid(line) || line[0] != '{' {
			return
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &probe) != nil {
			return
		}
		want := validID(probe.ID)
		if len(want) > maxIDBytes || (want != nil && !bytes.Equal(want, bytes.TrimSpace(probe.ID))) {
			return
		}
		var fd idFinder
		c := int(cut) % (len(line) + 1)
		fd.feed(line[:c])
		fd.feed(line[c:])
		if got := validID(fd.id); !bytes.Equal(got, want) {
			t.Fatalf("idFinder on %q (cut at %d) found %q, encoding/json %q", line, c, got, want)
		}
	})
}
