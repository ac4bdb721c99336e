package proxy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// echoKeyHandler is an upstream that refuses every request with an error, in the provider's
// shape, that quotes the credentials it got and the URL (a ?key= included), after X-Pad bytes of
// text when the request asks for them.
func echoKeyHandler(w http.ResponseWriter, r *http.Request) {
	var got []string
	for _, h := range []string{"X-Api-Key", "X-Goog-Api-Key", "Authorization"} {
		if v := r.Header.Get(h); v != "" {
			_, cred, ok := strings.Cut(v, " ")
			if !ok || h != "Authorization" {
				cred = v
			}
			if strings.HasPrefix(v, "Basic ") {
				dec, _ := base64.StdEncoding.DecodeString(cred)
				cred = string(dec) // a gateway that says which user and password it refused
			}
			got = append(got, cred)
		}
	}
	pad, _ := strconv.Atoi(r.Header.Get("X-Pad"))
	msg := strings.Repeat("x", pad) + " API key not valid: " + strings.Join(got, ", ") + " (" + r.URL.String() + ")"
	var body any
	switch {
	case strings.Contains(r.URL.Path, "/models/"):
		body = map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
	case r.URL.Path == "/v1/messages":
		body = map[string]any{"type": "error", "error": map[string]string{"type": "authentication_error", "message": msg}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(body)
}

// TestProxy_ForwardedCredentialRedacted: an upstream that echoes the key it was given, in a format
// package scrub does not know, gets it into no api_turn: the proxy takes out the exact credential it
// forwarded (a Gemini key in the query or in x-goog-api-key, an x-api-key, a bearer token, a Basic
// password), whole even where the scrubber would recognize a part of it, and before the message is
// cut, so no start of a key survives the cut.
func TestProxy_ForwardedCredentialRedacted(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(echoKeyHandler))
	defer up.Close()
	srv, cp, logs := geminiSetup(t, up.URL)
	const geminiPath = "/v1beta/models/gemini-2.5-pro:generateContent"
	for _, tc := range []struct {
		name, path, header, key string
		pad                     int
	}{
		{"gemini key in the query", geminiPath + "?key=my-custom-gemini-key-0123456789", "", "my-custom-gemini-key-0123456789", 0},
		{"gemini key in the header", geminiPath, "X-Goog-Api-Key", "my-custom-gemini-key-0123456789", 0},
		// The scrubber knows AIza and 35 characters: the rest of this longer key would stay.
		{"key with a known prefix", geminiPath, "X-Goog-Api-Key", "AIzaSyD-observer-test-key-0123456789abc-and-a-longer-tail", 0},
		{"x-api-key", "/v1/messages", "X-Api-Key", "gateway-issued-0123456789", 0},
		{"bearer", "/v1/chat/completions", "Authorization", "Bearer corp-gateway-token-0123456789", 0},
		{"basic", "/v1/chat/completions", "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("svc:basic-password-0123456789")), 0},
		{"bare authorization", "/v1/chat/completions", "Authorization", "plain-token-0123456789", 0},
		// The message is cut at 2000 bytes, 11 bytes into the key.
		{"key at the cut", "/v1/messages", "X-Api-Key", "gateway-issued-0123456789", 2000 - len(" API key not valid: ") - 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}`
			req, _ := http.NewRequest("POST", srv.URL+tc.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set(tc.header, tc.key)
			}
			if tc.path == "/v1/messages" {
				req.Header.Set("Anthropic-Version", "2023-06-01")
			}
			req.Header.Set("X-Pad", fmt.Sprint(tc.pad))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			echoed, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			secret := tc.key
			switch {
			case strings.HasPrefix(secret, "Bearer "):
				secret = strings.TrimPrefix(secret, "Bearer ")
			case strings.HasPrefix(secret, "Basic "):
				secret = "basic-password-0123456789"
			}
			if !strings.Contains(string(echoed), secret) {
				t.Fatalf("the upstream did not echo the key: %s", echoed)
			}
			ev := cp.nextEvent(t)
			raw, _ := json.Marshal(ev)
			if strings.Contains(string(raw), secret[:10]) {
				t.Errorf("the api_turn holds the key (or its start): %s", raw)
			}
			if !strings.Contains(ev.APITurn.ErrorMessage, "API key not valid") {
				t.Errorf("error message %q", ev.APITurn.ErrorMessage)
			}
			if tc.pad == 0 && !strings.Contains(ev.APITurn.ErrorMessage, credentialMark) {
				t.Errorf("error message %q: no %s", ev.APITurn.ErrorMessage, credentialMark)
			}
		})
	}
	if strings.Contains(logs.String(), "0123456789") {
		t.Errorf("a key reached the log:\n%s", logs)
	}
}

// TestForwardedCredentials: what a request's credentials are, longest first; a value too short to
// be a secret is left out.
func TestForwardedCredentials(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1beta/models/m:generateContent?alt=sse&key=query-key-0123", nil)
	r.Header.Set("X-Api-Key", "sk-test")
	r.Header.Set("Api-Key", "azure-key-0123456789")
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("u:pw-0123456")))
	got := forwardedCredentials(r)
	want := credentials{"azure-key-0123456789", base64.StdEncoding.EncodeToString([]byte("u:pw-0123456")), "query-key-0123", "pw-0123456"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if s := got.redact("x azure-key-0123456789 y"); s != "x "+credentialMark+" y" {
		t.Errorf("redact: %q", s)
	}
}
