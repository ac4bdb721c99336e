package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var testUsage = Usage{Input: 120, Output: 45, CacheRead: 1000, CacheWrite5m: 200, CacheWrite1h: 100, Reasoning: 10}

const (
	secretKey    = "sk-ant-SECRET-key-value-1234"
	secretBearer = "Bearer sk-SECRET-bearer-5678"
)

// do sends one request straight to the handler.
func do(tb testing.TB, h http.Handler, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

var (
	anthropicHdr = map[string]string{"x-api-key": secretKey, "anthropic-version": "2023-06-01",
		"X-Claude-Code-Session-Id": "sess-claude-1", "content-type": "application/json"}
	openaiHdr = map[string]string{"Authorization": secretBearer, "session-id": "sess-codex-1",
		"content-type": "application/json"}
)

// decode unmarshals a JSON body into a generic map.
func decode(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("response is not a JSON object: %v\n%s", err, b)
	}
	return m
}

// at walks a decoded JSON value by object keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// num reads a JSON number as int64.
func num(tb testing.TB, v any) int64 {
	tb.Helper()
	f, ok := v.(float64)
	if !ok {
		tb.Fatalf("not a number: %#v", v)
	}
	return int64(f)
}

type event struct {
	name string
	data map[string]any
	raw  string
}

// readSSE parses a server-sent event stream; a "[DONE]" data line becomes an event with raw set.
func readSSE(tb testing.TB, body []byte) []event {
	tb.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != nil || cur.raw != "" {
				out = append(out, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			d := strings.TrimPrefix(line, "data: ")
			if d == "[DONE]" {
				cur.raw = d
				continue
			}
			cur.data = decode(tb, []byte(d))
		}
	}
	return out
}

func names(evs []event) []string {
	var n []string
	for _, e := range evs {
		n = append(n, e.name)
	}
	return n
}

const (
	anthropicTools = `"tools":[{"name":"Read","input_schema":{"type":"object"}},{"name":"Bash","input_schema":{"type":"object"}}]`
	anthropicAsk   = `{"role":"user","content":[{"type":"text","text":"list the files"}]}`
	anthropicTool  = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a\nb"}]}`
)

func wantAnthropicUsage(tb testing.TB, u any, output int64) {
	tb.Helper()
	got := map[string]int64{
		"input_tokens":                num(tb, at(u, "input_tokens")),
		"cache_read_input_tokens":     num(tb, at(u, "cache_read_input_tokens")),
		"cache_creation_input_tokens": num(tb, at(u, "cache_creation_input_tokens")),
		"5m":                          num(tb, at(u, "cache_creation", "ephemeral_5m_input_tokens")),
		"1h":                          num(tb, at(u, "cache_creation", "ephemeral_1h_input_tokens")),
		"output_tokens":               num(tb, at(u, "output_tokens")),
	}
	want := map[string]int64{"input_tokens": 120, "cache_read_input_tokens": 1000,
		"cache_creation_input_tokens": 300, "5m": 200, "1h": 100, "output_tokens": output}
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("usage = %v, want %v", got, want)
	}
}

func TestServer_Probes(t *testing.T) {
	s := New(Config{})
	for _, m := range []string{http.MethodHead, http.MethodGet} {
		if w := do(t, s, m, "/", "", nil); w.Code != http.StatusOK {
			t.Errorf("%s / = %d, want 200", m, w.Code)
		}
	}
	w := do(t, s, http.MethodGet, "/v1/models", "", openaiHdr)
	if w.Code != http.StatusOK || at(decode(t, w.Body.Bytes()), "data", 0, "id") == nil {
		t.Errorf("GET /v1/models (OpenAI) = %d %s", w.Code, w.Body)
	}
	w = do(t, s, http.MethodGet, "/v1/models", "", anthropicHdr)
	if m := decode(t, w.Body.Bytes()); at(m, "data", 0, "type") != "model" || at(m, "has_more") != false {
		t.Errorf("GET /v1/models (Anthropic) = %d %s", w.Code, w.Body)
	}
	for _, r := range s.Requests() {
		if r.Action != ActionInfo || r.Status != http.StatusOK {
			t.Errorf("probe recorded as %+v", r)
		}
	}
}

func TestServer_AnthropicMessages(t *testing.T) {
	s := New(Config{Usage: testUsage})
	t.Run("ToolCall", func(t *testing.T) {
		body := `{"model":"claude-x","max_tokens":10,"metadata":{"user_id":"{\"session_id\":\"s1\"}"},` +
			anthropicTools + `,"messages":[` + anthropicAsk + `]}`
		w := do(t, s, http.MethodPost, "/v1/messages?beta=true", body, anthropicHdr)
		m := decode(t, w.Body.Bytes())
		if w.Code != 200 || at(m, "type") != "message" || at(m, "model") != "claude-x" || at(m, "stop_reason") != "tool_use" {
			t.Fatalf("response = %d %s", w.Code, w.Body)
		}
		if at(m, "content", 0, "type") != "text" || at(m, "content", 1, "type") != "tool_use" || at(m, "content", 1, "name") != "Bash" ||
			at(m, "content", 1, "input", "command") != "ls" || at(m, "content", 1, "id") == "" || at(m, "content", 2) != nil {
			t.Errorf("content = %v, want a text and one Bash tool_use with command ls", at(m, "content"))
		}
		wantAnthropicUsage(t, at(m, "usage"), 45)
	})
	t.Run("FinalTextAfterToolResult", func(t *testing.T) {
		// Claude Code puts role "system" messages in the conversation, even after a tool result.
		body := `{"model":"claude-x",` + anthropicTools + `,"messages":[` + anthropicAsk +
			`,{"role":"system","content":"note"},` + anthropicTool + `,{"role":"system","content":"note"}]}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/messages", body, anthropicHdr).Body.Bytes())
		if at(m, "stop_reason") != "end_turn" || at(m, "content", 0, "text") != TextAfterTool {
			t.Errorf("response = %v, want final text %q", m, TextAfterTool)
		}
	})
	t.Run("NoTools", func(t *testing.T) {
		m := decode(t, do(t, s, http.MethodPost, "/v1/messages", `{"model":"m","messages":[`+anthropicAsk+`]}`, anthropicHdr).Body.Bytes())
		if at(m, "content", 0, "text") != TextNoTools {
			t.Errorf("response = %v, want final text", m)
		}
	})
	t.Run("FirstToolWithoutBash", func(t *testing.T) {
		body := `{"model":"m","tools":[{"type":"web_search_20250305","name":"web_search"},{"name":"Read","input_schema":{}}],"messages":[` + anthropicAsk + `]}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/messages", body, anthropicHdr).Body.Bytes())
		if at(m, "content", 1, "name") != "Read" || !reflect.DeepEqual(at(m, "content", 1, "input"), map[string]any{}) {
			t.Errorf("content = %v, want Read with {}", at(m, "content"))
		}
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		// Claude Code's session-title request.
		body := `{"model":"m","tools":[],"output_config":{"format":{"type":"json_schema","schema":{"type":"object",` +
			`"properties":{"title":{"type":"string"}},"required":["title"]}}},"messages":[` + anthropicAsk + `]}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/messages", body, anthropicHdr).Body.Bytes())
		text, _ := at(m, "content", 0, "text").(string)
		if title, _ := at(decode(t, []byte(text)), "title").(string); title == "" {
			t.Errorf("text = %q, want a JSON object with a title", text)
		}
	})
	t.Run("Stream", func(t *testing.T) {
		body := `{"model":"claude-x","stream":true,` + anthropicTools + `,"messages":[` + anthropicAsk + `]}`
		w := do(t, s, http.MethodPost, "/v1/messages?beta=true", body, anthropicHdr)
		if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type = %q", ct)
		}
		evs := readSSE(t, w.Body.Bytes())
		want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_stop",
			"content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
		if got := names(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("events = %v, want %v", got, want)
		}
		wantAnthropicUsage(t, at(evs[0].data, "message", "usage"), 1)
		if at(evs[6].data, "index") != 1.0 || at(evs[6].data, "content_block", "name") != "Bash" {
			t.Errorf("second content_block_start = %v", evs[6].data)
		}
		var input map[string]any
		json.Unmarshal([]byte(at(evs[7].data, "delta", "partial_json").(string)), &input)
		if input["command"] != "ls" {
			t.Errorf("tool input = %v", evs[7].data)
		}
		md := evs[9].data
		if at(md, "delta", "stop_reason") != "tool_use" || num(t, at(md, "usage", "output_tokens")) != 45 ||
			num(t, at(md, "usage", "input_tokens")) != 120 || num(t, at(md, "usage", "cache_read_input_tokens")) != 1000 ||
			num(t, at(md, "usage", "cache_creation_input_tokens")) != 300 {
			t.Errorf("message_delta = %v, want the final output and the same input buckets as message_start", md)
		}

		body = `{"model":"claude-x","stream":true,` + anthropicTools + `,"messages":[` + anthropicAsk + `,` + anthropicTool + `]}`
		evs = readSSE(t, do(t, s, http.MethodPost, "/v1/messages", body, anthropicHdr).Body.Bytes())
		var text string
		for _, e := range evs {
			if e.name == "content_block_delta" {
				text += at(e.data, "delta", "text").(string)
			}
		}
		if text != TextAfterTool {
			t.Errorf("streamed text = %q, want %q", text, TextAfterTool)
		}
	})
	t.Run("CountTokens", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1/messages/count_tokens", `{"model":"m","messages":[]}`, anthropicHdr)
		if n := num(t, at(decode(t, w.Body.Bytes()), "input_tokens")); n != 120+1000+200+100 {
			t.Errorf("input_tokens = %d", n)
		}
	})

	reqs := s.Requests()
	first := reqs[0]
	if first.Provider != ProviderAnthropic || first.Action != ActionToolCall || first.Tool != "Bash" ||
		first.Model != "claude-x" || first.SessionID != "sess-claude-1" || first.Path != "/v1/messages?beta=true" ||
		first.Headers["Anthropic-Version"] != "2023-06-01" || !first.HasAPIKey || first.HasAuthorization {
		t.Errorf("first record = %+v", first)
	}
	wantRec := map[string]int64{"input_tokens": 120, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 300,
		"cache_creation.ephemeral_5m_input_tokens": 200, "cache_creation.ephemeral_1h_input_tokens": 100, "output_tokens": 45}
	if !reflect.DeepEqual(first.Usage, wantRec) {
		t.Errorf("recorded usage = %v, want %v", first.Usage, wantRec)
	}
	if r := reqs[1]; r.Action != ActionFinalText || r.Stream {
		t.Errorf("second record = %+v", r)
	}
}

func TestServer_AnthropicSessionFromMetadata(t *testing.T) {
	s := New(Config{})
	hdr := map[string]string{"x-api-key": secretKey}
	do(t, s, http.MethodPost, "/v1/messages", `{"model":"m","metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"from-body\"}"},"messages":[]}`, hdr)
	if got := s.Requests()[0].SessionID; got != "from-body" {
		t.Errorf("SessionID = %q, want the metadata.user_id session_id", got)
	}
}

const (
	execSchema = `{"type":"object","properties":{"command_line":{"type":"string"},"login":{"type":"boolean"}},"required":["login","command_line"]}`
	respTools  = `"tools":[{"type":"web_search"},{"type":"function","name":"write_stdin","parameters":{}},{"type":"function","name":"exec_command","parameters":` + execSchema + `}]`
	respAsk    = `{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}`
	respOutput = `{"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"a\nb"}`
)

func wantResponsesUsage(tb testing.TB, u any) {
	tb.Helper()
	got := []int64{num(tb, at(u, "input_tokens")), num(tb, at(u, "input_tokens_details", "cached_tokens")),
		num(tb, at(u, "output_tokens")), num(tb, at(u, "output_tokens_details", "reasoning_tokens")), num(tb, at(u, "total_tokens"))}
	if want := []int64{1120, 1000, 45, 10, 1165}; !reflect.DeepEqual(got, want) {
		tb.Errorf("usage [input cached output reasoning total] = %v, want %v", got, want)
	}
}

func TestServer_OpenAIResponses(t *testing.T) {
	s := New(Config{Usage: testUsage})
	t.Run("ToolCall", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1/responses", `{"model":"gpt-x",`+respTools+`,"input":[`+respAsk+`]}`, openaiHdr)
		m := decode(t, w.Body.Bytes())
		item := at(m, "output", 0)
		if at(m, "object") != "response" || at(m, "status") != "completed" || at(m, "model") != "gpt-x" ||
			at(item, "type") != "function_call" || at(item, "name") != "exec_command" || at(item, "call_id") == "" {
			t.Fatalf("response = %d %s", w.Code, w.Body)
		}
		// The argument is the schema's required string parameter, not a guessed name.
		if args := at(item, "arguments"); args != `{"command_line":"ls"}` {
			t.Errorf("arguments = %v", args)
		}
		wantResponsesUsage(t, at(m, "usage"))
	})
	t.Run("Shell", func(t *testing.T) {
		body := `{"model":"m","tools":[{"type":"function","name":"other"},{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array"}}}}],"input":"hi"}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/responses", body, openaiHdr).Body.Bytes())
		if at(m, "output", 0, "name") != "shell" || at(m, "output", 0, "arguments") != `{"command":["ls"]}` {
			t.Errorf("output = %v", at(m, "output"))
		}
	})
	t.Run("FirstFunction", func(t *testing.T) {
		body := `{"model":"m","tools":[{"type":"web_search"},{"type":"function","name":"other"}],"input":"hi"}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/responses", body, openaiHdr).Body.Bytes())
		if at(m, "output", 0, "name") != "other" || at(m, "output", 0, "arguments") != `{}` {
			t.Errorf("output = %v", at(m, "output"))
		}
	})
	t.Run("FinalText", func(t *testing.T) {
		m := decode(t, do(t, s, http.MethodPost, "/v1/responses", `{"model":"m",`+respTools+`,"input":[`+respAsk+`,`+respOutput+`]}`, openaiHdr).Body.Bytes())
		if at(m, "output", 0, "type") != "message" || at(m, "output", 0, "content", 0, "text") != TextAfterTool {
			t.Errorf("output = %v", at(m, "output"))
		}
	})
	t.Run("Stream", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1/responses", `{"model":"gpt-x","stream":true,`+respTools+`,"input":[`+respAsk+`]}`, openaiHdr)
		evs := readSSE(t, w.Body.Bytes())
		want := []string{"response.created", "response.in_progress", "response.output_item.added",
			"response.function_call_arguments.delta", "response.function_call_arguments.done",
			"response.output_item.done", "response.completed"}
		if got := names(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("events = %v, want %v", got, want)
		}
		for i, e := range evs {
			if at(e.data, "type") != e.name || num(t, at(e.data, "sequence_number")) != int64(i) {
				t.Errorf("event %d = %v", i, e.data)
			}
		}
		done := at(evs[5].data, "item")
		if at(done, "name") != "exec_command" || at(done, "arguments") != `{"command_line":"ls"}` {
			t.Errorf("output_item.done = %v", done)
		}
		completed := at(evs[6].data, "response")
		if at(completed, "status") != "completed" || at(completed, "output", 0, "call_id") != at(done, "call_id") {
			t.Errorf("response.completed = %v", completed)
		}
		wantResponsesUsage(t, at(completed, "usage"))

		evs = readSSE(t, do(t, s, http.MethodPost, "/v1/responses", `{"model":"m","stream":true,`+respTools+`,"input":[`+respAsk+`,`+respOutput+`]}`, openaiHdr).Body.Bytes())
		var text string
		for _, e := range evs {
			if e.name == "response.output_text.delta" {
				text += at(e.data, "delta").(string)
			}
		}
		if text != TextAfterTool || at(evs[len(evs)-1].data, "response", "output", 0, "content", 0, "text") != TextAfterTool {
			t.Errorf("streamed text = %q; events %v", text, names(evs))
		}
	})
	t.Run("WebSocket", func(t *testing.T) {
		w := do(t, s, http.MethodGet, "/v1/responses", "", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Authorization": secretBearer})
		if w.Code != http.StatusUpgradeRequired || at(decode(t, w.Body.Bytes()), "error", "message") == nil {
			t.Errorf("WebSocket upgrade = %d %s, want 426", w.Code, w.Body)
		}
	})

	r := s.Requests()[0]
	want := map[string]int64{"input_tokens": 1120, "input_tokens_details.cached_tokens": 1000, "output_tokens": 45,
		"output_tokens_details.reasoning_tokens": 10, "total_tokens": 1165}
	if r.Provider != ProviderOpenAI || r.Action != ActionToolCall || r.Tool != "exec_command" || r.SessionID != "sess-codex-1" ||
		!r.HasAuthorization || r.HasAPIKey || !reflect.DeepEqual(r.Usage, want) {
		t.Errorf("first record = %+v", r)
	}
}

const chatTools = `"tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]`

func TestServer_OpenAIChat(t *testing.T) {
	s := New(Config{Usage: testUsage})
	wantUsage := func(t *testing.T, u any) {
		t.Helper()
		got := []int64{num(t, at(u, "prompt_tokens")), num(t, at(u, "prompt_tokens_details", "cached_tokens")),
			num(t, at(u, "completion_tokens")), num(t, at(u, "completion_tokens_details", "reasoning_tokens")), num(t, at(u, "total_tokens"))}
		if want := []int64{1120, 1000, 45, 10, 1165}; !reflect.DeepEqual(got, want) {
			t.Errorf("usage [prompt cached completion reasoning total] = %v, want %v", got, want)
		}
	}
	t.Run("ToolCall", func(t *testing.T) {
		m := decode(t, do(t, s, http.MethodPost, "/v1/chat/completions", `{"model":"gpt-x",`+chatTools+`,"messages":[{"role":"user","content":"hi"}]}`, openaiHdr).Body.Bytes())
		call := at(m, "choices", 0, "message", "tool_calls", 0)
		if at(m, "object") != "chat.completion" || at(m, "choices", 0, "finish_reason") != "tool_calls" ||
			at(call, "function", "name") != "shell" || at(call, "function", "arguments") != `{"command":"ls"}` {
			t.Errorf("response = %v", m)
		}
		wantUsage(t, at(m, "usage"))
	})
	t.Run("FinalText", func(t *testing.T) {
		body := `{"model":"m",` + chatTools + `,"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c","content":"x"}]}`
		m := decode(t, do(t, s, http.MethodPost, "/v1/chat/completions", body, openaiHdr).Body.Bytes())
		if at(m, "choices", 0, "message", "content") != TextAfterTool || at(m, "choices", 0, "finish_reason") != "stop" {
			t.Errorf("response = %v", m)
		}
	})
	t.Run("StreamWithoutUsage", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openaiHdr)
		evs := readSSE(t, w.Body.Bytes())
		if evs[len(evs)-1].raw != "[DONE]" {
			t.Fatalf("stream does not end with [DONE]: %s", w.Body)
		}
		var text string
		for _, e := range evs[:len(evs)-1] {
			if _, ok := e.data["usage"]; ok || len(at(e.data, "choices").([]any)) == 0 {
				t.Errorf("chunk %v carries usage without stream_options.include_usage", e.data)
			}
			if c, ok := at(e.data, "choices", 0, "delta", "content").(string); ok {
				text += c
			}
		}
		if text != TextNoTools {
			t.Errorf("text = %q", text)
		}
		if r := s.Requests(); r[len(r)-1].Usage != nil {
			t.Errorf("recorded usage %v for a response without usage", r[len(r)-1].Usage)
		}
	})
	t.Run("StreamWithUsage", func(t *testing.T) {
		body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},` + chatTools + `,"messages":[{"role":"user","content":"hi"}]}`
		evs := readSSE(t, do(t, s, http.MethodPost, "/v1/chat/completions", body, openaiHdr).Body.Bytes())
		last := evs[len(evs)-2].data
		if choices := at(last, "choices").([]any); len(choices) != 0 {
			t.Errorf("usage chunk has choices %v", choices)
		}
		wantUsage(t, at(last, "usage"))
		var args string
		for _, e := range evs[:len(evs)-2] {
			if u, ok := e.data["usage"]; !ok || u != nil {
				t.Errorf("chunk %v: want usage null before the last chunk", e.data)
			}
			if a, ok := at(e.data, "choices", 0, "delta", "tool_calls", 0, "function", "arguments").(string); ok {
				args += a
			}
		}
		if args != `{"command":"ls"}` {
			t.Errorf("streamed arguments = %q", args)
		}
		if r := s.Requests(); r[len(r)-1].Usage["prompt_tokens"] != 1120 {
			t.Errorf("recorded usage = %v", r[len(r)-1].Usage)
		}
	})
}

func TestServer_Errors(t *testing.T) {
	s := New(Config{})
	w := do(t, s, http.MethodPost, "/v1/messages", "not json", anthropicHdr)
	if m := decode(t, w.Body.Bytes()); w.Code != 400 || at(m, "type") != "error" || at(m, "error", "type") != "invalid_request_error" || at(m, "error", "message") == "" {
		t.Errorf("Anthropic bad body = %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/v1/responses", "/v1/chat/completions"} {
		w := do(t, s, http.MethodPost, p, "{", openaiHdr)
		if m := decode(t, w.Body.Bytes()); w.Code != 400 || at(m, "error", "type") != "invalid_request_error" || at(m, "error", "message") == "" {
			t.Errorf("%s bad body = %d %s", p, w.Code, w.Body)
		}
	}
	w = do(t, s, http.MethodPost, "/v1/messages/batches", "{}", anthropicHdr)
	if m := decode(t, w.Body.Bytes()); w.Code != 404 || at(m, "type") != "error" || at(m, "error", "type") != "not_found_error" {
		t.Errorf("Anthropic 404 = %d %s", w.Code, w.Body)
	}
	w = do(t, s, http.MethodPost, "/v1/embeddings", "{}", openaiHdr)
	if m := decode(t, w.Body.Bytes()); w.Code != 404 || at(m, "error", "message") == nil {
		t.Errorf("OpenAI 404 = %d %s", w.Code, w.Body)
	}
	for _, r := range s.Requests() {
		if r.Action != ActionError || r.Status < 400 {
			t.Errorf("record = %+v, want an error", r)
		}
	}
}

func TestServer_IDsAndModel(t *testing.T) {
	s := New(Config{Model: "override-model"})
	seen := map[string]bool{}
	for range 3 {
		for _, p := range []string{"/v1/messages", "/v1/responses", "/v1/chat/completions"} {
			m := decode(t, do(t, s, http.MethodPost, p, `{"model":"asked","messages":[],"input":"hi"}`, nil).Body.Bytes())
			id, _ := m["id"].(string)
			if id == "" || seen[id] {
				t.Errorf("%s id %q is empty or repeated", p, id)
			}
			seen[id] = true
			if m["model"] != "override-model" {
				t.Errorf("%s model = %v, want the Config.Model override", p, m["model"])
			}
		}
	}
}

func TestServer_Latency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{Latency: 3 * time.Second})
		start := time.Now()
		do(t, s, http.MethodPost, "/v1/messages", `{"model":"m","messages":[]}`, nil)
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("answered after %v, want 3s", d)
		}
		start = time.Now()
		do(t, s, http.MethodHead, "/", "", nil)
		if d := time.Since(start); d != 0 {
			t.Errorf("probe answered after %v, want at once", d)
		}
	})
}

func TestServer_NoCredentialsRecorded(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	s := New(Config{Usage: testUsage, LogPath: logPath})
	do(t, s, http.MethodPost, "/v1/messages?key="+secretKey, `{"model":"m","messages":[]}`, anthropicHdr)
	do(t, s, http.MethodPost, "/v1/messages", "not json", anthropicHdr)
	do(t, s, http.MethodPost, "/v1/responses", `{"model":"m","input":"hi","stream":true}`, openaiHdr)
	do(t, s, http.MethodGet, "/v1/responses", "", map[string]string{"Upgrade": "websocket", "Authorization": secretBearer})
	do(t, s, http.MethodPost, "/nowhere", "", map[string]string{"Authorization": secretBearer, "x-api-key": secretKey})

	recs, err := json.Marshal(s.Requests())
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"Requests()": recs, "log file": file} {
		for _, secret := range []string{"SECRET", "sk-ant", "sk-SECRET"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s contains %q:\n%s", name, secret, b)
			}
		}
	}
	lines := strings.Split(strings.TrimSpace(string(file)), "\n")
	if len(lines) != 5 {
		t.Fatalf("log file has %d lines, want 5", len(lines))
	}
	var first Request
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || !first.HasAPIKey || first.Path != "/v1/messages?key=REDACTED" {
		t.Errorf("first log line = %+v (%v)", first, err)
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode = %v, want 0600", fi.Mode())
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes and reads of TestRun.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestRun(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, []string{"--addr", "127.0.0.1:0", "--log", logPath, "--usage-input", "7", "--usage-cache-write-1h", "9"}, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if _, after, ok := strings.Cut(stderr.String(), "listening on "); ok {
			base = strings.TrimSpace(after)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listen address on stderr: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, must(io.ReadAll(resp.Body)))
	resp.Body.Close()
	if num(t, at(m, "usage", "input_tokens")) != 7 || num(t, at(m, "usage", "cache_creation", "ephemeral_1h_input_tokens")) != 9 ||
		num(t, at(m, "usage", "output_tokens")) != DefaultUsage.Output {
		t.Errorf("usage = %v, want the flags' values and the defaults", at(m, "usage"))
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if b, _ := os.ReadFile(logPath); bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("log = %q, want one line", b)
	}

	for _, args := range [][]string{{"--bogus"}, {"extra"}} {
		if err := Run(context.Background(), args, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("Run %v = %v, want ErrUsage", args, err)
		}
	}
	if err := Run(context.Background(), []string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("Run -h = %v, want flag.ErrHelp", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The scripted tool call can be a given command or a Read of a given file, and every POST body
// can be kept as it arrived.
func TestServer_CommandReadAndBodies(t *testing.T) {
	dir := t.TempDir()
	s := New(Config{Command: "cat data.json", ReadPath: "/r/data.json", BodyDir: dir})
	bash := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"go"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`
	read := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"go"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"name":"Read","input_schema":{"type":"object"}}]}`
	for _, tc := range []struct{ body, want string }{
		{bash, `"input":{"command":"cat data.json"}`},
		{read, `"input":{"file_path":"/r/data.json"}`},
	} {
		w := do(t, s, "POST", "/v1/messages", tc.body, map[string]string{"anthropic-version": "2023-06-01"})
		if !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("answer %s, want %s", w.Body.String(), tc.want)
		}
	}
	w := do(t, s, "POST", "/v1/responses", `{"model":"m","input":"go","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}`, nil)
	if !strings.Contains(w.Body.String(), `cat data.json`) {
		t.Errorf("responses answer %s, want the command", w.Body.String())
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) != 3 || filepath.Base(names[0]) != "000001-v1-messages.json" || filepath.Base(names[2]) != "000003-v1-responses.json" {
		t.Fatalf("saved bodies %v", names)
	}
	if b, _ := os.ReadFile(names[1]); string(b) != read {
		t.Errorf("saved body %q, want the request's", b)
	}
}
