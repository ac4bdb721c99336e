package proxy

import (
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// The providers' limit headers become one snapshot per window, in percent, with the reset in UTC;
// API-key answers (no such headers) give none.
func TestPlanLimits_Headers(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	reset5h, reset7d := time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC), time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	for _, c := range []struct {
		name     string
		provider string
		status   int
		h        http.Header
		want     []event.Limit
	}{
		{"anthropic subscription", Anthropic, 200, hdr(
			"anthropic-ratelimit-unified-status", "allowed",
			"anthropic-ratelimit-unified-5h-utilization", "0.42", "anthropic-ratelimit-unified-5h-reset", unix(reset5h),
			"anthropic-ratelimit-unified-5h-status", "allowed",
			"anthropic-ratelimit-unified-7d-utilization", "0.07", "anthropic-ratelimit-unified-7d-reset", unix(reset7d),
			"anthropic-ratelimit-unified-7d-status", "allowed_warning",
			"anthropic-ratelimit-unified-7d_oi-utilization", "0.5"),
			[]event.Limit{
				{Provider: Anthropic, Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: "allowed", ResetsAt: reset5h},
				{Provider: Anthropic, Window: "7d", WindowMinutes: 10080, UsedPercent: 7, Status: "allowed_warning", ResetsAt: reset7d},
				{Provider: Anthropic, Window: "7d_oi", WindowMinutes: 10080, UsedPercent: 50},
			}},
		{"anthropic rejected without a status", Anthropic, 429, hdr(
			"anthropic-ratelimit-unified-5h-utilization", "1.0", "anthropic-ratelimit-unified-5h-reset", unix(reset5h)),
			[]event.Limit{{Provider: Anthropic, Window: "5h", WindowMinutes: 300, UsedPercent: 100, Status: "rejected", ResetsAt: reset5h}}},
		{"anthropic api key", Anthropic, 200, hdr("anthropic-ratelimit-tokens-remaining", "1000"), nil},
		{"anthropic garbage", Anthropic, 200, hdr("anthropic-ratelimit-unified-5h-utilization", "lots"), nil},
		{"codex plan", OpenAI, 200, hdr(
			"x-codex-primary-used-percent", "42", "x-codex-primary-window-minutes", "300", "x-codex-primary-reset-at", unix(reset5h),
			"x-codex-secondary-used-percent", "7.5", "x-codex-secondary-window-minutes", "10080", "x-codex-secondary-reset-after-seconds", "342000",
			"x-codex-plan-type", "Pro",
			"x-codex-bengalfox-primary-used-percent", "97", "x-codex-bengalfox-primary-window-minutes", "300"),
			[]event.Limit{
				{Provider: OpenAI, Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: "allowed", ResetsAt: reset5h, Plan: "pro"},
				{Provider: OpenAI, Window: "5h_bengalfox", WindowMinutes: 300, UsedPercent: 97, Status: "allowed", Plan: "pro"},
				{Provider: OpenAI, Window: "7d", WindowMinutes: 10080, UsedPercent: 7.5, Status: "allowed", ResetsAt: now.Add(342000 * time.Second), Plan: "pro"},
			}},
		{"codex used up", OpenAI, 429, hdr("x-codex-primary-used-percent", "100", "x-codex-primary-reset-at", "2026-12-06T13:00:00Z"),
			[]event.Limit{{Provider: OpenAI, Window: "primary", UsedPercent: 100, Status: "rejected", ResetsAt: reset5h}}},
		{"openai api key", OpenAI, 200, hdr("x-ratelimit-remaining-tokens", "5"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := planLimits(c.provider, c.h, c.status, now)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("planLimits:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// A response's limit headers reach the bus as limit events beside its turn, named for the client
// that sent the request, with ids derived from the turn's.
func TestProxy_PublishesLimits(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second).UTC()
	srv, cp := setup(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("anthropic-ratelimit-unified-5h-utilization", "0.85")
		w.Header().Set("anthropic-ratelimit-unified-5h-reset", strconv.FormatInt(reset.Unix(), 10))
		w.Header().Set("anthropic-ratelimit-unified-5h-status", "allowed_warning")
		w.Header().Set("anthropic-ratelimit-unified-7d-utilization", "0.07")
		io.WriteString(w, anthropicStream)
	})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages?beta=true", strings.NewReader(claudeBody))
	req.Header.Set("User-Agent", "claude-cli/2.0.14 (external, cli)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var turn event.Event
	limits := map[string]event.Event{}
	for turn.ID == "" || len(limits) < 2 {
		ev := cp.nextEvent(t)
		switch ev.Kind {
		case event.KindAPITurn:
			turn = ev
		case event.KindLimit:
			limits[ev.Limit.Window] = ev
		}
	}
	five := limits["5h"]
	if five.Client != "claude-code" || five.ID != event.ID(turn.ID, "limit", "5h") || five.Source != "observer-proxy" {
		t.Errorf("5h limit event: client %q id %q source %q (turn %s)", five.Client, five.ID, five.Source, turn.ID)
	}
	want := event.Limit{Provider: Anthropic, Window: "5h", WindowMinutes: 300, UsedPercent: 85, Status: "allowed_warning", ResetsAt: reset}
	if !reflect.DeepEqual(*five.Limit, want) {
		t.Errorf("5h limit %+v, want %+v", *five.Limit, want)
	}
	if l := limits["7d"].Limit; l.UsedPercent != 7 || !l.ResetsAt.IsZero() {
		t.Errorf("7d limit %+v, want 7%% without a reset", l)
	}
}

// The headers of an API-key answer are looked through on every response: without allocating.
func TestPlanLimits_NoneAllocatesNothing(t *testing.T) {
	h := http.Header{}
	for _, k := range []string{"Content-Type", "Request-Id", "Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Tokens-Remaining",
		"Cf-Ray", "Date", "Server", "X-Envoy-Upstream-Service-Time", "Anthropic-Organization-Id", "Via"} {
		h.Set(k, "1")
	}
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() { planLimits(Anthropic, h, 200, now); planLimits(OpenAI, h, 200, now) }); n != 0 {
		t.Errorf("%v allocations per response without limit headers, want 0", n)
	}
}
