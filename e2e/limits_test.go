package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// limitJSON is one entry of `observerctl limits --json`.
type limitJSON struct {
	Provider      string    `json:"provider"`
	Window        string    `json:"window"`
	WindowMinutes int       `json:"window_minutes"`
	UsedPercent   float64   `json:"used_percent"`
	Status        string    `json:"status"`
	ResetsAt      time.Time `json:"resets_at"`
	ResetsIn      string    `json:"resets_in"`
	Client        string    `json:"client"`
	Source        string    `json:"source"`
	Reset         bool      `json:"reset"`
}

type limitsReportJSON struct {
	Limits    []limitJSON     `json:"limits"`
	Estimated json.RawMessage `json:"estimated"`
}

// limits runs `observerctl limits --json`.
func (s *suite) limits() limitsReportJSON {
	s.tb.Helper()
	out, errOut, code := s.ctl(nil, "limits", "--json")
	var rep limitsReportJSON
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		s.tb.Fatalf("limits --json: exit %d\n%s%s", code, out, errOut)
	}
	return rep
}

// wantLimit is what one window must show.
type wantLimit struct {
	provider, window string
	minutes          int
	used             float64
	status           string
	resets           time.Time
	client, source   string
}

// limitsMismatch says how rep differs from want (every window of want, and no other); "" when
// it does not.
func limitsMismatch(rep limitsReportJSON, want []wantLimit) string {
	var diffs []string
	if len(rep.Limits) != len(want) {
		diffs = append(diffs, fmt.Sprintf("%d windows, want %d", len(rep.Limits), len(want)))
	}
	if rep.Estimated != nil {
		diffs = append(diffs, "estimated is set beside provider figures")
	}
	for _, w := range want {
		i := slices.IndexFunc(rep.Limits, func(l limitJSON) bool { return l.Provider == w.provider && l.Window == w.window })
		if i < 0 {
			diffs = append(diffs, fmt.Sprintf("no %s %s", w.provider, w.window))
			continue
		}
		l := rep.Limits[i]
		if l.WindowMinutes != w.minutes || l.UsedPercent != w.used || l.Status != w.status || !l.ResetsAt.Equal(w.resets) ||
			l.ResetsIn == "" || l.Reset || l.Client != w.client || l.Source != w.source {
			diffs = append(diffs, fmt.Sprintf("%s %s = %+v, want %d min, %v%%, %s, resets %s, client %s, source %s", w.provider, w.window,
				l, w.minutes, w.used, w.status, w.resets.UTC().Format(time.RFC3339), w.client, w.source))
		}
	}
	return strings.Join(diffs, "; ")
}

// waitLimits polls `observerctl limits --json` until it shows exactly want.
func (s *suite) waitLimits(d time.Duration, want []wantLimit) limitsReportJSON {
	s.tb.Helper()
	d = patient(d)
	deadline := time.Now().Add(d)
	for {
		rep := s.limits()
		diff := limitsMismatch(rep, want)
		if diff == "" {
			return rep
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("limits --json after %v: %s\n%+v", d, diff, rep.Limits)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type alertJSON struct {
	Kind      string `json:"kind"`
	Scope     string `json:"scope"`
	Period    string `json:"period"`
	Threshold int    `json:"threshold"`
	Message   string `json:"message"`
}

// limitAlerts are the alerts of kind limit `observerctl budget --json` lists.
func (s *suite) limitAlerts() []alertJSON {
	s.tb.Helper()
	out, errOut, code := s.ctl(nil, "budget", "--json")
	var rep struct {
		Alerts []alertJSON `json:"alerts"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		s.tb.Fatalf("budget --json: exit %d\n%s%s", code, out, errOut)
	}
	var out2 []alertJSON
	for _, a := range rep.Alerts {
		if a.Kind == "limit" {
			out2 = append(out2, a)
		}
	}
	slices.SortFunc(out2, func(a, b alertJSON) int { return strings.Compare(a.Scope, b.Scope) })
	return out2
}

// waitLimitAlerts polls until n limit alerts are listed.
func (s *suite) waitLimitAlerts(d time.Duration, n int) []alertJSON {
	s.tb.Helper()
	d = patient(d)
	deadline := time.Now().Add(d)
	for {
		a := s.limitAlerts()
		if len(a) >= n || time.Now().After(deadline) {
			if len(a) != n {
				s.tb.Fatalf("%d limit alerts after %v, want %d: %+v\n%s", len(a), d, n, a, s.readFile("logs/writer.log"))
			}
			return a
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLimits_RealClientsThroughProxy runs the real Claude Code and Codex CLIs, offline, through
// observer-proxy against the fake API answering with plan usage headers: 42% of the five-hour
// window and 7% of the weekly one. `observerctl limits --json` gives exactly those figures and
// resets for both providers. At 85% (after one more turn of each) it shows 85, and the warning
// alert ([limits] warn_at 80) is raised once per provider's five-hour window: still once after a
// further turn of each, whose weekly figure at 81% raises the weekly windows' alerts (the proof
// that the limits were checked again after that turn).
func TestLimits_RealClientsThroughProxy(t *testing.T) {
	claude, codex := realclient.FindClaude(t), realclient.FindCodex(t)
	start := time.Now()
	now := start.Truncate(time.Second)
	reset5h, reset7d := now.Add(2*time.Hour+13*time.Minute), now.Add(4*24*time.Hour+5*time.Hour)
	fake := fakeapi.New(fakeapi.Config{Usage: fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7},
		Limits: &fakeapi.PlanLimits{FiveHour: 42, FiveHourReset: reset5h, Weekly: 7, WeeklyReset: reset7d}})
	up := httptest.NewServer(fake)
	defer up.Close()
	hook := newHookReceiver(t)
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_LIMITS_WARN_AT=80",
		"OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PROXY_OPENAI_UPSTREAM="+up.URL,
		"OBSERVER_ALERTS_WEBHOOK_URL="+hook.URL+"/services/T0/B0/secret-token", "OBSERVER_ALERTS_FORMAT=slack")
	s.start()
	base := "http://" + proxyAddr

	// Each client in a HOME of its own: observer-watch (which reads the suite's HOME) does not
	// see their records, so every figure here is the proxy's.
	turn := func() {
		t.Helper()
		home, repo := realclient.Dirs(t)
		if out := realclient.Run(t, repo, realclient.ClaudeEnv(home, base), claude, realclient.ClaudeArgs("list the files")...); !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("claude printed %q", out)
		}
		home, repo = realclient.Dirs(t)
		if out := realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(base+"/v1", "list the files", false)...); !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("codex printed %q", out)
		}
	}
	window := func(provider, client, w string, used float64, status string) wantLimit {
		l := wantLimit{provider: provider, window: w, minutes: 300, used: used, status: status, resets: reset5h,
			client: client, source: "observer-proxy"}
		if w == "7d" {
			l.minutes, l.resets = 7*24*60, reset7d
		}
		return l
	}
	anthropicStatus := func(used float64) string { // what the fake's -status header says
		if used >= fakeapi.WarnAt {
			return "allowed_warning"
		}
		return "allowed"
	}
	figures := func(h5, d7 float64) []wantLimit {
		return []wantLimit{
			window("anthropic", "claude-code", "5h", h5, anthropicStatus(h5)), window("anthropic", "claude-code", "7d", d7, anthropicStatus(d7)),
			// Codex's headers carry no status: below 100% the proxy says allowed.
			window("openai", "codex", "5h", h5, "allowed"), window("openai", "codex", "7d", d7, "allowed"),
		}
	}

	turn()
	s.waitLimits(20*time.Second, figures(42, 7))
	if a := s.limitAlerts(); len(a) != 0 {
		t.Fatalf("limit alerts at 42%%: %+v", a)
	}
	t.Logf("42%% / 7%% shown for both providers %v after the start", time.Since(start).Round(time.Millisecond))

	fake.SetLimits(&fakeapi.PlanLimits{FiveHour: 85, FiveHourReset: reset5h, Weekly: 7, WeeklyReset: reset7d})
	turn()
	s.waitLimits(20*time.Second, figures(85, 7))
	alerts := s.waitLimitAlerts(20*time.Second, 2)
	period5h := reset5h.UTC().Format(time.RFC3339)
	for i, scope := range []string{"anthropic 5h", "openai 5h"} {
		if a := alerts[i]; a.Scope != scope || a.Threshold != 80 || a.Period != period5h || !strings.Contains(a.Message, "85%") {
			t.Errorf("alert %d = %+v, want %s at threshold 80 for the window resetting %s", i, a, scope, period5h)
		}
	}
	// Both reached the webhook as Slack's incoming-webhook JSON before the next turn.
	hook.wait(t, 2, "anthropic 5h limit at 85%", "openai 5h limit at 85%")

	// One more turn of each, the five-hour window still at 85%: no second alert for it. The
	// weekly window at 81% raises its own, which says the limits were checked after this turn.
	fake.SetLimits(&fakeapi.PlanLimits{FiveHour: 85, FiveHourReset: reset5h, Weekly: 81, WeeklyReset: reset7d})
	turn()
	s.waitLimits(20*time.Second, figures(85, 81))
	alerts = s.waitLimitAlerts(20*time.Second, 4)
	count := map[string]int{}
	for _, a := range alerts {
		count[a.Scope]++
		if a.Threshold != 80 {
			t.Errorf("alert %+v, want threshold 80", a)
		}
	}
	if want := map[string]int{"anthropic 5h": 1, "openai 5h": 1, "anthropic 7d": 1, "openai 7d": 1}; fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("limit alerts per window %v, want %v", count, want)
	}
	if n := s.count("SELECT count(*) FROM alerts WHERE kind = 'limit'"); n != 4 {
		t.Errorf("%d limit alerts stored, want 4", n)
	}

	// Each of the four reached the webhook once, as Slack-shaped JSON.
	hook.wait(t, 4, "anthropic 5h limit at 85%", "openai 5h limit at 85%", "anthropic 7d limit at 81%", "openai 7d limit at 81%")
	if log := s.readFile("logs/writer.log"); strings.Contains(log, "secret-token") {
		t.Errorf("the webhook's token is in the writer's log:\n%s", log)
	}
	t.Logf("whole test %v", time.Since(start).Round(time.Millisecond))
}

// TestLimits_CodexRolloutAlone: the real Codex CLI against the fake API with no proxy at all
// writes the plan figures of the response headers into its rollout (rate_limits); `observerctl
// scan` of that rollout alone gives `observerctl limits --json` the same figures and resets.
func TestLimits_CodexRolloutAlone(t *testing.T) {
	codex := realclient.FindCodex(t)
	now := time.Now().Truncate(time.Second)
	reset5h, reset7d := now.Add(3*time.Hour+1*time.Minute), now.Add(6*24*time.Hour)
	fake := fakeapi.New(fakeapi.Config{Usage: fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7},
		Limits: &fakeapi.PlanLimits{FiveHour: 42, FiveHourReset: reset5h, Weekly: 7, WeeklyReset: reset7d}})
	up := httptest.NewServer(fake)
	defer up.Close()
	home, repo := realclient.Dirs(t)
	realclient.Run(t, repo, realclient.CodexEnv(home), codex, realclient.CodexArgs(up.URL+"/v1", "list the files", false)...)

	// The rollout itself holds the figures.
	var rollouts []string
	filepath.WalkDir(filepath.Join(home, ".codex", "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			rollouts = append(rollouts, p)
		}
		return nil
	})
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	data, _ := os.ReadFile(rollouts[0])
	want := fmt.Sprintf(`"primary":{"used_percent":42.0,"window_minutes":300,"resets_at":%d}`, reset5h.Unix())
	if !strings.Contains(string(data), want) {
		t.Fatalf("the rollout has no %s", want)
	}

	s := newSuite(t, "HOME="+home)
	if out, errOut, code := s.ctl(nil, "scan"); code != 0 {
		t.Fatalf("scan: exit %d\n%s%s", code, out, errOut)
	}
	checkRolloutLimits(t, s, reset5h, reset7d)
}

// TestLimits_HandWrittenRollout: a Codex rollout with rate_limits, written here (no client, no
// proxy): `observerctl scan` of it gives the same figures; a later token_count moves them.
func TestLimits_HandWrittenRollout(t *testing.T) {
	home := t.TempDir()
	now := time.Now().Truncate(time.Second)
	reset5h, reset7d := now.Add(2*time.Hour), now.Add(5*24*time.Hour)
	dir := filepath.Join(home, ".codex", "sessions", now.UTC().Format("2006/01/02"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	id := "01a24aaa-42e8-7d92-8d94-9bbc5ac49733"
	ts := func(d time.Duration) string {
		return now.Add(-10*time.Minute + d).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	tokenCount := func(d time.Duration, h5, d7 float64) string {
		return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1120,"cached_input_tokens":1000,"output_tokens":45,"reasoning_output_tokens":10,"total_tokens":1165},"last_token_usage":{"input_tokens":1120,"cached_input_tokens":1000,"output_tokens":45,"reasoning_output_tokens":10,"total_tokens":1165},"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":%v,"window_minutes":300,"resets_at":%d},"secondary":{"used_percent":%v,"window_minutes":10080,"resets_at":%d},"credits":null,"plan_type":null}}}`,
			ts(d), h5, reset5h.Unix(), d7, reset7d.Unix())
	}
	lines := []string{
		fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":"/work/p","originator":"codex_exec","cli_version":"0.171.0","model_provider":"openai"}}`, ts(0), id, ts(0)),
		fmt.Sprintf(`{"timestamp":%q,"type":"turn_context","payload":{"cwd":"/work/p","model":"gpt-5.2-codex"}}`, ts(time.Second)),
		tokenCount(2*time.Second, 40, 6),
		tokenCount(3*time.Second, 42, 7),
	}
	path := filepath.Join(dir, "rollout-"+now.UTC().Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newSuite(t, "HOME="+home)
	if out, errOut, code := s.ctl(nil, "scan"); code != 0 {
		t.Fatalf("scan: exit %d\n%s%s", code, out, errOut)
	}
	checkRolloutLimits(t, s, reset5h, reset7d)
}

// checkRolloutLimits: limits --json shows the Codex reader's 42% / 7%, the latest figures.
func checkRolloutLimits(t *testing.T, s *suite, reset5h, reset7d time.Time) {
	t.Helper()
	rep := s.limits()
	source := ""
	if len(rep.Limits) > 0 {
		source = rep.Limits[0].Source
	}
	if source == "" || source == "observer-proxy" {
		t.Fatalf("limits --json: source %q, want the Codex reader's: %+v", source, rep.Limits)
	}
	want := []wantLimit{
		{provider: "openai", window: "5h", minutes: 300, used: 42, status: "allowed", resets: reset5h, client: "codex", source: source},
		{provider: "openai", window: "7d", minutes: 7 * 24 * 60, used: 7, status: "allowed", resets: reset7d, client: "codex", source: source},
	}
	if diff := limitsMismatch(rep, want); diff != "" {
		t.Fatalf("limits --json: %s\n%+v", diff, rep.Limits)
	}
}

// hookReceiver is a webhook on loopback that keeps the text of every Slack-shaped body it gets.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
	bad   []string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg map[string]any
		h.mu.Lock()
		defer h.mu.Unlock()
		text, ok := "", false
		if json.Unmarshal(body, &msg) == nil && len(msg) == 1 {
			text, ok = msg["text"].(string)
		}
		if !ok || r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/services/T0/B0/secret-token" {
			h.bad = append(h.bad, fmt.Sprintf("%s %s %q", r.URL.Path, r.Header.Get("Content-Type"), body))
		} else {
			h.texts = append(h.texts, text)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// wait waits until the receiver has n Slack-shaped bodies, then checks that each of want is in
// exactly one of them and that nothing else came.
func (h *hookReceiver) wait(t *testing.T, n int, want ...string) {
	t.Helper()
	d := patient(20 * time.Second)
	deadline := time.Now().Add(d)
	for {
		h.mu.Lock()
		texts, bad := slices.Clone(h.texts), slices.Clone(h.bad)
		h.mu.Unlock()
		if len(texts) >= n || len(bad) > 0 || time.Now().After(deadline) {
			if len(texts) != n || len(bad) > 0 {
				t.Fatalf("webhook after %v: %d Slack bodies, want %d: %q; not Slack-shaped: %q", d, len(texts), n, texts, bad)
			}
			for _, w := range want {
				if c := slices.IndexFunc(texts, func(s string) bool { return strings.Contains(s, w) }); c < 0 ||
					slices.IndexFunc(texts[c+1:], func(s string) bool { return strings.Contains(s, w) }) >= 0 {
					t.Errorf("webhook texts %q: want exactly one with %q", texts, w)
				}
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
