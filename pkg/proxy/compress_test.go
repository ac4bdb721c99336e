package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/event"
)

// With compression on, the upstream gets the compressed body, the client the upstream's answer
// untouched, and the bus one compression event per decision (stash included, scrubbed) plus the
// turn carrying the request's totals; the body as the client sent it is what the turn measures.
func TestProxy_CompressesRequests(t *testing.T) {
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, anthropicStream)
	}))
	defer up.Close()
	comp, err := compress.New(compress.Options{Stash: true})
	if err != nil {
		t.Fatal(err)
	}
	cp := newCapture()
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, Coster: flatCost{}, Compressor: comp})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer func() { srv.Close(); p.Close() }()

	var listing strings.Builder
	listing.WriteString(`{"items":[`)
	for i := range 400 {
		if i > 0 {
			listing.WriteString(",")
		}
		fmt.Fprintf(&listing, `{"id":%d,"name":"worker-%04d","token":"ghp_%036d","region":"eu-west-1","notes":"restarted after the %d-th deploy"}`, i, i, i, i)
	}
	listing.WriteString(`]}`)
	out, _ := json.Marshal(listing.String())
	body := `{"model":"claude-sonnet-4-5-20250929","stream":true,"max_tokens":1000,"messages":[` +
		`{"role":"user","content":"read it"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/r/services.json"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + string(out) + `,"cache_control":{"type":"ephemeral"}}]}]}`
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(answer) != anthropicStream {
		t.Error("the client did not get the upstream's answer as it was")
	}
	if len(got) >= len(body)/2 || !bytes.Contains(got, []byte("[observer compressed this json output")) {
		t.Fatalf("the upstream got %d bytes of %d: %.300s", len(got), len(body), got)
	}
	if !json.Valid(got) {
		t.Fatal("the upstream got invalid JSON")
	}

	comp1 := cp.nextEvent(t)
	if comp1.Kind != event.KindCompression {
		t.Fatalf("first event %s, want compression", comp1.Kind)
	}
	c := comp1.Compression
	if c.Mechanism != "json" || c.Mode != compress.ModeCacheAware || c.BytesAfter >= c.BytesBefore || c.MessageIndex != 2 ||
		c.StashID == "" || c.SavedUSD <= 0 || c.TokensBefore != c.BytesBefore/4 {
		t.Errorf("compression event %+v", c)
	}
	if strings.Contains(c.Original, "ghp_0000") || !strings.Contains(c.Original, "worker-0001") {
		t.Errorf("the stashed original is not the scrubbed output: %.200s", c.Original)
	}
	turnEv := cp.nextEvent(t)
	if turnEv.Kind != event.KindAPITurn || c.TurnID != turnEv.ID {
		t.Fatalf("event %s %s: want the api_turn the compression names (%s)", turnEv.Kind, turnEv.ID, c.TurnID)
	}
	tc := turnEv.APITurn.Compression
	if tc == nil || tc.BytesBefore != int64(len(body)) || tc.BytesAfter != int64(len(got)) || tc.Decisions != 1 ||
		tc.TokensSaved != (tc.BytesBefore-tc.BytesAfter)/4 {
		t.Errorf("turn compression %+v (body %d → %d)", tc, len(body), len(got))
	}
	if turnEv.APITurn.BytesIn != int64(len(body)) || turnEv.APITurn.Messages != 3 {
		t.Errorf("the turn measures %d bytes, %d messages: want the client's request", turnEv.APITurn.BytesIn, turnEv.APITurn.Messages)
	}

	// A body compression cannot read goes upstream as it came.
	req, _ = http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"m","messages":"odd"}`))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if string(got) != `{"model":"m","messages":"odd"}` {
		t.Errorf("an unreadable body was changed: %s", got)
	}
}
