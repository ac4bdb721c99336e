package proxy

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// impatient is the client of the timeout tests: long enough for the proxy's short timeouts, far
// shorter than the upstream's silence.
var impatient = &http.Client{Timeout: 5 * time.Second}

func TestProxy_ResponseHeaderTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv, cp := setupConfig(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Case") == "slow-stream" {
			// Headers at once, then a stream far longer than the timeout: never cut.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			for _, ev := range strings.SplitAfter(anthropicStream, "\n\n") {
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
				time.Sleep(timeout / 3)
			}
			return
		}
		// Silent until the proxy gives up (a server sees its client go only once it has read the body).
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}, Config{ResponseHeaderTimeout: timeout})

	for _, c := range []struct{ path, body string }{{"/v1/messages", claudeBody}, {"/v1/chat/completions", `{"model":"gpt-5","messages":[]}`}} {
		start := time.Now()
		resp, err := impatient.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: the proxy held the client: %v", c.path, err)
		}
		pe := readProxyError(t, resp)
		if took := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout {
			t.Fatalf("%s: status %d after %v, want 504 after about %v", c.path, resp.StatusCode, took, timeout)
		}
		if !strings.Contains(pe.Error.Message, "response_header_timeout") {
			t.Errorf("%s: message %q does not name the setting", c.path, pe.Error.Message)
		}
		if c.path == "/v1/messages" && (pe.Type != "error" || pe.Error.Type != "timeout_error") {
			t.Errorf("not Anthropic's error shape: %+v", pe)
		}
		if c.path != "/v1/messages" && (pe.Error.Type != "upstream_timeout" || pe.Error.Code == nil || *pe.Error.Code != "upstream_timeout") {
			t.Errorf("not OpenAI's error shape: %+v", pe)
		}
		turn := cp.next(t)
		if turn.Status != 504 || turn.ErrorClass != "upstream_timeout" || turn.Model == "" || turn.LatencyMs < float64(timeout.Milliseconds()) {
			t.Errorf("%s: turn %+v", c.path, turn)
		}
	}

	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(claudeBody))
	req.Header.Set("X-Case", "slow-stream")
	resp, err := impatient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != anthropicStream {
		t.Fatalf("a stream slower than the header timeout: status %d, %d bytes of %d", resp.StatusCode, len(body), len(anthropicStream))
	}
	if turn := cp.next(t); turn.ErrorClass != "" || turn.Partial || turn.Output != 45 {
		t.Fatalf("slow stream turn %+v", turn)
	}
}

func TestProxy_ConnectTimeout(t *testing.T) {
	// An upstream that accepts the connection and never speaks: the TLS handshake never ends.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	const timeout = 300 * time.Millisecond
	srv, cp := setupConfig(t, nil, Config{AnthropicUpstream: "https://" + ln.Addr().String(),
		OpenAIUpstream: "https://" + ln.Addr().String(), ConnectTimeout: timeout})
	checkConnectTimeout(t, srv, cp, timeout)
}

// checkConnectTimeout sends a request through a proxy whose upstream cannot be connected to.
func checkConnectTimeout(t *testing.T, srv *httptest.Server, cp *capture, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := impatient.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatalf("the proxy held the client: %v", err)
	}
	pe := readProxyError(t, resp)
	if took := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d after %v, want 504 after about %v", resp.StatusCode, took, timeout)
	}
	if pe.Type != "error" || pe.Error.Type != "timeout_error" || !strings.Contains(pe.Error.Message, "connect_timeout") {
		t.Errorf("error %+v", pe)
	}
	turn := cp.next(t)
	if turn.Status != 504 || turn.ErrorClass != "upstream_connect_timeout" || turn.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("turn %+v", turn)
	}
}

// countingBody counts what the proxy reads of a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// repeatReader yields n bytes of 'a' without holding them.
type repeatReader struct{ n int64 }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = 'a'
	}
	r.n -= int64(len(p))
	return len(p), nil
}

func TestProxy_MaxBodyBytes(t *testing.T) {
	const limit = 1 << 20
	var upstreamHits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamHits.Add(1)
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_lim","model":"claude-opus-4-5","usage":{"input_tokens":%d,"output_tokens":1},"x_sha":"%x"}`, n, h.Sum(nil))
	}))
	defer up.Close()
	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, MaxBodyBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var read atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A copy of the request: the server must still see its own body, to linger after an early close.
		r = r.WithContext(r.Context())
		r.Body = countingBody{r.Body, &read}
		p.ServeHTTP(w, r)
	}))
	defer srv.Close()

	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("AtLimit/chunked=%v", chunked), func(t *testing.T) {
			prefix, suffix := `{"model":"claude-opus-4-5","messages":[{"role":"user","content":"`, `"}]}`
			body := prefix + strings.Repeat("a", limit-len(prefix)-len(suffix)) + suffix
			req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", io.NopCloser(strings.NewReader(body)))
			if req.ContentLength = -1; !chunked {
				req.ContentLength = int64(len(body))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if sum := fmt.Sprintf("%x", sha256.Sum256([]byte(body))); resp.StatusCode != 200 || !bytes.Contains(got, []byte(sum)) {
				t.Fatalf("status %d: a body of exactly max_body_bytes did not reach the upstream intact: %s", resp.StatusCode, got)
			}
			if turn := cp.next(t); turn.BytesIn != limit || turn.Input != limit || turn.Status != 200 || turn.Messages != 1 {
				t.Fatalf("turn %+v", turn)
			}
		})
	}

	t.Run("DeclaredTooLarge", func(t *testing.T) {
		read.Store(0)
		hits := upstreamHits.Load()
		body := bytes.Repeat([]byte("a"), limit+1)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("X-Claude-Code-Session-Id", "sess-413")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		pe := readProxyError(t, resp)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || pe.Type != "error" || pe.Error.Type != "request_too_large" ||
			!strings.Contains(pe.Error.Message, "max_body_bytes") {
			t.Fatalf("status %d, %+v", resp.StatusCode, pe)
		}
		if n := read.Load(); n != 0 {
			t.Errorf("the proxy read %d bytes of a body whose Content-Length is over the limit", n)
		}
		if upstreamHits.Load() != hits {
			t.Error("the upstream got the request")
		}
		ev := cp.nextEvent(t)
		if turn := ev.APITurn; turn.Status != 413 || turn.ErrorClass != "request_too_large" || turn.BytesIn != limit+1 || ev.SessionID != "sess-413" {
			t.Fatalf("turn %+v session %q", turn, ev.SessionID)
		}
	})

	t.Run("StreamedTooLarge", func(t *testing.T) {
		// No Content-Length: the body arrives chunked, 64 times the limit.
		read.Store(0)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", io.NopCloser(&repeatReader{n: 64 * limit}))
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		pe := readProxyError(t, resp)
		runtime.ReadMemStats(&after)
		t.Logf("refused a %d MiB body after reading %d bytes; %d MiB allocated meanwhile", 64*limit>>20, read.Load(), (after.TotalAlloc-before.TotalAlloc)>>20)
		if n := read.Load(); n > limit+64<<10 {
			t.Errorf("the proxy read %d bytes of the body, limit %d", n, limit)
		}
		// Everything this process allocated meanwhile, the client's side included.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*limit {
			t.Errorf("%d MiB allocated while refusing a body over a %d MiB limit", alloc>>20, limit>>20)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge || pe.Error.Type != "request_too_large" || pe.Error.Code == nil {
			t.Fatalf("status %d, %+v", resp.StatusCode, pe)
		}
		if turn := cp.next(t); turn.Status != 413 || turn.ErrorClass != "request_too_large" || turn.Provider != OpenAI {
			t.Fatalf("turn %+v", turn)
		}
	})
}
