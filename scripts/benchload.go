//go:build ignore

// benchload is the load generator of scripts/bench-proxy.sh. For each target (name=URL, all
// speaking the Anthropic Messages API on /v1/messages) it measures, phase by phase with the
// targets taken in turn inside each phase so that drift on a noisy machine hits them alike:
//
//	lat   c=1, non-streaming: -lat-n sequential requests after -warm warm-up ones; p50/p99 of the
//	      time to the whole response body
//	tput  c=-c (16), non-streaming: requests per second completed during -d, after -tput-warm
//	ttfb  c=1, streaming: -ttfb-n sequential requests; p50/p99 of the time to the first body byte
//
// Every request carries a JSON body of -body bytes (2 KB) shaped like Claude Code's. A response
// that is not a 200 with usage (JSON) or a message_stop (stream) counts as an error. Prints one
// JSON object: {"<name>": {"lat_p50_ms", "lat_p99_ms", "rps", "ttfb_p50_ms", "ttfb_p99_ms",
// "requests", "errors", "first_error"}, ...}.
//
//	go build -o /tmp/benchload scripts/benchload.go
//	/tmp/benchload -targets observer=http://127.0.0.1:8820,bare=http://127.0.0.1:9000
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type target struct {
	name, url string
	requests  atomic.Int64
	errors    atomic.Int64
	firstErr  atomic.Pointer[string]
	res       map[string]any
}

func (t *target) fail(msg string) {
	t.errors.Add(1)
	t.firstErr.CompareAndSwap(nil, &msg)
}

var jsonBody, streamBody []byte

// makeBody builds a Messages API request of exactly size bytes (when size allows).
func makeBody(size int, stream bool) []byte {
	build := func(pad int) []byte {
		req := map[string]any{
			"model":      "claude-sonnet-4-5-20250929",
			"max_tokens": 1024,
			"stream":     stream,
			"metadata":   map[string]string{"user_id": `{"device_id":"bench","session_id":"5e55c0de-0000-4000-8000-00000000be9c"}`},
			"system":     []map[string]string{{"type": "text", "text": "You are a coding agent; answer briefly."}},
			"messages": []map[string]any{
				{"role": "user", "content": "list the files"},
				{"role": "assistant", "content": "Here they are."},
				{"role": "user", "content": strings.Repeat("x", pad)},
			},
			"tools": []map[string]any{{"name": "Bash", "description": "run a command", "input_schema": map[string]any{"type": "object"}}},
		}
		b, _ := json.Marshal(req)
		return b
	}
	b := build(0)
	if len(b) < size {
		b = build(size - len(b))
	}
	return b
}

func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 64
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}

// do sends one request and returns the time to the first body byte and to the whole body; ok is
// false (and the target's error recorded) when the answer is not the expected one.
func do(c *http.Client, t *target, stream bool) (ttfb, total time.Duration, ok bool) {
	body := jsonBody
	if stream {
		body = streamBody
	}
	req, _ := http.NewRequest(http.MethodPost, t.url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-bench-0000000000000000")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, cli)")
	t.requests.Add(1)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.fail(err.Error())
		return 0, 0, false
	}
	defer resp.Body.Close()
	var first [1]byte
	if _, err := io.ReadFull(resp.Body, first[:]); err != nil {
		t.fail(fmt.Sprintf("status %d, reading the body: %v", resp.StatusCode, err))
		return 0, 0, false
	}
	ttfb = time.Since(t0)
	rest, err := io.ReadAll(resp.Body)
	total = time.Since(t0)
	switch {
	case err != nil:
		t.fail(err.Error())
	case resp.StatusCode != http.StatusOK:
		t.fail(fmt.Sprintf("status %d: %.200s", resp.StatusCode, append(first[:], rest...)))
	case stream && !bytes.Contains(rest, []byte("message_stop")):
		t.fail("stream without message_stop")
	case !stream && !bytes.Contains(rest, []byte(`"usage"`)):
		t.fail("JSON answer without usage")
	default:
		return ttfb, total, true
	}
	return 0, 0, false
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sequential sends warm+n requests one at a time; p50 and p99 of the n timed ones.
func sequential(t *target, stream bool, warm, n int) (p50, p99 float64) {
	c := newClient()
	defer c.CloseIdleConnections()
	lat := make([]time.Duration, 0, n)
	for i := range warm + n {
		ttfb, total, ok := do(c, t, stream)
		if !ok || i < warm {
			continue
		}
		if stream {
			lat = append(lat, ttfb)
		} else {
			lat = append(lat, total)
		}
	}
	if len(lat) == 0 {
		return -1, -1
	}
	slices.Sort(lat)
	return ms(lat[len(lat)/2]), ms(lat[min(len(lat)-1, len(lat)*99/100)])
}

// throughput runs c clients back to back; requests per second completed in the timed window.
func throughput(t *target, c int, warm, d time.Duration) float64 {
	client := newClient()
	defer client.CloseIdleConnections()
	var stop, counting atomic.Bool
	var done atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, _, ok := do(client, t, false); ok && counting.Load() {
					done.Add(1)
				}
			}
		}()
	}
	time.Sleep(warm)
	counting.Store(true)
	t0 := time.Now()
	time.Sleep(d)
	counting.Store(false)
	elapsed := time.Since(t0)
	stop.Store(true)
	wg.Wait()
	return float64(done.Load()) / elapsed.Seconds()
}

func main() {
	targetsFlag := flag.String("targets", "", "name=URL,name=URL,... (the base URL of each target)")
	phases := flag.String("phases", "lat,tput,ttfb", "which measurements, in this order")
	size := flag.Int("body", 2048, "request body size in bytes")
	warm := flag.Int("warm", 100, "warm-up requests before each sequential measurement")
	latN := flag.Int("lat-n", 2000, "timed requests of the c=1 latency measurement")
	ttfbN := flag.Int("ttfb-n", 1000, "timed requests of the c=1 streaming time-to-first-byte measurement")
	conc := flag.Int("c", 16, "concurrent clients of the throughput measurement")
	dur := flag.Duration("d", 5*time.Second, "timed window of the throughput measurement")
	tputWarm := flag.Duration("tput-warm", time.Second, "warm-up before the throughput window")
	flag.Parse()

	var targets []*target
	for _, kv := range strings.Split(*targetsFlag, ",") {
		name, u, ok := strings.Cut(kv, "=")
		if !ok || name == "" || u == "" {
			fmt.Fprintln(os.Stderr, "benchload: -targets wants name=URL,name=URL")
			os.Exit(64)
		}
		targets = append(targets, &target{name: name, url: strings.TrimRight(u, "/"), res: map[string]any{}})
	}
	jsonBody, streamBody = makeBody(*size, false), makeBody(*size, true)

	for _, ph := range strings.Split(*phases, ",") {
		for _, t := range targets {
			switch ph {
			case "lat":
				t.res["lat_p50_ms"], t.res["lat_p99_ms"] = sequential(t, false, *warm, *latN)
			case "tput":
				t.res["rps"] = throughput(t, *conc, *tputWarm, *dur)
			case "ttfb":
				t.res["ttfb_p50_ms"], t.res["ttfb_p99_ms"] = sequential(t, true, *warm, *ttfbN)
			default:
				fmt.Fprintln(os.Stderr, "benchload: unknown phase", ph)
				os.Exit(64)
			}
		}
	}
	out := map[string]map[string]any{}
	failed := false
	for _, t := range targets {
		t.res["requests"] = t.requests.Load()
		t.res["errors"] = t.errors.Load()
		t.res["body_bytes"] = len(jsonBody)
		if p := t.firstErr.Load(); p != nil {
			t.res["first_error"] = *p
			failed = true
		}
		out[t.name] = t.res
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if failed {
		os.Exit(1)
	}
}
