package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// cannedTransport answers every request at once from memory, like the benchmarks' fake API: the
// handler benchmarks below measure what the proxy itself does per request, without the network.
type cannedTransport struct{ stream bool }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	h := http.Header{"Request-Id": {"req_bench"}}
	body := benchJSON
	if c.stream {
		h.Set("Content-Type", "text/event-stream")
		body = anthropicStream
	} else {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	n := int64(len(body))
	if c.stream {
		n = -1
	}
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), ContentLength: n, Request: r}, nil
}

// encodingSink is a BatchPublisher that encodes each event as the bus client does, then drops it.
type encodingSink struct{ n atomic.Int64 }

func (s *encodingSink) Publish(_ context.Context, ev *event.Event) (bus.Result, error) {
	_, err := event.Marshal(ev)
	s.n.Add(1)
	return bus.Published, err
}

func (s *encodingSink) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	for i := range evs {
		if _, err := event.Marshal(&evs[i]); err != nil {
			return 0, err
		}
	}
	s.n.Add(int64(len(evs)))
	return 0, nil
}

// BenchmarkHandler is the proxy's own cost per request (ns/op, allocs/op) against a bare
// httputil.ReverseProxy on the same in-memory upstream: no network, no bus (the journal is written,
// to a temporary directory).
//
//	go test -run '^$' -bench Handler -benchmem ./pkg/proxy/
func BenchmarkHandler(b *testing.B) {
	body := []byte(claudeBody)
	for _, stream := range []bool{false, true} {
		mode := "json"
		if stream {
			mode = "stream"
		}
		target, _ := url.Parse("http://upstream.invalid")
		bare := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport: cannedTransport{stream}}
		sink := &encodingSink{}
		p, err := New(Config{AnthropicUpstream: target.String(), OpenAIUpstream: target.String(),
			Publisher: sink, Coster: flatCost{}, Transport: cannedTransport{stream}, JournalDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range []struct {
			name string
			h    http.Handler
		}{{"bare", bare}, {"observer", p}} {
			b.Run(mode+"/"+h.name, func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req := httptest.NewRequest("POST", "http://127.0.0.1:8820/v1/messages", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("x-api-key", "sk-bench")
						req.Header.Set("anthropic-version", "2023-06-01")
						req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, cli)")
						w := httptest.NewRecorder()
						h.h.ServeHTTP(w, req)
						if w.Code != 200 {
							b.Fatalf("status %d: %s", w.Code, w.Body)
						}
					}
				})
			})
		}
		p.Close()
	}
}
