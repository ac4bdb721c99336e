package fakeapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The plan limit headers: none by default; the configured figures on Anthropic Messages and on
// both OpenAI APIs, in each provider's shape; changed while the server runs; a 429 in the
// provider's error shape once a window is used up.
func TestServer_PlanLimits(t *testing.T) {
	reset5h := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	reset7d := time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC)
	s := New(Config{Usage: testUsage})
	anthropic := func() *http.Response {
		return do(t, s, http.MethodPost, "/v1/messages", `{"model":"m","messages":[`+anthropicAsk+`]}`, anthropicHdr).Result()
	}
	responses := func(stream bool) *http.Response {
		body := `{"model":"m","input":"hi"}`
		if stream {
			body = `{"model":"m","stream":true,"input":"hi"}`
		}
		return do(t, s, http.MethodPost, "/v1/responses", body, openaiHdr).Result()
	}
	chat := func() *http.Response {
		return do(t, s, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, openaiHdr).Result()
	}
	for _, r := range []*http.Response{anthropic(), responses(false), chat()} {
		for k := range r.Header {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "anthropic-ratelimit") || strings.HasPrefix(lk, "x-codex") {
				t.Errorf("%s without limits set", k)
			}
		}
	}

	want := func(t *testing.T, r *http.Response, code int, hdr map[string]string) {
		t.Helper()
		if r.StatusCode != code {
			t.Errorf("status %d, want %d", r.StatusCode, code)
		}
		for k, v := range hdr {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	}
	s.SetLimits(&PlanLimits{FiveHour: 42, FiveHourReset: reset5h, Weekly: 7, WeeklyReset: reset7d})
	wantAnthropic := map[string]string{
		"anthropic-ratelimit-unified-status":         "allowed",
		"anthropic-ratelimit-unified-5h-utilization": "0.42",
		"anthropic-ratelimit-unified-5h-reset":       "1796565600",
		"anthropic-ratelimit-unified-5h-status":      "allowed",
		"anthropic-ratelimit-unified-7d-utilization": "0.07",
		"anthropic-ratelimit-unified-7d-reset":       "1796893200",
		"anthropic-ratelimit-unified-7d-status":      "allowed",
		"x-codex-primary-used-percent":               "",
	}
	wantCodex := map[string]string{
		"x-codex-primary-used-percent":       "42",
		"x-codex-primary-window-minutes":     "300",
		"x-codex-primary-reset-at":           "1796565600",
		"x-codex-secondary-used-percent":     "7",
		"x-codex-secondary-window-minutes":   "10080",
		"x-codex-secondary-reset-at":         "1796893200",
		"anthropic-ratelimit-unified-status": "",
	}
	if reset5h.Unix() != 1796565600 || reset7d.Unix() != 1796893200 {
		t.Fatal("the resets' Unix seconds in this test are wrong")
	}
	want(t, anthropic(), 200, wantAnthropic)
	for _, r := range []*http.Response{responses(false), responses(true), chat()} {
		want(t, r, 200, wantCodex)
	}

	// Changed while running: 85% of the five-hour window is a warning.
	s.SetLimits(&PlanLimits{FiveHour: 85, FiveHourReset: reset5h, Weekly: 7.5, WeeklyReset: reset7d})
	want(t, anthropic(), 200, map[string]string{"anthropic-ratelimit-unified-status": "allowed_warning",
		"anthropic-ratelimit-unified-5h-utilization": "0.85", "anthropic-ratelimit-unified-5h-status": "allowed_warning",
		"anthropic-ratelimit-unified-7d-utilization": "0.075", "anthropic-ratelimit-unified-7d-status": "allowed"})
	want(t, responses(true), 200, map[string]string{"x-codex-primary-used-percent": "85", "x-codex-secondary-used-percent": "7.5"})
	if got := s.Limits(); got == nil || got.FiveHour != 85 {
		t.Errorf("Limits() = %+v", got)
	}

	// Used up: a 429 with the headers, in each provider's error shape, recorded as an error.
	s.SetLimits(&PlanLimits{FiveHour: 100, FiveHourReset: reset5h, Weekly: 30, WeeklyReset: reset7d})
	r := anthropic()
	want(t, r, 429, map[string]string{"anthropic-ratelimit-unified-status": "rejected",
		"anthropic-ratelimit-unified-5h-utilization": "1", "anthropic-ratelimit-unified-5h-status": "rejected"})
	if m := decode(t, must(io.ReadAll(r.Body))); at(m, "error", "type") != "rate_limit_error" {
		t.Errorf("anthropic 429 body %v", m)
	}
	for _, r := range []*http.Response{responses(true), chat()} {
		want(t, r, 429, map[string]string{"x-codex-primary-used-percent": "100", "content-type": "application/json"})
		if m := decode(t, must(io.ReadAll(r.Body))); at(m, "error", "type") != "usage_limit_reached" || num(t, at(m, "error", "resets_at")) != 1796565600 {
			t.Errorf("openai 429 body %v", m)
		}
	}
	reqs := s.Requests()
	for _, q := range reqs[len(reqs)-3:] {
		if q.Status != 429 || q.Action != ActionError || q.ResponseID != "" || q.Usage != nil {
			t.Errorf("refused request recorded as %+v", q)
		}
	}

	// A window without a reset is not reported; nil turns the headers off.
	s.SetLimits(&PlanLimits{FiveHour: 10, FiveHourReset: reset5h})
	want(t, responses(false), 200, map[string]string{"x-codex-primary-used-percent": "10", "x-codex-secondary-used-percent": ""})
	s.SetLimits(nil)
	want(t, anthropic(), 200, map[string]string{"anthropic-ratelimit-unified-status": "", "anthropic-ratelimit-unified-5h-utilization": ""})
}

// observer-fakeapi's --limit-* flags set the figures, resets counted from its start.
func TestRun_Limits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	errc := make(chan error, 1)
	start := time.Now().Truncate(time.Second)
	go func() {
		errc <- Run(ctx, []string{"--addr", "127.0.0.1:0", "--limit-5h", "42", "--limit-7d", "7", "--limit-5h-reset", "3h"}, &stderr)
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
	resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if h.Get("x-codex-primary-used-percent") != "42" || h.Get("x-codex-secondary-used-percent") != "7" {
		t.Errorf("headers %v", h)
	}
	secs, err := strconv.ParseInt(h.Get("x-codex-primary-reset-at"), 10, 64)
	if err != nil {
		t.Fatalf("x-codex-primary-reset-at: %v", err)
	}
	if d := time.Unix(secs, 0).Sub(start); d < 3*time.Hour || d > 3*time.Hour+time.Minute {
		t.Errorf("the five-hour reset is %v after the start, want 3h", d)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Run after cancel = %v", err)
	}
}
