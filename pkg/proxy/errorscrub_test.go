package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/scrubtest"
)

// echoSecrets is a request that carries credentials in its headers and every credential format
// of package scrubtest in its prompt; secrets lists what must not reach an event.
func echoSecrets(tb testing.TB, stream bool) (body string, header http.Header, secrets []string) {
	tb.Helper()
	apiKey := "sk-ant-api03-" + strings.Repeat("Kq7", 30) + "AA"
	bearer := "obsv_" + strings.Repeat("Zt9x", 10)
	header = http.Header{"Content-Type": {"application/json"}, "X-Api-Key": {apiKey}, "Authorization": {"Bearer " + bearer}}
	var prompt []string
	secrets = []string{apiKey, bearer}
	for _, f := range scrubtest.Formats() {
		prompt = append(prompt, f.Line)
		secrets = append(secrets, f.Secrets...)
	}
	b, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5-20250929", "stream": stream, "max_tokens": 100,
		"messages": []map[string]string{{"role": "user", "content": strings.Join(prompt, "\n")}}})
	return string(b), header, secrets
}

// echoHandler answers every request with an error whose message echoes the request's headers
// and body, as a misbehaving gateway does.
func echoHandler(stream bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg := fmt.Sprintf("invalid request: headers=%v body=%s", r.Header, body)
		e, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg}})
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", e)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(e)
	}
}

// TestProxy_ErrorMessageScrubbed: an upstream that echoes the request in its error puts the
// client's x-api-key, its bearer token and every secret of the prompt in the error message; the
// api_turn keeps the message without any of them, from a JSON body and from a stream.
func TestProxy_ErrorMessageScrubbed(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv, cp := setup(t, echoHandler(stream))
			body, header, secrets := echoSecrets(t, stream)
			req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
			req.Header = header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			echoed, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(echoed), secrets[0]) {
				t.Fatalf("the upstream did not echo the request: %.200s", echoed)
			}
			turn := cp.next(t)
			if !strings.Contains(turn.ErrorMessage, "invalid request") || !strings.Contains(turn.ErrorMessage, "[REDACTED:") {
				t.Fatalf("error message %.300q", turn.ErrorMessage)
			}
			for _, s := range secrets {
				if strings.Contains(turn.ErrorMessage, s) || strings.Contains(turn.ErrorClass, s) {
					t.Errorf("secret %q stored in the api_turn's error", s)
				}
			}
		})
	}
}
