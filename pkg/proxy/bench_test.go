package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
)

const benchJSON = `{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello there, this is a short answer."}],"stop_reason":"end_turn","usage":{"input_tokens":120,"output_tokens":45,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100}}}`

// benchUpstream answers like the Anthropic API: JSON, or an SSE stream whose first event is sent
// at once.
func benchUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("stream") == "1" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, anthropicStream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchJSON)
	}))
}

// BenchmarkProxy compares, in one run, requests sent straight to the upstream, through a bare
// httputil.ReverseProxy, through observer-proxy publishing to a real embedded bus, and through
// observer-proxy with no publisher (metering alone, no journal):
// throughput at 16 concurrent clients, and latency p50/p99 (time to first byte for streams) at 1.
//
//	go test -run '^$' -bench Proxy -benchtime 1x ./pkg/proxy/
func BenchmarkProxy(b *testing.B) {
	up := benchUpstream()
	defer up.Close()
	target, _ := url.Parse(up.URL)

	bare := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: tunedTransport(),
	})
	defer bare.Close()

	ctx := context.Background()
	srv, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(b.TempDir(), "bus"), Port: -1, Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	cl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: "t", SpoolDir: filepath.Join(b.TempDir(), "spool")})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	p, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cl, Coster: flatCost{},
		JournalDir: filepath.Join(b.TempDir(), "journal")})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	obs := httptest.NewServer(p)
	defer obs.Close()
	// The same proxy without a publisher: what metering alone costs, apart from storing events.
	pm, err := New(Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Coster: flatCost{}})
	if err != nil {
		b.Fatal(err)
	}
	defer pm.Close()
	meterOnly := httptest.NewServer(pm)
	defer meterOnly.Close()

	targets := []struct{ name, url string }{{"direct", up.URL}, {"bare", bare.URL}, {"observer", obs.URL}, {"meter-only", meterOnly.URL}}
	for _, stream := range []bool{false, true} {
		mode := "json"
		if stream {
			mode = "stream"
		}
		var bareRPS float64
		var directP50 time.Duration
		for _, tg := range targets {
			b.Run(mode+"/"+tg.name, func(b *testing.B) {
				for range b.N {
					rps := throughput(b, tg.url, stream, 16, 3000)
					p50, p99 := latency(b, tg.url, stream, 1000)
					b.ReportMetric(rps, "req/s@16")
					b.ReportMetric(float64(p50.Microseconds())/1000, "p50_ms@1")
					b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms@1")
					switch tg.name {
					case "direct":
						directP50 = p50
					case "bare":
						bareRPS = rps
					case "observer", "meter-only":
						b.ReportMetric(rps/bareRPS, "x_bare_throughput")
						b.ReportMetric(float64((p50-directP50).Microseconds())/1000, "added_p50_ms")
					}
				}
			})
		}
	}
	if n := p.Stats().Turns; n == 0 {
		b.Fatal("observer-proxy recorded no turn")
	}
}

func tunedTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 64
	return t
}

func benchRequest(base string, stream bool) *http.Request {
	u := base + "/v1/messages"
	if stream {
		u += "?stream=1"
	}
	req, _ := http.NewRequest("POST", u, strings.NewReader(claudeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-bench")
	req.Header.Set("anthropic-version", "2023-06-01")
	return req
}

// throughput sends n requests from c concurrent clients and returns requests per second.
func throughput(b *testing.B, base string, stream bool, c, n int) float64 {
	client := &http.Client{Transport: tunedTransport()}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				resp, err := client.Do(benchRequest(base, stream))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// latency sends n sequential requests and returns the p50 and p99 of the time to the first body
// byte (for a stream) or to the whole body (for JSON).
func latency(b *testing.B, base string, stream bool, n int) (p50, p99 time.Duration) {
	client := &http.Client{Transport: tunedTransport()}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, 0, n)
	buf := make([]byte, 1)
	for i := range n + 50 {
		t0 := time.Now()
		resp, err := client.Do(benchRequest(base, stream))
		if err != nil {
			b.Fatal(err)
		}
		var d time.Duration
		if stream {
			io.ReadFull(resp.Body, buf)
			d = time.Since(t0)
			io.Copy(io.Discard, resp.Body)
		} else {
			io.Copy(io.Discard, resp.Body)
			d = time.Since(t0)
		}
		resp.Body.Close()
		if i >= 50 { // warm-up
			lat = append(lat, d)
		}
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}
