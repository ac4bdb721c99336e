package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// setupConfig is setup with cfg's limits and listen address.
func setupConfig(tb testing.TB, h http.HandlerFunc, cfg Config) (*httptest.Server, *capture) {
	tb.Helper()
	up := httptest.NewServer(h)
	tb.Cleanup(up.Close)
	cp := newCapture()
	if cfg.AnthropicUpstream == "" {
		cfg.AnthropicUpstream = up.URL
	}
	if cfg.OpenAIUpstream == "" {
		cfg.OpenAIUpstream = up.URL
	}
	cfg.Publisher, cfg.Coster = cp, flatCost{}
	p, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tb.Cleanup(func() { srv.Close(); p.Close() })
	return srv, cp
}

// proxyError is either provider's error body.
type proxyError struct {
	Type  string `json:"type"` // Anthropic: "error"
	Error struct {
		Type    string  `json:"type"`
		Message string  `json:"message"`
		Code    *string `json:"code"` // OpenAI only
	} `json:"error"`
}

func readProxyError(tb testing.TB, resp *http.Response) proxyError {
	tb.Helper()
	defer resp.Body.Close()
	var pe proxyError
	if err := json.NewDecoder(resp.Body).Decode(&pe); err != nil {
		tb.Fatalf("status %d: the body is not an error in a provider's shape: %v", resp.StatusCode, err)
	}
	return pe
}

func TestProxy_RefusesForeignHostsAndBrowsers(t *testing.T) {
	var hits atomic.Int64
	handler := func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_ok","model":"claude-sonnet-4-5","usage":{"input_tokens":1,"output_tokens":1}}`)
	}
	type request struct {
		name, path, host string
		header           map[string]string
	}
	send := func(t *testing.T, srv *httptest.Server, rq request) *http.Response {
		t.Helper()
		method, body := "POST", io.Reader(strings.NewReader(claudeBody))
		if rq.path == "/v1/models" {
			method, body = "GET", nil
		}
		req, _ := http.NewRequest(method, srv.URL+rq.path, body)
		if rq.host != "" {
			req.Host = rq.host
		}
		for k, v := range rq.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("Refused", func(t *testing.T) {
		srv, cp := setupConfig(t, handler, Config{ListenAddr: "127.0.0.1:8820"})
		for _, rq := range []request{
			{name: "rebinding name", path: "/v1/messages", host: "evil.example:8820"},
			{name: "rebinding name, no port", path: "/v1/chat/completions", host: "evil.example"},
			{name: "name ending in localhost", path: "/v1/messages", host: "localhost.evil.example:8820"},
			{name: "another address", path: "/v1/responses", host: "10.0.0.7:8820"},
			{name: "pass-through path", path: "/v1/models", host: "evil.example:8820"},
			{name: "page on another site", path: "/v1/messages", header: map[string]string{"Origin": "https://evil.example"}},
			{name: "sandboxed page", path: "/v1/chat/completions", header: map[string]string{"Origin": "null"}},
			{name: "browser without Origin", path: "/v1/messages", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}},
			{name: "address bar", path: "/v1/models", header: map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}},
		} {
			t.Run(rq.name, func(t *testing.T) {
				resp := send(t, srv, rq)
				pe := readProxyError(t, resp)
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403", resp.StatusCode)
				}
				anthropic := rq.path == "/v1/messages"
				switch {
				case anthropic && (pe.Type != "error" || pe.Error.Type != "permission_error"):
					t.Errorf("not Anthropic's error shape: %+v", pe)
				case !anthropic && (pe.Type != "" || pe.Error.Code == nil || pe.Error.Type != *pe.Error.Code || !strings.HasPrefix(pe.Error.Type, "forbidden_")):
					t.Errorf("not OpenAI's error shape: %+v", pe)
				case !strings.Contains(pe.Error.Message, "observer-proxy"):
					t.Errorf("message %q does not say who refused", pe.Error.Message)
				}
			})
		}
		if n := hits.Load(); n != 0 {
			t.Errorf("%d refused requests reached the upstream", n)
		}
		select {
		case ev := <-cp.ch:
			t.Errorf("a refused request was recorded: %+v", ev.APITurn)
		case <-time.After(100 * time.Millisecond):
		}
	})

	t.Run("Served", func(t *testing.T) {
		srv, cp := setupConfig(t, handler, Config{ListenAddr: "observer.lan:8820"})
		for _, rq := range []request{
			{name: "127.0.0.1, any port", path: "/v1/messages", host: "127.0.0.1:1"},
			{name: "127/8", path: "/v1/messages", host: "127.1.2.3:8820"},
			{name: "localhost", path: "/v1/messages", host: "localhost:8820"},
			{name: "localhost, no port", path: "/v1/messages", host: "localhost"},
			{name: "::1", path: "/v1/messages", host: "[::1]:8820"},
			{name: "the listen host", path: "/v1/messages", host: "observer.lan:8820"},
			// Node's fetch (undici) sends Sec-Fetch-Mode: cors on every request, browser or not.
			{name: "node fetch", path: "/v1/messages", header: map[string]string{"Sec-Fetch-Mode": "cors", "Accept-Language": "*"}},
		} {
			t.Run(rq.name, func(t *testing.T) {
				resp := send(t, srv, rq)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200", resp.StatusCode)
				}
				if turn := cp.next(t); turn.MessageID != "msg_ok" {
					t.Fatalf("turn %+v", turn)
				}
			})
		}
	})

	t.Run("WildcardListen", func(t *testing.T) {
		// Listening on every interface, the machine's addresses are its hosts too. A rebinding page
		// always sends a name, never an address.
		srv, cp := setupConfig(t, handler, Config{ListenAddr: "0.0.0.0:8820"})
		resp := send(t, srv, request{path: "/v1/messages", host: "192.168.1.5:8820"})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("a LAN address: status %d, want 200", resp.StatusCode)
		}
		cp.next(t)
		resp = send(t, srv, request{path: "/v1/messages", host: "evil.example:8820"})
		if readProxyError(t, resp); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a name: status %d, want 403", resp.StatusCode)
		}
	})
}
