package proxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// geminiChunks are the responses of one streamed Gemini turn, as the API sends them: every chunk
// repeats usageMetadata, growing; only the last has finishReason and the whole usage, thinking and
// the prompt of a built-in tool included.
var geminiChunks = []string{
	`{"candidates":[{"content":{"parts":[{"text":"Let me \"look\" {at} [it]\\"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1200},"modelVersion":"gemini-2.5-pro","responseId":"gr_abc"}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1000,"candidatesTokenCount":40,"thoughtsTokenCount":10,"toolUsePromptTokenCount":5,"totalTokenCount":1255},"modelVersion":"gemini-2.5-pro","responseId":"gr_abc"}`,
}

// geminiWant is the turn geminiChunks make, stored net: input 1200-1000 cached + 5 tool prompt,
// output 40 + 10 thinking.
var geminiWant = event.Tokens{Input: 205, Output: 50, CacheRead: 1000, Reasoning: 10}

func geminiSSE() string {
	var b strings.Builder
	for _, c := range geminiChunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.String()
}

func geminiArray() string {
	return "[" + strings.Join(geminiChunks, ",\r\n") + "]"
}

func wantGeminiTurn(tb testing.TB, u turnUsage, final bool) {
	tb.Helper()
	if u.Tokens != geminiWant || u.MessageID != "gr_abc" || u.Model != "gemini-2.5-pro" || u.StopReason != "STOP" || u.Final != final {
		tb.Fatalf("turn %+v, want tokens %+v, id gr_abc, model gemini-2.5-pro, STOP, final %v", u, geminiWant, final)
	}
}

// feedArray runs a body through the JSON-array reader in pieces cut at cuts, as the meter does.
func feedArray(stream []byte, cuts ...int) turnUsage {
	var u turnUsage
	s := &arraySplitter{onValue: func(data []byte) { u.streamEvent(Google, data) }}
	prev := 0
	for _, c := range cuts {
		if c > prev && c < len(stream) {
			s.write(stream[prev:c])
			prev = c
		}
	}
	s.write(stream[prev:])
	if s.closed {
		u.Final = true
	}
	return u
}

func TestGeminiUsage_JSONBody(t *testing.T) {
	var u turnUsage
	u.parseJSONBody(Google, []byte(geminiChunks[1]))
	wantGeminiTurn(t, u, true)

	// A blocked prompt has no candidates: the block reason ends the turn, its prompt is billed.
	u = turnUsage{}
	u.parseJSONBody(Google, []byte(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":30,"totalTokenCount":30},"modelVersion":"gemini-2.5-flash"}`))
	if u.Input != 30 || u.StopReason != "SAFETY" || !u.Final {
		t.Fatalf("blocked prompt: %+v", u)
	}
	// An error body keeps the API's status and message.
	u = turnUsage{}
	u.parseJSONBody(Google, []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`))
	if u.ErrClass != "RESOURCE_EXHAUSTED" || !strings.Contains(u.ErrMsg, "exhausted") {
		t.Fatalf("error: %+v", u)
	}
}

// TestGeminiUsage_Priced: the net buckets price a Gemini turn as Google bills it: the long-context
// tier of gemini-2.5-pro is decided on promptTokenCount (cached tokens included), and thinking is
// billed at the output price.
func TestGeminiUsage_Priced(t *testing.T) {
	tab := pricing.Default()
	for _, tc := range []struct {
		prompt int64
		usd    float64
	}{
		// 150k fresh at $1.25, 50k cached at $0.125, 1.5k output at $10.
		{200_000, (150_000*1.25 + 50_000*0.125 + 1500*10) / 1e6},
		// Over 200k: $2.50, $0.25 and $15 for every token of the request.
		{200_001, (150_001*2.50 + 50_000*0.25 + 1500*15) / 1e6},
	} {
		var u turnUsage
		u.parseJSONBody(Google, fmt.Appendf(nil, `{"usageMetadata":{"promptTokenCount":%d,"cachedContentTokenCount":50000,"candidatesTokenCount":1000,"thoughtsTokenCount":500},"modelVersion":"gemini-2.5-pro"}`, tc.prompt))
		usd, known := tab.Cost(u.Model, u.Tokens)
		if !known || math.Abs(usd-tc.usd) > 1e-9 {
			t.Errorf("prompt %d: %+v costs %v (known %v), want %v", tc.prompt, u.Tokens, usd, known, tc.usd)
		}
	}
}

// TestGeminiUsage_SSEEveryCut: the alt=sse stream (CRLF line ends) gives the same turn however its
// bytes are cut into reads: at every byte boundary, and one byte at a time.
func TestGeminiUsage_SSEEveryCut(t *testing.T) {
	stream := []byte(geminiSSE())
	wantGeminiTurn(t, feedSSE(Google, stream), true)
	for cut := 1; cut < len(stream); cut++ {
		if u := feedSSE(Google, stream, cut); !reflect.DeepEqual(u, feedSSE(Google, stream)) {
			t.Fatalf("cut at %d: %+v", cut, u)
		}
	}
	bytewise := make([]int, len(stream))
	for i := range bytewise {
		bytewise[i] = i
	}
	wantGeminiTurn(t, feedSSE(Google, stream, bytewise...), true)
	// Cut before the last event: the prompt is known, the turn is not final.
	part := feedSSE(Google, stream[:bytes.Index(stream, []byte("\r\n\r\n"))+4])
	if part.Final || part.Input != 1200 || part.Output != 0 {
		t.Fatalf("first chunk only: %+v", part)
	}
}

// TestGeminiUsage_ArrayEveryCut: the JSON-array stream (no alt=sse), whose strings hold brackets,
// braces and escaped quotes, gives the same turn at every cut and one byte at a time; a body cut
// before its closing bracket is not final unless its last chunk was read.
func TestGeminiUsage_ArrayEveryCut(t *testing.T) {
	stream := []byte(geminiArray())
	wantGeminiTurn(t, feedArray(stream), true)
	for cut := 1; cut < len(stream); cut++ {
		if u := feedArray(stream, cut); !reflect.DeepEqual(u, feedArray(stream)) {
			t.Fatalf("cut at %d: %+v", cut, u)
		}
	}
	bytewise := make([]int, len(stream))
	for i := range bytewise {
		bytewise[i] = i
	}
	wantGeminiTurn(t, feedArray(stream, bytewise...), true)

	first := feedArray(stream[:len(geminiChunks[0])+3])
	if first.Final || first.Input != 1200 || first.MessageID != "gr_abc" {
		t.Fatalf("first element only: %+v", first)
	}
	// The body of an error is one object, not an array.
	e := feedArray([]byte(` {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`))
	if e.ErrClass != "INVALID_ARGUMENT" || !e.Final {
		t.Fatalf("error object: %+v", e)
	}
}

// FuzzGeminiArray: whatever bytes a Gemini JSON-array stream holds, reading it never panics, never
// gives a negative count, and gives the same turn however the bytes are cut.
func FuzzGeminiArray(f *testing.F) {
	for _, s := range []string{geminiArray(), "[]", `[{"usageMetadata":{"promptTokenCount":-3}}`, `{"error":{}}`, `["\"]`, `[[[{}]]]`} {
		f.Add([]byte(s), uint16(3), uint16(50))
	}
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint16) {
		whole := feedArray(stream)
		n := len(stream) + 1
		cut := feedArray(stream, int(a)%n, int(a)%n+int(b)%n)
		if !reflect.DeepEqual(whole, cut) {
			t.Fatalf("the same stream read in other pieces gave another turn:\n%+v\n%+v", whole, cut)
		}
		if whole.Input < 0 || whole.Output < 0 || whole.CacheRead < 0 || whole.Reasoning < 0 {
			t.Fatalf("negative count %+v from %q", whole.Tokens, stream)
		}
	})
}

// syncBuf is a log sink tests read while the proxy writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// geminiSetup puts the proxy in front of upstream for Gemini requests, logging at debug level
// into the returned buffer.
func geminiSetup(tb testing.TB, upstream string) (*httptest.Server, *capture, *syncBuf) {
	tb.Helper()
	logs := &syncBuf{}
	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: upstream, OpenAIUpstream: upstream, GeminiUpstream: upstream, Publisher: cp,
		Coster: flatCost{}, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tb.Cleanup(func() { srv.Close(); p.Close() })
	return srv, cp, logs
}

const geminiKey = "AIzaSyD-observer-test-key-0123456789abc"

// TestProxy_GeminiThroughFakeAPI sends every Gemini call shape through the proxy to the fake API:
// generateContent, streamGenerateContent with alt=sse and as a JSON array, countTokens, on /v1beta
// and /v1, the key in the query or in x-goog-api-key. The client gets the fake's bytes, and each
// call is one api_turn whose tokens are the fake's usageMetadata stored net, without the key.
func TestProxy_GeminiThroughFakeAPI(t *testing.T) {
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	srv, cp, logs := geminiSetup(t, up.URL)
	body := `{"contents":[{"role":"user","parts":[{"text":"list the files"}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"OBJECT"}},{"name":"run_shell_command","parameters":{"type":"OBJECT","properties":{"command":{"type":"STRING"}},"required":["command"]}}]}]}`
	want := event.Tokens{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	for _, tc := range []struct {
		name, path string
		header     bool // key in x-goog-api-key, else in the query
		stream     bool
	}{
		{"generate", "/v1beta/models/gemini-2.5-pro:generateContent", true, false},
		{"sse", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", false, true},
		{"array", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", true, true},
		{"v1", "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", false, true},
		{"count", "/v1beta/models/gemini-2.5-pro:countTokens", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := srv.URL + tc.path
			if !tc.header {
				u += map[bool]string{true: "&", false: "?"}[strings.Contains(u, "?")] + "key=" + geminiKey
			}
			req, _ := http.NewRequest("POST", u, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)")
			if tc.header {
				req.Header.Set("x-goog-api-key", geminiKey)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			rec := fake.Requests()[len(fake.Requests())-1]
			if !rec.HasAPIKey {
				t.Errorf("the upstream got no key: %+v", rec)
			}
			ev := cp.nextEvent(t)
			turn := ev.APITurn
			if ev.Client != "gemini-cli" || turn.Provider != Google || turn.Status != 200 || turn.Endpoint != strings.SplitN(tc.path, "?", 2)[0] {
				t.Errorf("client %q turn %+v", ev.Client, turn)
			}
			if tc.name == "count" {
				if turn.Tokens != (event.Tokens{}) || turn.Model != "gemini-2.5-pro" {
					t.Errorf("countTokens turn %+v, want no tokens", turn)
				}
				return
			}
			if turn.Tokens != want || turn.MessageID != rec.ResponseID || turn.Model != rec.Model || turn.StopReason != "STOP" ||
				turn.Stream != tc.stream || turn.Partial || turn.Messages != 1 || turn.Tools != 2 || turn.BytesOut != int64(len(got)) {
				t.Errorf("turn %+v, want tokens %+v of %s (%s)", turn, want, rec.ResponseID, rec.Model)
			}
			raw, _ := json.Marshal(ev)
			if bytes.Contains(raw, []byte(geminiKey)) {
				t.Errorf("the API key reached the event: %s", raw)
			}
		})
	}
	if strings.Contains(logs.String(), geminiKey) {
		t.Errorf("the API key reached the log:\n%s", logs)
	}
}

// TestProxy_GeminiKeyNeverLogged: when the upstream cannot be reached, the key in the query is in
// neither the client's error, nor the log, nor the recorded turn; the error is in the Gemini shape.
func TestProxy_GeminiKeyNeverLogged(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	dead := up.URL
	up.Close()
	srv, cp, logs := geminiSetup(t, dead)
	for _, stream := range []bool{false, true} {
		path := "/v1beta/models/gemini-2.5-pro:generateContent?key=" + geminiKey
		if stream {
			path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=" + geminiKey
		}
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"contents":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ge struct {
			Error struct {
				Code    int
				Message string
				Status  string
			}
		}
		if json.Unmarshal(got, &ge) != nil || resp.StatusCode != 502 || ge.Error.Code != 502 || ge.Error.Status != "UNAVAILABLE" ||
			!strings.Contains(ge.Error.Message, "could not be reached") {
			t.Errorf("client got %d %s", resp.StatusCode, got)
		}
		ev := cp.nextEvent(t)
		raw, _ := json.Marshal(ev)
		if ev.APITurn.ErrorClass != "upstream_unreachable" || ev.APITurn.Model != "gemini-2.5-pro" {
			t.Errorf("turn %+v", ev.APITurn)
		}
		for what, s := range map[string]string{"client's error": string(got), "event": string(raw), "log": logs.String()} {
			if strings.Contains(s, geminiKey) || strings.Contains(s, "AIzaSyD") {
				t.Errorf("the key reached the %s: %s", what, s)
			}
		}
	}
}

// TestWithoutQuery: a transport error that names the request URL (a url.Error, from a Transport
// that wraps http.Client) loses the query, and with it a ?key=, before anyone sees it.
func TestWithoutQuery(t *testing.T) {
	err := fmt.Errorf("round trip: %w", &url.Error{Op: "Post",
		URL: "http://user:pw@127.0.0.1:9/v1beta/models/m:generateContent?alt=sse&key=" + geminiKey, Err: io.ErrUnexpectedEOF})
	got := withoutQuery(err).Error()
	if strings.Contains(got, geminiKey) || strings.Contains(got, "pw") || !strings.Contains(got, "/v1beta/models/m:generateContent") ||
		!errors.Is(withoutQuery(err), io.ErrUnexpectedEOF) {
		t.Errorf("withoutQuery = %q", got)
	}
	plain := errors.New("dial tcp 127.0.0.1:9: connect: connection refused")
	if withoutQuery(plain) != plain {
		t.Error("an error without a URL changed")
	}
}

// TestProxy_GeminiGzipArray: a gzipped JSON-array stream (the real API compresses for clients that
// accept it, Gemini CLI does) reaches the client compressed and is read on the side.
func TestProxy_GeminiGzipArray(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, geminiArray())
	zw.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	}))
	defer up.Close()
	srv, cp, _ := geminiSetup(t, up.URL)
	req, _ := http.NewRequest("POST", srv.URL+"/v1beta/models/gemini-2.5-pro:streamGenerateContent", strings.NewReader(`{"contents":[{}]}`))
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, gz.Bytes()) {
		t.Fatal("the client did not get the upstream's compressed bytes")
	}
	turn := cp.next(t)
	if turn.Tokens != geminiWant || !turn.Stream || turn.Partial || turn.MessageID != "gr_abc" || turn.Messages != 1 {
		t.Fatalf("turn %+v", turn)
	}
}

// TestProxy_GeminiTruncatedArray: a JSON-array stream cut before its last element is a partial turn
// with the prompt it read.
func TestProxy_GeminiTruncatedArray(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "["+geminiChunks[0]+",\r\n")
	}))
	defer up.Close()
	srv, cp, _ := geminiSetup(t, up.URL)
	resp, err := http.Post(srv.URL+"/v1beta/models/gemini-2.5-pro:streamGenerateContent", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	turn := cp.next(t)
	if !turn.Stream || !turn.Partial || turn.ErrorClass != "stream_truncated" || turn.Input != 1200 || turn.MessageID != "gr_abc" {
		t.Fatalf("turn %+v", turn)
	}
}

func TestRouteFor_Gemini(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		header         map[string]string
		want           route
	}{
		{"POST", "/v1beta/models/gemini-2.5-pro:generateContent", nil,
			route{provider: Google, endpoint: "/v1beta/models/gemini-2.5-pro:generateContent", metered: true, model: "gemini-2.5-pro"}},
		{"POST", "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", nil,
			route{provider: Google, endpoint: "/v1/models/gemini-2.5-flash:streamGenerateContent", metered: true, model: "gemini-2.5-flash", geminiStream: true}},
		{"POST", "/v1beta/models/gemini-2.5-pro:countTokens", nil,
			route{provider: Google, endpoint: "/v1beta/models/gemini-2.5-pro:countTokens", metered: true, model: "gemini-2.5-pro"}},
		{"POST", "/v1beta/models/text-embedding-004:embedContent", nil,
			route{provider: Google, endpoint: "/v1beta/models/text-embedding-004:embedContent", model: "text-embedding-004"}},
		{"GET", "/v1beta/models", nil, route{provider: Google, endpoint: "/v1beta/models"}},
		{"GET", "/v1/models?key=x", nil, route{provider: Google, endpoint: "/v1/models"}},
		{"GET", "/v1/models", map[string]string{"x-goog-api-key": "x"}, route{provider: Google, endpoint: "/v1/models"}},
		// OpenAI's fine-tuned model ids hold colons too.
		{"GET", "/v1/models/ft:gpt-4o-mini:acme::abc123", map[string]string{"Authorization": "Bearer x"},
			route{provider: OpenAI, endpoint: "/v1/models/ft:gpt-4o-mini:acme::abc123"}},
		{"GET", "/v1/models", nil, route{provider: OpenAI, endpoint: "/v1/models"}},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		for k, v := range tc.header {
			r.Header.Set(k, v)
		}
		if got := routeFor(r); got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.target, got, tc.want)
		}
	}
}

// TestClientOf: each client is named from the headers it sent to the fake API (see clientOf).
func TestClientOf(t *testing.T) {
	for _, tc := range []struct {
		want   string
		header map[string]string
	}{
		{"claude-code", map[string]string{"User-Agent": "claude-cli/2.1.197 (external, sdk-cli)", "X-Claude-Code-Session-Id": "s"}},
		{"codex", map[string]string{"User-Agent": "codex_exec/0.171.0 (Debian 12; x86_64) xterm", "originator": "codex_exec"}},
		{"gemini-cli", map[string]string{"User-Agent": "GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)",
			"x-goog-api-client": "google-genai-sdk/1.30.0 gl-node/v20.20.2"}},
		{"gemini-cli", map[string]string{"User-Agent": "GeminiCLI/0.9.0/gemini-2.5-pro (darwin; arm64)"}},
		{"qwen-code", map[string]string{"User-Agent": "QwenCode/0.24.4 (linux; x64)", "x-stainless-lang": "js"}},
		{"opencode", map[string]string{"User-Agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14", "x-session-id": "ses_1"}},
		{"kilo", map[string]string{"User-Agent": "Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14",
			"X-Title": "Kilo Code", "HTTP-Referer": "https://kilocode.ai", "x-session-id": "ses_2"}},
		{"kilo", map[string]string{"User-Agent": "OpenAI/JS 5.0.0", "X-Title": "Kilo Code"}},
		{"cline", map[string]string{"User-Agent": "ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13"}},
		{"crush", map[string]string{"User-Agent": "Charm-Crush/0.66.0 (https://charm.land/crush)", "X-Stainless-Lang": "go"}},
		{"unknown", map[string]string{"User-Agent": "OpenAI/Go 1.12.0", "X-Stainless-Lang": "go"}}, // an SDK's own mark only
		{"unknown", map[string]string{"User-Agent": "OpenAI/JS 6.26.0", "X-Stainless-Lang": "js"}}, // Pi
		{"unknown", map[string]string{"User-Agent": "google-genai-sdk/1.30.0 gl-node/v20.20.2"}},
		{"unknown", nil},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := clientOf(h); got != tc.want {
			t.Errorf("clientOf(%v) = %q, want %q", tc.header, got, tc.want)
		}
	}
	for _, v := range []string{"ses_dcd6292baffeCbvHe2QRciBYUp", "title-ses_dcd6292baffeCbvHe2QRciBYUp"} {
		h := http.Header{}
		h.Set("X-Session-Id", v)
		if got := sessionOf(h, requestInfo{}); got != "ses_dcd6292baffeCbvHe2QRciBYUp" {
			t.Errorf("sessionOf(X-Session-Id %s) = %q", v, got)
		}
	}
}

func TestParseGeminiRequest(t *testing.T) {
	rt := route{model: "gemini-2.5-pro", geminiStream: true}
	info := parseGeminiRequest([]byte(`{"contents":[{"role":"user"},{"role":"model"},{"role":"user"}],`+
		`"tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"}]},{"googleSearch":{}},{"function_declarations":[{"name":"c"}]}]}`), rt)
	if want := (requestInfo{Model: "gemini-2.5-pro", Stream: true, Messages: 3, Tools: 3}); info != want {
		t.Errorf("info %+v, want %+v", info, want)
	}
	if info := parseGeminiRequest([]byte(`nope`), rt); !info.NotJSON || info.Model != "gemini-2.5-pro" {
		t.Errorf("not JSON: %+v", info)
	}
}
