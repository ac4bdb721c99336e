//go:build ignore

// soakload is the load generator of scripts/soak-writer.sh: it sends -rate requests per second
// through an observer proxy (-proxy URL) for -d, in the four shapes TestChaos's proxy load sends
// (Anthropic Messages and OpenAI Responses, streaming and not, in turn), with a new session id
// every -session-every requests, so that the writer sees sessions come and go the way a day of
// agents makes them. The proxy's upstreams must answer both APIs (observer-fakeapi does). A tick
// that finds -max-inflight requests still open is skipped and counted. At the end it prints one
// JSON object: {"sent", "errors", "skipped", "sessions", "first_error"}.
//
//	go build -o /tmp/soakload scripts/soakload.go
//	/tmp/soakload -proxy http://127.0.0.1:8820 -rate 30 -d 10m
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	proxy := flag.String("proxy", "", "the proxy's base URL (http://127.0.0.1:PORT)")
	rate := flag.Float64("rate", 30, "requests per second")
	dur := flag.Duration("d", 10*time.Minute, "how long to send")
	sessionEvery := flag.Int("session-every", 50, "requests per session id")
	prefix := flag.String("session-prefix", "soak", "prefix of the session ids")
	maxInflight := flag.Int64("max-inflight", 64, "requests open at once beyond which a tick is skipped")
	flag.Parse()
	if *proxy == "" || *rate <= 0 || *dur <= 0 || *sessionEvery <= 0 {
		fmt.Fprintln(os.Stderr, "soakload: -proxy, a positive -rate, -d and -session-every are required")
		os.Exit(64)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var sent, errs, skipped, inflight atomic.Int64
	var firstErr atomic.Pointer[string]
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	start, n := time.Now(), 0
	for range tick.C {
		el := time.Since(start)
		if el >= *dur {
			break
		}
		// A late tick sends what the elapsed time is due, so that the rate holds on average.
		for due := int(el.Seconds() * *rate); n < due; n++ {
			if inflight.Load() >= *maxInflight {
				skipped.Add(1)
				continue
			}
			inflight.Add(1)
			i := n
			wg.Go(func() {
				defer inflight.Add(-1)
				sent.Add(1)
				if err := request(client, *proxy, fmt.Sprintf("%s-%d", *prefix, i / *sessionEvery), i); err != nil {
					errs.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
			})
		}
	}
	wg.Wait()
	out := map[string]any{"sent": sent.Load(), "errors": errs.Load(), "skipped": skipped.Load(),
		"sessions": (n + *sessionEvery - 1) / *sessionEvery}
	if p := firstErr.Load(); p != nil {
		out["first_error"] = *p
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

// request sends request n in its shape and reads the answer whole.
func request(client *http.Client, proxy, session string, n int) error {
	kinds := []string{"anthropic-stream", "anthropic", "responses-stream", "responses"}
	kind := kinds[n%len(kinds)]
	var path, body, done string
	switch kind {
	case "anthropic-stream", "anthropic":
		path = "/v1/messages"
		body = fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"soak %d"}]}`, kind == "anthropic-stream", n)
		done = `"message_stop"`
		if kind == "anthropic" {
			done = `"end_turn"`
		}
	default:
		path = "/v1/responses"
		body = fmt.Sprintf(`{"model":"gpt-5.2-codex","stream":%t,"input":"soak %d"}`, kind == "responses-stream", n)
		done = `response.completed`
		if kind == "responses" {
			done = `"completed"`
		}
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(proxy, "/")+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(kind, "anthropic") {
		req.Header.Set("X-Api-Key", "sk-test")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("X-Claude-Code-Session-Id", session)
	} else {
		req.Header.Set("Authorization", "Bearer sk-test")
		req.Header.Set("Session-Id", session)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s #%d: %w", kind, n, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("%s #%d: %w", kind, n, err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s #%d: status %d: %.200s", kind, n, resp.StatusCode, data)
	case !strings.Contains(string(data), done):
		return fmt.Errorf("%s #%d: incomplete answer (%d bytes)", kind, n, len(data))
	}
	return nil
}
