package codex

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// A rollout's token_count carries the plan's rate_limits (Codex on a ChatGPT plan): each window
// becomes a limit snapshot with the same figures and reset, from the record alone; null
// rate_limits (API-key use) and null windows give none; resets_in_seconds counts from the record.
func TestParser_RateLimits(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"timestamp":"2026-12-06T09:00:00.000Z","type":"session_meta","payload":{"id":"019b0000-0000-7000-8000-00000000limit","timestamp":"2026-12-06T09:00:00.000Z","cwd":"/work/proj","originator":"codex_cli_rs","cli_version":"0.171.0"}}`),
		[]byte(`{"timestamp":"2026-12-06T09:01:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}`),
		[]byte(`{"timestamp":"2026-12-06T09:02:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":110},"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":110}},"rate_limits":{"limit_id":"codex","primary":{"used_percent":42.0,"window_minutes":300,"resets_at":1765026000},"secondary":{"used_percent":7.0,"window_minutes":10080,"resets_at":1765357200},"credits":{"has_credits":false,"unlimited":false,"balance":null},"plan_type":"pro"}}}`),
		[]byte(`{"timestamp":"2026-12-06T09:03:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":100,"window_minutes":300,"resets_in_seconds":600},"secondary":null,"credits":null,"plan_type":null}}}`),
	}
	a := testAdapter(t, t.TempDir())
	p, err := a.newParser(srcOf("/home/u/.codex/sessions/2026/12/06/rollout-2026-12-06T09-00-00-019b0000-0000-7000-8000-00000000limit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := transcripttest.Feed(t, p, lines, transcripttest.CheckValid)
	var got []event.Limit
	for _, ev := range evs {
		if ev.Kind != event.KindLimit {
			continue
		}
		if ev.SessionID != "" || ev.Project != "" || ev.Client != Client {
			t.Errorf("limit event: session %q project %q client %q, want the account's (no session, no project) of %s",
				ev.SessionID, ev.Project, ev.Client, Client)
		}
		got = append(got, *ev.Limit)
	}
	at := time.Date(2026, 12, 6, 9, 3, 0, 0, time.UTC)
	want := []event.Limit{
		{Provider: "openai", Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: "allowed", ResetsAt: time.Unix(1765026000, 0).UTC(), Plan: "pro"},
		{Provider: "openai", Window: "7d", WindowMinutes: 10080, UsedPercent: 7, Status: "allowed", ResetsAt: time.Unix(1765357200, 0).UTC(), Plan: "pro"},
		{Provider: "openai", Window: "5h", WindowMinutes: 300, UsedPercent: 100, Status: "rejected", ResetsAt: at.Add(10 * time.Minute)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d limit snapshots, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("snapshot %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Parsed again, the same ids: a re-read stores nothing twice.
	p2, _ := a.newParser(srcOf("/home/u/.codex/sessions/2026/12/06/rollout-2026-12-06T09-00-00-019b0000-0000-7000-8000-00000000limit.jsonl"), nil)
	again := transcripttest.Feed(t, p2, lines, transcripttest.CheckValid)
	ids := map[string]bool{}
	for _, ev := range evs {
		ids[ev.ID] = true
	}
	for _, ev := range again {
		if !ids[ev.ID] {
			t.Errorf("event %s (%s) has a new id on a second read", ev.ID, ev.Kind)
		}
	}
}
