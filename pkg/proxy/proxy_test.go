package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// capture is a Publisher that keeps events in memory (the bus is exercised end to end in e2e/).
type capture struct {
	mu  sync.Mutex
	evs []event.Event
	ch  chan event.Event
}

func newCapture() *capture { return &capture{ch: make(chan event.Event, 1000)} }

func (c *capture) Publish(_ context.Context, ev *event.Event) (bus.Result, error) {
	if err := ev.Validate(); err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.evs = append(c.evs, *ev)
	c.mu.Unlock()
	c.ch <- *ev
	return bus.Published, nil
}

func (c *capture) next(tb testing.TB) *event.APITurn {
	tb.Helper()
	ev := c.nextEvent(tb)
	if ev.Kind != event.KindAPITurn || ev.APITurn == nil {
		tb.Fatalf("got %s event, want api_turn", ev.Kind)
	}
	return ev.APITurn
}

func (c *capture) nextEvent(tb testing.TB) event.Event {
	tb.Helper()
	select {
	case ev := <-c.ch:
		return ev
	case <-time.After(60 * time.Second): // a 64 MiB request body takes long to parse under -race
		tb.Fatal("no event within 60s")
	}
	return event.Event{}
}

type flatCost struct{}

func (flatCost) Cost(model string, tok event.Tokens) (float64, bool) {
	if model == "unpriced" {
		return 0, false
	}
	return float64(tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation) / 1e6, true
}

// setup starts an upstream with handler h and a proxy in front of it.
func setup(tb testing.TB, h http.HandlerFunc) (*httptest.Server, *capture) {
	tb.Helper()
	up := httptest.NewServer(h)
	tb.Cleanup(up.Close)
	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, Coster: flatCost{}})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tb.Cleanup(func() { srv.Close(); p.Close() })
	return srv, cp
}

const anthropicStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01abc","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":300,"cache_read_input_tokens":1000,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100},"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":100,"cache_creation_input_tokens":300,"cache_read_input_tokens":1000,"output_tokens":45}}` + "\n\n" +
	"event: message_stop\n" +
	`data: {"type":"message_stop"}` + "\n\n"

const claudeBody = `{"model":"claude-sonnet-4-5-20250929","stream":true,"max_tokens":1000,
	"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"11111111-2222-3333-4444-555555555555\"}"},
	"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}],
	"tools":[{"name":"Bash"},{"name":"Read"}]}`

func TestProxy_AnthropicStream(t *testing.T) {
	var gotAuth string
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("x-api-key")
		if r.URL.Path != "/v1/messages" || r.URL.RawQuery != "beta=true" {
			t.Errorf("upstream got %s", r.URL)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_xyz")
		io.WriteString(w, anthropicStream)
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages?beta=true", strings.NewReader(claudeBody))
	req.Header.Set("x-api-key", "sk-ant-secret-value")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, cli)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != anthropicStream {
		t.Fatalf("client got a different stream:\n%s", body)
	}
	if gotAuth != "sk-ant-secret-value" {
		t.Fatalf("upstream did not get the client's key")
	}
	ev := cp.nextEvent(t)
	turn := ev.APITurn
	want := event.Tokens{Input: 100, Output: 45, CacheRead: 1000, CacheCreation: 300, CacheCreation1h: 100}
	if turn.Tokens != want {
		t.Errorf("tokens %+v, want %+v", turn.Tokens, want)
	}
	if turn.MessageID != "msg_01abc" || turn.Model != "claude-sonnet-4-5-20250929" || turn.StopReason != "end_turn" ||
		turn.RequestID != "req_xyz" || turn.Status != 200 || !turn.Stream || turn.Partial || turn.Provider != Anthropic {
		t.Errorf("turn %+v", turn)
	}
	if turn.Messages != 3 || turn.Tools != 2 || turn.BytesIn != int64(len(claudeBody)) || turn.BytesOut != int64(len(anthropicStream)) {
		t.Errorf("counts: messages %d tools %d in %d out %d", turn.Messages, turn.Tools, turn.BytesIn, turn.BytesOut)
	}
	if turn.TTFBMs <= 0 || turn.LatencyMs < turn.TTFBMs {
		t.Errorf("ttfb %v latency %v", turn.TTFBMs, turn.LatencyMs)
	}
	if ev.Client != "claude-code" || ev.SessionID != "11111111-2222-3333-4444-555555555555" {
		t.Errorf("client %q session %q", ev.Client, ev.SessionID)
	}
	if turn.CostUSD != 1445.0/1e6 || turn.Reliability != event.ReliabilityAccurate {
		t.Errorf("cost %v reliability %s", turn.CostUSD, turn.Reliability)
	}
	raw, _ := json.Marshal(ev)
	if bytes.Contains(raw, []byte("sk-ant-secret-value")) {
		t.Fatal("the API key reached the event")
	}
}

func TestProxy_SessionHeaderWins(t *testing.T) {
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, anthropicStream)
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(claudeBody))
	req.Header.Set("X-Claude-Code-Session-Id", "from-header")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if ev := cp.nextEvent(t); ev.SessionID != "from-header" || ev.Client != "claude-code" {
		t.Fatalf("session %q client %q", ev.SessionID, ev.Client)
	}
}

// TestProxy_StreamNotBuffered: the client reads the first event while the upstream still holds
// the rest back.
func TestProxy_StreamNotBuffered(t *testing.T) {
	release := make(chan struct{})
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		parts := strings.SplitAfterN(anthropicStream, "\n\n", 2)
		io.WriteString(w, parts[0])
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, parts[1])
	})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make(chan string, 1)
	go func() {
		br := bufio.NewReader(resp.Body)
		var first strings.Builder
		for {
			line, err := br.ReadString('\n')
			first.WriteString(line)
			if line == "\n" || err != nil {
				break
			}
		}
		got <- first.String()
		io.Copy(io.Discard, br)
	}()
	select {
	case first := <-got:
		if !strings.Contains(first, "message_start") {
			t.Fatalf("first event %q", first)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not reach the client while the upstream held the rest: the stream is buffered")
	}
	close(release)
	if turn := cp.next(t); turn.Output != 45 || turn.Partial {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_OpenAIResponsesStream(t *testing.T) {
	stream := "event: response.created\n" +
		`data: {"type":"response.created","response":{"id":"resp_1","model":"gpt-5.2-codex","status":"in_progress"}}` + "\n\n" +
		"event: response.output_text.delta\n" +
		`data: {"type":"response.output_text.delta","delta":"ok"}` + "\n\n" +
		"event: response.completed\n" +
		`data: {"type":"response.completed","response":{"id":"resp_1","model":"gpt-5.2-codex","status":"completed","usage":{"input_tokens":1100,"input_tokens_details":{"cached_tokens":1000},"output_tokens":60,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":1160}}}` + "\n\n"
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/responses", strings.NewReader(`{"model":"gpt-5.2-codex","stream":true,"input":[{"type":"message"},{"type":"message"}],"tools":[{"type":"function","name":"exec_command"}]}`))
	req.Header.Set("Authorization", "Bearer sk-openai-secret")
	req.Header.Set("session-id", "019b7f94-51b4-7593-922e-ba12b5b73b52")
	req.Header.Set("originator", "codex_exec")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != stream {
		t.Fatal("client got a different stream")
	}
	ev := cp.nextEvent(t)
	want := event.Tokens{Input: 100, Output: 60, CacheRead: 1000, Reasoning: 20}
	if ev.APITurn.Tokens != want || ev.APITurn.MessageID != "resp_1" || ev.APITurn.Messages != 2 || ev.APITurn.Tools != 1 {
		t.Fatalf("turn %+v", ev.APITurn)
	}
	if ev.Client != "codex" || ev.SessionID != "019b7f94-51b4-7593-922e-ba12b5b73b52" {
		t.Fatalf("client %q session %q", ev.Client, ev.SessionID)
	}
}

func chatStream(withUsage bool) string {
	s := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	if withUsage {
		s += `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":20},"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n"
	}
	return s + "data: [DONE]\n\n"
}

func TestProxy_ChatStreamUsageInjected(t *testing.T) {
	var upstreamBody map[string]any
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&upstreamBody)
		so, _ := upstreamBody["stream_options"].(map[string]any)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chatStream(so["include_usage"] == true))
	})
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"temperature":0.2,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if upstreamBody["temperature"] != 0.2 || upstreamBody["model"] != "gpt-4o" {
		t.Fatalf("upstream body lost fields: %v", upstreamBody)
	}
	if string(body) != chatStream(false) {
		t.Fatalf("client saw the injected usage chunk or lost others:\n%s", body)
	}
	turn := cp.next(t)
	if want := (event.Tokens{Input: 30, Output: 7, CacheRead: 20}); turn.Tokens != want || turn.StopReason != "stop" {
		t.Fatalf("turn %+v", turn)
	}

	// A client that asks for usage itself gets the chunk.
	resp, err = http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != chatStream(true) {
		t.Fatalf("client lost its usage chunk:\n%s", body)
	}
	if turn := cp.next(t); turn.Input != 30 {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_GzipJSONPassedThroughAndRead(t *testing.T) {
	plain := `{"id":"msg_gz","type":"message","model":"claude-haiku-4-5","stop_reason":"tool_use","usage":{"input_tokens":7,"output_tokens":9,"cache_read_input_tokens":3,"cache_creation_input_tokens":0}}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(plain))
	zw.Close()
	var gotAE string
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		gotAE = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-haiku-4-5","messages":[]}`))
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression on the client side
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, gz.Bytes()) || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatal("client did not get the upstream's compressed bytes")
	}
	if gotAE != "gzip, deflate" {
		t.Fatalf("upstream was offered %q", gotAE)
	}
	turn := cp.next(t)
	if want := (event.Tokens{Input: 7, Output: 9, CacheRead: 3}); turn.Tokens != want || turn.MessageID != "msg_gz" || turn.StopReason != "tool_use" {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_UpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	deadURL := up.URL
	up.Close()
	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: deadURL, OpenAIUpstream: deadURL, Publisher: cp})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatal(err)
	}
	var ae struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	json.NewDecoder(resp.Body).Decode(&ae)
	resp.Body.Close()
	if resp.StatusCode != 502 || ae.Type != "error" || ae.Error.Type != "api_error" || !strings.Contains(ae.Error.Message, "could not be reached") {
		t.Fatalf("anthropic: %d %+v", resp.StatusCode, ae)
	}
	turn := cp.next(t)
	if turn.Status != 502 || turn.ErrorClass != "upstream_unreachable" || turn.Model != "claude-sonnet-4-5-20250929" {
		t.Fatalf("turn %+v", turn)
	}

	resp, err = http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"gpt-5"}`))
	if err != nil {
		t.Fatal(err)
	}
	var oe struct {
		Error struct{ Message, Type string }
	}
	json.NewDecoder(resp.Body).Decode(&oe)
	resp.Body.Close()
	if resp.StatusCode != 502 || oe.Error.Type != "upstream_unreachable" || oe.Error.Message == "" {
		t.Fatalf("openai: %d %+v", resp.StatusCode, oe)
	}
	if turn := cp.next(t); turn.Status != 502 || turn.Provider != OpenAI {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_UpstreamErrorPassedThrough(t *testing.T) {
	errBody := `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after", "17")
		w.WriteHeader(429)
		io.WriteString(w, errBody)
	})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || string(body) != errBody || resp.Header.Get("retry-after") != "17" {
		t.Fatalf("client got %d %q", resp.StatusCode, body)
	}
	turn := cp.next(t)
	if turn.Status != 429 || turn.ErrorClass != "rate_limit_error" || !strings.Contains(turn.ErrorMessage, "rate limit") {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_ClientDisconnectMidStream(t *testing.T) {
	upstreamGone := make(chan struct{})
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		parts := strings.SplitAfterN(anthropicStream, "\n\n", 2)
		io.WriteString(w, parts[0])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(upstreamGone)
		case <-time.After(10 * time.Second):
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", strings.NewReader(claudeBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	br.ReadString('\n')
	cancel()
	resp.Body.Close()
	select {
	case <-upstreamGone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
	turn := cp.next(t)
	if !turn.Partial || turn.ErrorClass != "client_disconnected" || turn.Input != 100 || turn.MessageID != "msg_01abc" {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_TruncatedStream(t *testing.T) {
	cut := anthropicStream[:strings.Index(anthropicStream, "event: message_delta")]
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, cut)
	})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(claudeBody))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != cut {
		t.Fatal("client did not get what the upstream sent")
	}
	turn := cp.next(t)
	if !turn.Partial || turn.ErrorClass != "stream_truncated" || turn.Input != 100 || turn.CacheRead != 1000 {
		t.Fatalf("turn %+v", turn)
	}
}

func TestProxy_BodyNotJSONAndHugeBody(t *testing.T) {
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		if r.Header.Get("X-Case") == "garbage" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"There was an issue with the format of your request: invalid JSON"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_big","model":"claude-opus-4-5","usage":{"input_tokens":%d,"output_tokens":1},"x_sha":"%x"}`, n, h.Sum(nil))
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader("this is { not json"))
	req.Header.Set("X-Case", "garbage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if turn := cp.next(t); turn.Status != 400 || turn.ErrorClass != "invalid_request_error" {
		t.Fatalf("turn %+v", turn)
	}

	// Valid JSON of exactly the default [proxy] max_body_bytes: forwarded intact.
	prefix, suffix := `{"model":"claude-opus-4-5","messages":[{"role":"user","content":"`, `"}]}`
	big := make([]byte, 0, DefaultMaxBodyBytes)
	big = append(big, prefix...)
	big = append(big, bytes.Repeat([]byte("a"), DefaultMaxBodyBytes-len(prefix)-len(suffix))...)
	big = append(big, suffix...)
	sum := sha256.Sum256(big)
	resp, err = http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Sha string `json:"x_sha"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out.Sha != fmt.Sprintf("%x", sum) {
		t.Fatal("the 64 MiB body reached the upstream altered")
	}
	if turn := cp.next(t); turn.BytesIn != int64(len(big)) || turn.Input != int64(len(big)) || turn.Messages != 1 {
		t.Fatalf("turn bytes_in %d input %d messages %d", turn.BytesIn, turn.Input, turn.Messages)
	}
}

func TestProxy_OtherPathsPassThroughUnrecorded(t *testing.T) {
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	})
	for _, tc := range []struct{ method, path string }{{"GET", "/v1/models"}, {"HEAD", "/"}, {"GET", "/v1/responses"}} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.method == "GET" && string(body) != tc.method+" "+tc.path {
			t.Fatalf("%s %s: %q", tc.method, tc.path, body)
		}
	}
	select {
	case ev := <-cp.ch:
		t.Fatalf("a pass-through request was recorded: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestProxy_UnpricedModel(t *testing.T) {
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"x","model":"unpriced","usage":{"input_tokens":5,"output_tokens":5}}`)
	})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"unpriced"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if turn := cp.next(t); turn.Reliability != event.ReliabilityUnknown || turn.CostUSD != 0 {
		t.Fatalf("turn %+v", turn)
	}
}

func TestSessionFromUserID(t *testing.T) {
	for in, want := range map[string]string{
		`{"device_id":"abc","account_uuid":"","session_id":"0f9e8d7c-1111-2222-3333-444455556666"}`: "0f9e8d7c-1111-2222-3333-444455556666",
		"user_0123abcd_account__session_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee":                       "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
		"":        "",
		"someone": "",
	} {
		if got := sessionFromUserID(in); got != want {
			t.Errorf("sessionFromUserID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProxy_EventKeyOrder: usage is read whatever the order of the keys in an event.
func TestProxy_EventKeyOrder(t *testing.T) {
	stream := `data: {"message":{"id":"msg_sorted","model":"m","usage":{"input_tokens":5,"output_tokens":1}},"type":"message_start"}` + "\n\n" +
		`data: {"delta":{"stop_reason":"end_turn"},"type":"message_delta","usage":{"output_tokens":9}}` + "\n\n" +
		`data: {"type":"message_stop"}` + "\n\n"
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if turn := cp.next(t); turn.MessageID != "msg_sorted" || turn.Input != 5 || turn.Output != 9 || turn.StopReason != "end_turn" {
		t.Fatalf("turn %+v", turn)
	}
}
