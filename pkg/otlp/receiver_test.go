package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/proxy"
)

// capture collects what the receiver publishes; gate, when set, holds every publish until closed.
type capture struct {
	mu   sync.Mutex
	evs  []event.Event
	gate chan struct{}
	got  chan struct{}
}

func newCapture() *capture { return &capture{got: make(chan struct{}, 100)} }

func (c *capture) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	if c.gate != nil {
		<-c.gate
	}
	for _, e := range evs {
		if err := e.Validate(); err != nil {
			return 0, err
		}
	}
	c.mu.Lock()
	c.evs = append(c.evs, evs...)
	c.mu.Unlock()
	c.got <- struct{}{}
	return 0, nil
}

func (c *capture) events() []event.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event.Event(nil), c.evs...)
}

type flatCost struct{}

func (flatCost) Cost(model string, tok event.Tokens) (float64, bool) {
	return float64(tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation) / 1e6, true
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(t *testing.T, h http.Handler, path, ctype, enc string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", path, bytes.NewReader(body))
	req.Host = "127.0.0.1:4318"
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func newReceiver(t *testing.T, pub Publisher) *Receiver {
	r := New(Config{Publisher: pub, Coster: flatCost{}, Refuse: proxy.Refuser("127.0.0.1:4318")})
	t.Cleanup(r.Close)
	return r
}

// protoOf turns an OTLP/JSON logs export into the same export in protobuf.
func protoOf(t *testing.T, js []byte) []byte {
	er := plogotlp.NewExportRequest()
	if err := er.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	b, err := er.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Claude Code 2.1.197's own export of a one-tool session (captured from the real CLI against the
// fake API): two api_request records become two turns with the API's request ids and figures, the
// tool's decision and result one action with the transcript reader's id, and the session one
// session event — the same from OTLP/JSON, and from protobuf sent gzipped.
func TestReceiver_ClaudeCode(t *testing.T) {
	js := fixture(t, "claude-code-2.1.197-logs.json")
	for _, tc := range []struct {
		name, ctype, enc string
		body             []byte
	}{
		{"json", "application/json", "", js},
		{"protobuf+gzip", "application/x-protobuf", "gzip", gz(protoOf(t, js))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture()
			r := newReceiver(t, c)
			w := post(t, r, PathLogs, tc.ctype, tc.enc, tc.body)
			if w.Code != 200 || w.Header().Get("Content-Type") != tc.ctype {
				t.Fatalf("status %d %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			r.Close()
			var turns []*event.APITurn
			var actions []event.Event
			sessions := 0
			for _, e := range c.events() {
				if e.Client != ClientClaude || e.SessionID != "c7575090-d20a-4bb0-b0a8-5fa6e397de0b" || e.Source != Source {
					t.Errorf("event %s: client %q session %q source %q", e.Kind, e.Client, e.SessionID, e.Source)
				}
				switch e.Kind {
				case event.KindAPITurn:
					turns = append(turns, e.APITurn)
				case event.KindAction:
					actions = append(actions, e)
				case event.KindSession:
					sessions++
				}
			}
			if len(turns) != 2 || sessions != 1 || len(actions) != 2 {
				t.Fatalf("%d turns, %d actions, %d session events; want 2, 2 (decision and result), 1", len(turns), len(actions), sessions)
			}
			for i, tr := range turns {
				want := event.Tokens{Input: 120, Output: 45, CacheRead: 1000, CacheCreation: 300}
				if tr.Tokens != want || tr.Origin != Source || tr.Model != "claude-opus-4-8" || tr.Status != 200 ||
					tr.RequestID != []string{"req_fake_8", "req_fake_10"}[i] || tr.CostUSD == 0 ||
					tr.Reliability != event.ReliabilityApproximate { // cache writes without the 5m/1h split
					t.Errorf("turn %d: %+v", i, tr)
				}
			}
			if actions[0].ID != actions[1].ID || actions[0].ID != event.ID("claude-code", "action", "toolu_fake_7") {
				t.Errorf("action ids %s %s: want the transcript reader's id of toolu_fake_7", actions[0].ID, actions[1].ID)
			}
			res := actions[1].Action
			if res.Type != event.ActionRunCommand || res.Tool != "Bash" || res.Success == nil || !*res.Success || res.DurationMs != 69 {
				t.Errorf("tool result %+v", res)
			}
		})
	}
}

// Codex 0.171.0's export: attribute values are strings; response.completed comes twice per
// response and only the one with counts is a turn (input less cached); tool results carry the
// rollout reader's action id (conversation, call id), the command and the scrubbed output.
func TestReceiver_Codex(t *testing.T) {
	c := newCapture()
	r := newReceiver(t, c)
	if w := post(t, r, PathLogs, "application/json", "", fixture(t, "codex-0.171.0-logs.json")); w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	r.Close()
	conv := "01a233bf-d62f-7fb0-8f31-7a56b0f76ad6"
	var turns []*event.APITurn
	var acts []*event.Action
	for _, e := range c.events() {
		if e.Client != ClientCodex || e.SessionID != conv {
			t.Errorf("event %s: client %q session %q", e.Kind, e.Client, e.SessionID)
		}
		switch e.Kind {
		case event.KindAPITurn:
			turns = append(turns, e.APITurn)
		case event.KindAction:
			if e.ID != event.ID("codex", "action", conv, "call_fake_13") {
				t.Errorf("action id %s: want the rollout reader's", e.ID)
			}
			acts = append(acts, e.Action)
		}
	}
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2 (one per response)", len(turns))
	}
	for _, tr := range turns {
		want := event.Tokens{Input: 120, Output: 45, CacheRead: 1000, Reasoning: 10}
		if tr.Tokens != want || tr.Model != "gpt-5.2-codex" || tr.Provider != "openai" || tr.Origin != Source {
			t.Errorf("turn %+v", tr)
		}
	}
	if len(acts) != 2 {
		t.Fatalf("%d action events, want the decision and the result", len(acts))
	}
	res := acts[1]
	if res.Type != event.ActionRunCommand || res.Target != "ls" || res.Success == nil || !*res.Success ||
		!strings.Contains(res.Output, "a.txt") || res.DurationMs != 60 {
		t.Errorf("tool result %+v", res)
	}
}

// Bad input gets a 4xx and nothing else: a body that is not protobuf, JSON that is not an export,
// a content type the receiver does not read, a 50 MB body, an unknown signal path, a GET, a web
// page. Traces are taken and dropped.
func TestReceiver_BadInput(t *testing.T) {
	c := newCapture()
	r := newReceiver(t, c)
	big := bytes.Repeat([]byte("x"), 50<<20)
	for _, tc := range []struct {
		name, path, ctype, enc string
		body                   []byte
		status                 int
	}{
		{"bad protobuf", PathLogs, "application/x-protobuf", "", []byte("\xff\xff\xff\x0fnot protobuf"), 400},
		{"JSON not an export", PathLogs, "application/json", "", []byte(`{"resourceLogs":"no"}`), 400},
		{"not JSON", PathMetrics, "application/json", "", []byte(`{{{`), 400},
		{"text/plain", PathLogs, "text/plain", "", []byte(`{}`), 415},
		{"no content type", PathLogs, "", "", []byte(`{}`), 415},
		{"50 MB", PathLogs, "application/x-protobuf", "", big, 413},
		{"gzip bomb", PathLogs, "application/x-protobuf", "gzip", gz(big), 413},
		{"bad gzip", PathLogs, "application/json", "gzip", []byte("not gzip"), 400},
		{"brotli", PathLogs, "application/json", "br", []byte(`{}`), 415},
		{"unknown signal", "/v1/profiles", "application/json", "", []byte(`{}`), 404},
		{"traces", PathTraces, "application/json", "", []byte(`{"resourceSpans":[]}`), 200},
		{"empty logs", PathLogs, "application/json", "", []byte(`{}`), 200},
	} {
		if w := post(t, r, tc.path, tc.ctype, tc.enc, tc.body); w.Code != tc.status {
			t.Errorf("%s: status %d, want %d: %.200s", tc.name, w.Code, tc.status, w.Body)
		}
	}
	req := httptest.NewRequest("GET", PathLogs, nil)
	req.Host = "localhost:4318"
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != 405 {
		t.Errorf("GET: %d", w.Code)
	}
	req = httptest.NewRequest("POST", PathLogs, strings.NewReader(`{}`))
	req.Host, req.Header["Content-Type"], req.Header["Origin"] = "127.0.0.1:4318", []string{"application/json"}, []string{"https://evil.example"}
	w = httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != 403 {
		t.Errorf("a web page's request: %d", w.Code)
	}
	r.Close()
	if n := len(c.events()); n != 0 {
		t.Errorf("%d events from bad input", n)
	}
	if st := r.Stats(); st.Rejected < 10 || st.Refused != 1 {
		t.Errorf("stats %+v", st)
	}
}

// The exporter gets its answer while the bus still holds the events back: Codex waits for its
// exports at exit.
func TestReceiver_AnswersBeforePublishing(t *testing.T) {
	c := newCapture()
	c.gate = make(chan struct{})
	r := New(Config{Publisher: c})
	done := make(chan int)
	go func() {
		done <- post(t, r, PathLogs, "application/json", "", fixture(t, "claude-code-2.1.197-logs.json")).Code
	}()
	select {
	case code := <-done:
		if code != 200 {
			t.Fatalf("status %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the export was not answered while publishing was held")
	}
	close(c.gate)
	r.Close()
	if len(c.events()) == 0 {
		t.Error("nothing published once the bus let go")
	}
}

// OTLP/gRPC: the same export through the logs service.
func TestReceiver_GRPC(t *testing.T) {
	c := newCapture()
	r := newReceiver(t, c)
	s := grpc.NewServer()
	r.RegisterGRPC(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Stop()
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	er := plogotlp.NewExportRequest()
	if err := er.UnmarshalJSON(fixture(t, "claude-code-2.1.197-logs.json")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := plogotlp.NewGRPCClient(cc).Export(ctx, er); err != nil {
		t.Fatal(err)
	}
	r.Close()
	turns := 0
	for _, e := range c.events() {
		if e.Kind == event.KindAPITurn {
			turns++
		}
	}
	if turns != 2 {
		t.Errorf("%d turns through gRPC, want 2", turns)
	}
}

// Claude Code's token.usage metric is summed per session for the cross-check, never published.
func TestReceiver_MetricsCrossCheck(t *testing.T) {
	c := newCapture()
	r := newReceiver(t, c)
	if w := post(t, r, PathMetrics, "application/json", "", fixture(t, "claude-code-2.1.197-metrics.json")); w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	r.Close()
	if n := r.MetricTokens("c7575090-d20a-4bb0-b0a8-5fa6e397de0b"); n != 2*(120+45+1000+300) {
		t.Errorf("metric tokens %d, want the two requests' %d", n, 2*(120+45+1000+300))
	}
	if len(c.events()) != 0 {
		t.Error("metrics were published as events")
	}
}

// An export of 8 MB (Claude Code's records with long tool outputs, say) is taken whole.
func TestReceiver_Takes8MB(t *testing.T) {
	c := newCapture()
	r := newReceiver(t, c)
	er := plogotlp.NewExportRequest()
	if err := er.UnmarshalJSON(fixture(t, "claude-code-2.1.197-logs.json")); err != nil {
		t.Fatal(err)
	}
	recs := er.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	filler := strings.Repeat("x", 64<<10)
	for recs.Len() < 140 { // 140 x 64 KB
		lr := recs.AppendEmpty()
		recs.At(1).CopyTo(lr)
		lr.Attributes().PutStr("error", filler)
	}
	body, err := er.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if len(body) < 8<<20 {
		t.Fatalf("body %d bytes, want 8 MB", len(body))
	}
	if w := post(t, r, PathLogs, "application/x-protobuf", "", body); w.Code != 200 {
		t.Fatalf("an 8 MB export: status %d %.200s", w.Code, w.Body)
	}
}

// Whatever arrives, the receiver answers and never panics, and the events it makes are valid.
func FuzzReceiver(f *testing.F) {
	js, err := os.ReadFile("testdata/claude-code-2.1.197-logs.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(true, js)
	er := plogotlp.NewExportRequest()
	er.UnmarshalJSON(js)
	pb, _ := er.MarshalProto()
	f.Add(false, pb)
	f.Add(true, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"codex.sse_event"}},{"key":"event.kind","value":{"stringValue":"response.completed"}},{"key":"input_token_count","value":{"stringValue":"-5"}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, isJSON bool, body []byte) {
		c := newCapture()
		r := New(Config{Publisher: c, Coster: flatCost{}})
		ct := "application/x-protobuf"
		if isJSON {
			ct = "application/json"
		}
		w := post(t, r, PathLogs, ct, "", body)
		if w.Code != 200 && w.Code != 400 {
			t.Fatalf("status %d", w.Code)
		}
		r.Close() // publishes: capture validates every event
	})
}
