package fakeapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const (
	geminiKey   = "AIzaSyD-fakeapi-test-key-0123456789"
	geminiTools = `"tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"OBJECT","properties":{"path":{"type":"STRING"}},"required":["path"]}},` +
		`{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}}]}]`
	geminiAsk    = `{"role":"user","parts":[{"text":"list the files"}]}`
	geminiResult = `{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"a\nb"}}}]}`
)

var geminiHdr = map[string]string{"x-goog-api-key": geminiKey, "content-type": "application/json",
	"User-Agent": "GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)"}

// wantGeminiUsage checks a final usageMetadata against testUsage: the prompt includes the cached
// tokens, the candidates exclude the thinking.
func wantGeminiUsage(tb testing.TB, u any) {
	tb.Helper()
	got := map[string]int64{}
	for _, k := range []string{"promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount"} {
		got[k] = num(tb, at(u, k))
	}
	want := map[string]int64{"promptTokenCount": 1120, "cachedContentTokenCount": 1000, "candidatesTokenCount": 35,
		"thoughtsTokenCount": 10, "totalTokenCount": 1165}
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("usageMetadata = %v, want %v", got, want)
	}
}

func TestServer_Gemini(t *testing.T) {
	s := New(Config{Usage: testUsage})
	t.Run("ToolCall", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[`+geminiAsk+`],`+geminiTools+`}`, geminiHdr)
		m := decode(t, w.Body.Bytes())
		parts := at(m, "candidates", 0, "content", "parts").([]any)
		call := at(parts[len(parts)-1], "functionCall")
		if w.Code != 200 || at(m, "candidates", 0, "finishReason") != "STOP" || at(call, "name") != "run_shell_command" ||
			at(call, "args", "command") != "ls" || at(m, "modelVersion") != "gemini-2.5-pro" || at(m, "responseId") == "" {
			t.Fatalf("response = %d %v", w.Code, m)
		}
		wantGeminiUsage(t, at(m, "usageMetadata"))
		r := s.Requests()[len(s.Requests())-1]
		if r.Provider != ProviderGoogle || r.Action != ActionToolCall || r.Tool != "run_shell_command" || !r.HasAPIKey ||
			r.ResponseID != at(m, "responseId") || r.Usage["promptTokenCount"] != 1120 || r.Stream {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("FinalTextAfterToolOnV1", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1/models/gemini-2.5-flash:generateContent?key="+geminiKey,
			`{"contents":[`+geminiAsk+`,`+geminiResult+`],`+geminiTools+`}`, map[string]string{"content-type": "application/json"})
		m := decode(t, w.Body.Bytes())
		var text string
		for _, p := range at(m, "candidates", 0, "content", "parts").([]any) {
			text += at(p, "text").(string)
		}
		if text != TextAfterTool || at(m, "modelVersion") != "gemini-2.5-flash" {
			t.Fatalf("response = %v", m)
		}
		r := s.Requests()[len(s.Requests())-1]
		if !r.ToolResult || r.Action != ActionFinalText || !r.HasAPIKey || strings.Contains(r.Path, geminiKey) || !strings.Contains(r.Path, "key=REDACTED") {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("JSONSchema", func(t *testing.T) {
		// Gemini CLI's model router: an OpenAPI-style schema with capital types; the score must be at least 1.
		body := `{"contents":[` + geminiAsk + `],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":` +
			`{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}}}`
		m := decode(t, do(t, s, http.MethodPost, "/v1beta/models/gemini-3.5-flash-lite:generateContent", body, geminiHdr).Body.Bytes())
		var answer struct {
			Reasoning string `json:"complexity_reasoning"`
			Score     int    `json:"complexity_score"`
		}
		if err := json.Unmarshal([]byte(at(m, "candidates", 0, "content", "parts", 0, "text").(string)), &answer); err != nil ||
			answer.Reasoning == "" || answer.Score < 1 {
			t.Fatalf("answer %+v (%v) in %v", answer, err, m)
		}
	})
	t.Run("StreamSSE", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[`+geminiAsk+`]}`, geminiHdr)
		if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" || !strings.Contains(w.Body.String(), "\r\n\r\n") {
			t.Fatalf("content type %q, body %q", ct, w.Body)
		}
		evs := readSSE(t, []byte(strings.ReplaceAll(w.Body.String(), "\r\n", "\n")))
		checkGeminiStream(t, evsData(evs))
		if r := s.Requests()[len(s.Requests())-1]; !r.Stream || r.Usage["candidatesTokenCount"] != 35 {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("StreamJSONArray", func(t *testing.T) {
		w := do(t, s, http.MethodPost, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", `{"contents":[`+geminiAsk+`],`+geminiTools+`}`, geminiHdr)
		var chunks []map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &chunks); err != nil || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("not a JSON array (%v): %s", err, w.Body)
		}
		checkGeminiStream(t, chunks)
		if at(chunks[len(chunks)-1], "candidates", 0, "content", "parts", 0, "functionCall", "name") != "run_shell_command" {
			t.Errorf("last chunk %v does not call the tool", chunks[len(chunks)-1])
		}
	})
	t.Run("CountTokens", func(t *testing.T) {
		m := decode(t, do(t, s, http.MethodPost, "/v1beta/models/gemini-2.5-pro:countTokens", `{"contents":[`+geminiAsk+`]}`, geminiHdr).Body.Bytes())
		if num(t, at(m, "totalTokens")) != 1120 {
			t.Errorf("countTokens = %v", m)
		}
		if r := s.Requests()[len(s.Requests())-1]; r.Action != ActionInfo || r.ResponseID != "" {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for _, tc := range []struct {
			path, body string
			code       int
			status     string
		}{
			{"/v1beta/models/gemini-2.5-pro:generateContent", "{", 400, "INVALID_ARGUMENT"},
			{"/v1beta/models/gemini-2.5-pro:embedContent", "{}", 404, "NOT_FOUND"},
			{"/v1beta/tunedModels/x:generateContent", "{}", 404, "NOT_FOUND"},
		} {
			w := do(t, s, http.MethodPost, tc.path, tc.body, geminiHdr)
			m := decode(t, w.Body.Bytes())
			if w.Code != tc.code || num(t, at(m, "error", "code")) != int64(tc.code) || at(m, "error", "status") != tc.status {
				t.Errorf("%s = %d %s", tc.path, w.Code, w.Body)
			}
		}
	})
	t.Run("Models", func(t *testing.T) {
		m := decode(t, do(t, s, http.MethodGet, "/v1beta/models", "", geminiHdr).Body.Bytes())
		if at(m, "models", 0, "name") != "models/gemini-2.5-pro" {
			t.Errorf("models = %v", m)
		}
	})
}

func evsData(evs []event) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		out = append(out, e.data)
	}
	return out
}

// checkGeminiStream: every chunk names the model and the response; only the last carries
// finishReason and the whole usage, the others the prompt count alone.
func checkGeminiStream(tb testing.TB, chunks []map[string]any) {
	tb.Helper()
	if len(chunks) < 2 {
		tb.Fatalf("%d chunks, want a real stream", len(chunks))
	}
	id := at(chunks[0], "responseId")
	for i, c := range chunks {
		last := i == len(chunks)-1
		if at(c, "responseId") != id || at(c, "modelVersion") == nil || (at(c, "candidates", 0, "finishReason") != nil) != last {
			tb.Errorf("chunk %d = %v", i, c)
		}
		if !last && (num(tb, at(c, "usageMetadata", "promptTokenCount")) != 1120 || at(c, "usageMetadata", "candidatesTokenCount") != nil) {
			tb.Errorf("chunk %d usage = %v, want the prompt count alone", i, at(c, "usageMetadata"))
		}
	}
	wantGeminiUsage(tb, at(chunks[len(chunks)-1], "usageMetadata"))
}

// TestPickFunctionTool: the shell tools of the clients the fake runs get "ls" and a value for
// every other required parameter.
func TestPickFunctionTool(t *testing.T) {
	for _, tc := range []struct {
		tools      []fnTool
		name, args string
	}{
		{[]fnTool{{Name: "apply_patch", Parameters: json.RawMessage(`{"type":"object","required":["patchText"]}`)},
			{Name: "bash", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command","description"]}`)}},
			"bash", `{"command":"ls","description":"Fake description from the observer fake API"}`},
		{[]fnTool{{Name: "read_files"}, {Name: "run_commands", Parameters: json.RawMessage(`{"type":"object","properties":{"commands":{"type":"array","items":{"type":"string"}}},"required":["commands"]}`)}},
			"run_commands", `{"commands":["ls"]}`},
		{[]fnTool{{Name: "run_shell_command", Parameters: json.RawMessage(`{"type":"OBJECT","properties":{"command":{"type":"STRING"}},"required":["command"]}`)}},
			"run_shell_command", `{"command":"ls"}`},
		{[]fnTool{{Name: "read_file"}}, "read_file", `{}`},
	} {
		name, args, ok := pickFunctionTool(tc.tools, "ls")
		if !ok || name != tc.name || args != tc.args {
			t.Errorf("picked %s %s, want %s %s", name, args, tc.name, tc.args)
		}
	}
}
