package proxy

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// largeJSON is a Messages API answer of about 300 KB, ten reads of the proxy's 32 KB buffer.
func largeJSON(id string) string {
	return `{"id":"` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",` +
		`"content":[{"type":"text","text":"` + strings.Repeat("all work and no play ", 15000) + `"}],` +
		`"stop_reason":"end_turn","usage":{"input_tokens":120,"output_tokens":45}}`
}

func gzipped(tb testing.TB, s string) string {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// writeKnownLength answers with body under a Content-Length, in pieces flushed apart, so the proxy
// reads the body in several reads.
func writeKnownLength(w http.ResponseWriter, status int, body string, pieces int) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	step := max(len(body)/pieces, 1)
	for len(body) > 0 {
		k := min(step, len(body))
		io.WriteString(w, body[:k])
		body = body[k:]
		w.(http.Flusher).Flush()
	}
}

// journalHas reports whether a file of the journal in dir holds the event id.
func journalHas(tb testing.TB, dir, id string) bool {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && bytes.Contains(data, []byte(`"`+id+`"`)) {
			return true
		}
	}
	return false
}

// TestProxy_JournaledBeforeLastByte: a response of known length is complete for its client at its
// last byte, so the proxy hands that byte to the server only once the turn is in the journal. The
// test watches what the handler has written to its ResponseWriter (all the server can have sent)
// at the moment the turn has been journaled: never the whole body, and no less than the body but
// its last read (the bytes before pass as they come); once the handler returns, the whole body,
// byte for byte, and the turn recorded as before. Without a journal nothing is held back.
func TestProxy_JournaledBeforeLastByte(t *testing.T) {
	stream := strings.Replace(anthropicStream, "msg_01abc", "msg_stream", 1)
	zipped := gzipped(t, benchJSON)
	cases := []struct {
		name      string
		reqBody   string
		status    int
		header    map[string]string
		body      string
		pieces    int
		transport http.RoundTripper // nil: an httptest upstream answering body
		check     func(t *testing.T, turn *event.APITurn)
	}{
		{name: "JSON", status: 200, body: benchJSON, pieces: 1, check: func(t *testing.T, turn *event.APITurn) {
			if turn.MessageID != "msg_bench" || turn.Output != 45 || turn.Partial || turn.ErrorClass != "" {
				t.Errorf("turn %+v", *turn)
			}
		}},
		{name: "LargeJSON", status: 200, body: largeJSON("msg_large"), pieces: 7, check: func(t *testing.T, turn *event.APITurn) {
			if turn.MessageID != "msg_large" || turn.Output != 45 || turn.BytesOut != int64(len(largeJSON("msg_large"))) {
				t.Errorf("turn %+v", *turn)
			}
		}},
		{name: "Gzip", status: 200, body: zipped, pieces: 2, header: map[string]string{"Content-Encoding": "gzip"},
			check: func(t *testing.T, turn *event.APITurn) {
				if turn.MessageID != "msg_bench" || turn.Output != 45 || turn.BytesOut != int64(len(zipped)) {
					t.Errorf("turn %+v", *turn)
				}
			}},
		{name: "StreamOfKnownLength", status: 200, body: stream, pieces: 3,
			header: map[string]string{"Content-Type": "text/event-stream"},
			check: func(t *testing.T, turn *event.APITurn) {
				if turn.MessageID != "msg_stream" || !turn.Stream || turn.Output != 45 || turn.Partial {
					t.Errorf("turn %+v", *turn)
				}
			}},
		{name: "UpstreamError", status: 429, body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			pieces: 1, check: func(t *testing.T, turn *event.APITurn) {
				if turn.Status != 429 || turn.ErrorClass != "rate_limit_error" || turn.ErrorMessage != "slow down" {
					t.Errorf("turn %+v", *turn)
				}
			}},
		{name: "NotJSON", reqBody: "this is not JSON", status: 502, body: "<html><body>bad gateway</body></html>",
			pieces: 1, header: map[string]string{"Content-Type": "text/html"},
			check: func(t *testing.T, turn *event.APITurn) {
				if turn.Status != 502 || turn.ErrorClass != "http_502" || turn.Model != "" {
					t.Errorf("turn %+v", *turn)
				}
			}},
		// A body whose last bytes come without io.EOF, which the next read returns (a bytes.Reader,
		// as HTTP/2's transport does): the read that completes the length ends it.
		{name: "LastBytesWithoutEOF", status: 200, body: benchJSON, transport: cannedTransport{},
			check: func(t *testing.T, turn *event.APITurn) {
				if turn.MessageID != "msg_bench" || turn.Output != 45 || turn.RequestID != "req_bench" {
					t.Errorf("turn %+v", *turn)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				writeKnownLength(w, tc.status, tc.body, tc.pieces)
			}))
			t.Cleanup(up.Close)
			dir := filepath.Join(t.TempDir(), "journal")
			cp := newCapture()
			p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, Coster: flatCost{},
				Transport: tc.transport, JournalDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			rec := httptest.NewRecorder()
			journaled := 0
			p.journaled = func(ev *event.Event) {
				journaled++
				if !journalHas(t, dir, ev.ID) {
					t.Errorf("the turn %s is not in the journal after its write", ev.ID)
				}
				switch held := len(tc.body) - rec.Body.Len(); {
				case held <= 0:
					t.Errorf("the handler had written the whole body (%d bytes) before the turn was journaled", len(tc.body))
				case held > 32<<10:
					t.Errorf("%d bytes held back when the turn was journaled, more than one read (32 KB)", held)
				}
			}
			serve(p, rec, tc.reqBody)
			if journaled != 1 {
				t.Fatalf("the turn was journaled %d times, want once", journaled)
			}
			if rec.Code != tc.status || rec.Body.String() != tc.body {
				t.Errorf("the client got %d, %d bytes; want %d, the upstream's %d bytes", rec.Code, rec.Body.Len(), tc.status, len(tc.body))
			}
			tc.check(t, cp.next(t))
		})
	}

	t.Run("NoJournal", func(t *testing.T) {
		up := idUpstream(t)
		p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: newCapture(), Coster: flatCost{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		rec := httptest.NewRecorder()
		p.journaled = func(*event.Event) {
			if rec.Body.Len() == 0 || !strings.HasSuffix(rec.Body.String(), "}") {
				t.Errorf("without a journal the turn was recorded before the client's last byte (%d bytes written)", rec.Body.Len())
			}
		}
		serve(p, rec, "")
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
	})

	// A journal that cannot be written holds nothing back: the bytes go out, the turn is queued
	// (and published), and the failure is logged.
	t.Run("JournalFails", func(t *testing.T) {
		up := idUpstream(t)
		logs := &syncBuf{}
		cp := newCapture()
		dir := filepath.Join(t.TempDir(), "journal")
		p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, Coster: flatCost{},
			JournalDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		p.journal.mu.Lock()
		ro, err := os.Open(p.journal.cur.path) // writes to it fail
		if err != nil {
			t.Fatal(err)
		}
		p.journal.cur.f.Close()
		p.journal.cur.f = ro
		p.journal.mu.Unlock()
		rec := httptest.NewRecorder()
		serve(p, rec, "")
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"output_tokens":45`) {
			t.Fatalf("the client got %d: %s", rec.Code, rec.Body)
		}
		if turn := cp.next(t); turn.Output != 45 {
			t.Errorf("turn %+v", *turn)
		}
		if !strings.Contains(logs.String(), "journal cannot be written") {
			t.Errorf("the journal's failure is not logged: %s", logs)
		}
	})
}

// serve sends one Messages request (body "" sends claudeBody) to the proxy's handler.
func serve(p *Proxy, w http.ResponseWriter, body string) {
	if body == "" {
		body = claudeBody
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1:8820/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-holdback-test")
	req.Header.Set("anthropic-version", "2023-06-01")
	p.ServeHTTP(w, req)
}

// TestProxy_ClientHasBodyAfterJournal: over HTTP/1.1 and HTTP/2, a client that has read a whole
// response of known length (JSON, 300 KB of JSON, an SSE stream sent with a Content-Length) finds
// its turn in the journal at once. The publisher never returns, so the journal keeps every line.
func TestProxy_ClientHasBodyAfterJournal(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		id := "msg_" + r.Header.Get("X-Id")
		switch r.URL.Query().Get("kind") {
		case "large":
			w.Header().Set("Content-Type", "application/json")
			writeKnownLength(w, 200, largeJSON(id), 5)
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			writeKnownLength(w, 200, strings.Replace(anthropicStream, "msg_01abc", id, 1), 3)
		default:
			w.Header().Set("Content-Type", "application/json")
			writeKnownLength(w, 200, strings.Replace(benchJSON, "msg_bench", id, 1), 1)
		}
	}))
	t.Cleanup(up.Close)
	for _, h2 := range []bool{false, true} {
		proto := "HTTP1"
		if h2 {
			proto = "HTTP2"
		}
		t.Run(proto, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "journal")
			stuck := newStuckPublisher(t)
			p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: stuck, Coster: flatCost{},
				JournalDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(p)
			srv.EnableHTTP2 = h2
			srv.StartTLS()
			t.Cleanup(func() { srv.Close(); stuck.free(); p.Close() })
			client := srv.Client()
			for i := range 30 {
				kind := []string{"json", "large", "stream"}[i%3]
				id := fmt.Sprintf("%s_%s_%d", proto, kind, i)
				req, _ := http.NewRequest("POST", srv.URL+"/v1/messages?kind="+kind, strings.NewReader(claudeBody))
				req.Header.Set("X-Id", id)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(body)) || resp.ProtoMajor != map[bool]int{false: 1, true: 2}[h2] {
					t.Fatalf("%s: %s status %d, %d of %d bytes: %v", id, resp.Proto, resp.StatusCode, len(body), resp.ContentLength, err)
				}
				if !journalHas(t, dir, "msg_"+id) {
					t.Fatalf("the client has the whole response of %s (%d bytes), and its turn is not in the journal", id, len(body))
				}
				resp.Body.Close()
			}
		})
	}
}
