package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func runCtlStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"observerctl"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const claudePayload = `{"session_id":"c1","transcript_path":"/x.jsonl","cwd":"/work/a/sub","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"},
"workspace":{"current_dir":"/work/a/sub","project_dir":"/work/a"},"version":"2.1.197","cost":{"total_cost_usd":9.99}}`

// costSince is what `observerctl cost` counts from t on, for project (any when "").
func costSince(t *testing.T, home string, since time.Time, project string) float64 {
	t.Helper()
	st, err := store.OpenReader(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := query.Cost(context.Background(), st.DB, query.CostQuery{Filter: query.Filter{Since: since, Project: project}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Total.CostUSD
}

// TestStatusline_Figures: on costHome's store, session c1 cost $1.75 (a transcript turn and a
// proxy turn), Claude Code's active block $0.25 (its proxy turn; the Codex turn an hour ago is in
// a block of Codex's own), and the budget shown is the fuller of the daily one and the one of the
// project holding the workspace.
func TestStatusline_Figures(t *testing.T) {
	home := costHome(t)
	t.Setenv("OBSERVER_BUDGET_DAILY", "10")
	t.Setenv("OBSERVER_BUDGET_PROJECTS", `{ "/work/a" = 2, "/work" = 1000 }`)
	code, out, errOut := runCtlStdin(t, claudePayload, "--home", home, "statusline", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sl statusLine
	if err := json.Unmarshal([]byte(out), &sl); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	now := time.Now()
	y, m, d := now.Date()
	today := costSince(t, home, time.Date(y, m, d, 0, 0, 0, 0, time.Local), "")
	month := costSince(t, home, time.Date(y, m, 1, 0, 0, 0, 0, time.Local), "/work/a")
	wantPct := math.Max(today*10, month*50)
	if sl.SessionCostUSD != 1.75 || sl.SessionSource != "observer" || math.Abs(sl.TodayCostUSD-today) > 1e-9 || sl.Block == nil ||
		sl.Block.Client != "claude-code" || sl.Block.Turns != 1 || math.Abs(sl.Block.CostUSD-0.25) > 1e-9 || math.Abs(sl.BudgetPercent-wantPct) > 1e-9 || len(sl.Budgets) != 2 || sl.Budgets[1].Project != "/work/a" {
		t.Errorf("figures %+v (block %+v), want today $%.2f, budget %.0f%%", sl, sl.Block, today, wantPct)
	}
	line := regexp.MustCompile(`^observer · \$1\.75 session · \$\d+\.\d+ today · block \$0\.25 \(\dh\d\dm left\) · budget \d+%$`)
	if !line.MatchString(sl.Line) {
		t.Errorf("line %q", sl.Line)
	}
	code, out, _ = runCtlStdin(t, claudePayload, "--home", home, "statusline")
	if code != 0 || out != sl.Line+"\n" {
		t.Errorf("plain: exit %d, %q, want %q", code, out, sl.Line)
	}
	// A session observer has not seen: Claude Code's own estimate.
	code, out, _ = runCtlStdin(t, `{"session_id":"new","cost":{"total_cost_usd":2.5}}`, "--home", home, "statusline")
	if code != 0 || !strings.HasPrefix(out, "observer · $2.50 session · ") {
		t.Errorf("unknown session: %q", out)
	}
	// No session, no budget: the parts left out.
	t.Setenv("OBSERVER_BUDGET_DAILY", "0")
	t.Setenv("OBSERVER_BUDGET_PROJECTS", "{}")
	code, out, _ = runCtlStdin(t, `{}`, "--home", home, "statusline")
	if code != 0 || strings.Contains(out, "session") || strings.Contains(out, "budget") || !strings.Contains(out, " today · block $0.25") {
		t.Errorf("without session and budget: %q", out)
	}
}

// TestStatusline_ClaudeCodeBlock: Claude Code runs the status line, so its block part is Claude
// Code's active block, never Codex's (blocksHome: Codex's active block is $1.00, Claude Code's
// $0.75 over three turns, with a burn rate).
func TestStatusline_ClaudeCodeBlock(t *testing.T) {
	home, b := blocksHome(t)
	code, out, errOut := runCtlStdin(t, `{"session_id":"claude-code-s"}`, "--home", home, "statusline", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sl statusLine
	if err := json.Unmarshal([]byte(out), &sl); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if blk := sl.Block; blk == nil || blk.Client != "claude-code" || !blk.Start.Equal(b.Add(-3*time.Hour)) || blk.Turns != 3 ||
		math.Abs(blk.CostUSD-0.75) > 1e-9 || blk.Burn == nil || !strings.Contains(out, `"client": "claude-code"`) {
		t.Errorf("block %+v\n%s", blk, out)
	}
	if !regexp.MustCompile(` · block \$0\.75 \(\dh\d\dm left, \$0\.\d\d/h\)$`).MatchString(sl.Line) {
		t.Errorf("line %q", sl.Line)
	}
}

// TestStatusline_NeverFailsLoudly: without --check or --json, anything wrong still gives a short
// line and exit 0; with them, the exit code says what.
func TestStatusline_NeverFailsLoudly(t *testing.T) {
	home := costHome(t)
	badConfig := t.TempDir()
	write(t, filepath.Join(badConfig, "config.toml"), "[budget]\ndaily = \"lots\"\n")
	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		out   string // prefix of stdout
		msg   string // in stderr
	}{
		{claudePayload, []string{"--home", t.TempDir(), "statusline"}, 0, "observer · no data yet\n", ""},
		{"not json", []string{"--home", home, "statusline"}, 0, "observer · $", ""},
		{"", []string{"--home", home, "statusline"}, 0, "observer · $", ""},
		{"", []string{"--home", home, "statusline", "--json"}, 0, "{", ""}, // empty stdin: no session, not an error
		{claudePayload, []string{"--home", badConfig, "statusline"}, 0, "observer · config error\n", ""},
		{"not json", []string{"--home", home, "statusline", "--check"}, ExitBadInput, "", "stdin"},
		{claudePayload, []string{"--home", t.TempDir(), "statusline", "--check"}, ExitUnavailable, "", "no store"},
		{claudePayload, []string{"--home", t.TempDir(), "statusline", "--json"}, ExitUnavailable, "", "no store"},
		{claudePayload, []string{"--home", badConfig, "statusline", "--check"}, ExitUsage, "", "config"},
		{claudePayload, []string{"--home", home, "statusline", "--bogus"}, ExitUsage, "", "bogus"},
	} {
		code, out, errOut := runCtlStdin(t, c.stdin, c.args...)
		if code != c.code || !strings.HasPrefix(out, c.out) || (c.out == "" && c.code != ExitUsage && out != "") || !strings.Contains(errOut, c.msg) || (c.code == 0 && errOut != "") {
			t.Errorf("%q %v: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.stdin, c.args, code, out, errOut, c.code, c.out, c.msg)
		}
	}
}

// `statusline --json </dev/null`: a real process with /dev/null (a character device, not a
// terminal) on stdin prints the figures without a session.
func TestStatusline_DevNull(t *testing.T) {
	home := costHome(t)
	cmd := exec.Command(os.Args[0], "--home", home, "statusline", "--json")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, &out, &errOut
	if err := cmd.Run(); err != nil || !strings.HasPrefix(out.String(), "{") || strings.Contains(errOut.String(), "terminal") {
		t.Errorf("exit %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
}

// TestStatusline_RealProcess runs observerctl as Claude Code does: a pipe on stdin, which the
// command must not wait to see closed once it has the JSON object.
func TestStatusline_RealProcess(t *testing.T) {
	home := costHome(t)
	cmd := exec.Command(os.Args[0], "--home", home, "statusline")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(in, claudePayload) // and the pipe stays open
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.HasPrefix(out.String(), "observer · $1.75 session · ") || errOut.Len() > 0 {
			t.Errorf("exit %v, stdout %q, stderr %q", err, out.String(), errOut.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("statusline waited for stdin to close")
	}
}

// BenchmarkStatusline measures the figures of one status line (the store queries, without the
// process start) on a store of $OBSERVER_BENCH_TURNS turns (default 200,000) over 90 days, of
// 2,000 sessions, with daily, monthly and project budgets. scripts/bench-statusline.sh times the
// real binary on the dashboard benchmark's 1M-turn store.
func BenchmarkStatusline(b *testing.B) {
	turns := 200_000
	if v := os.Getenv("OBSERVER_BENCH_TURNS"); v != "" {
		fmt.Sscan(v, &turns)
	}
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	start := now.Add(-90 * 24 * time.Hour)
	step := (90 * 24 * time.Hour) / time.Duration(turns)
	batch := make([]event.Event, 0, 1000)
	for i := range turns {
		ev := event.New(event.KindTokenUsage, "bench")
		s := i % 2000
		ev.ID, ev.Client, ev.SessionID, ev.Project = fmt.Sprint("u", i), "claude-code", fmt.Sprint("s", s), fmt.Sprint("/work/p", s%50)
		ev.Time = start.Add(time.Duration(i) * step)
		ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1000, Output: 100, CacheRead: 5000}, Model: "claude-sonnet-4-5",
			MessageID: fmt.Sprint("m", i), CostUSD: 0.01}
		batch = append(batch, ev)
		if len(batch) == cap(batch) || i == turns-1 {
			if _, err := st.WriteBatch(ctx, batch, nil); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	st.Close()
	rd, err := store.OpenReader(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	budget := config.Budget{Daily: 50, Monthly: 1000, Projects: map[string]float64{"/work/p7": 100}}
	p := statusPayload{SessionID: "s7"}
	p.Workspace.ProjectDir = "/work/p7"
	b.ResetTimer()
	for b.Loop() {
		if _, err := statusFigures(ctx, rd, budget, p, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStatusline_Limits: with Anthropic's own figures of the plan's windows, the line shows the
// 5-hour and weekly shares and the 5-hour reset; OpenAI's (Codex's) and windows reset since are
// left out.
func TestStatusline_Limits(t *testing.T) {
	home := costHome(t)
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	reset := now.Add(90 * time.Minute)
	var evs []event.Event
	for i, l := range []event.Limit{
		{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: "allowed", ResetsAt: reset},
		{Provider: "anthropic", Window: "7d", WindowMinutes: 10080, UsedPercent: 7.5, Status: "allowed", ResetsAt: now.Add(72 * time.Hour)},
		{Provider: "anthropic", Window: "7d_opus", WindowMinutes: 10080, UsedPercent: 3},
		{Provider: "openai", Window: "5h", WindowMinutes: 300, UsedPercent: 99, ResetsAt: reset},
	} {
		ev := event.New(event.KindLimit, "observer-proxy")
		ev.ID, ev.Time, ev.Limit = fmt.Sprint("l", i), now, &l
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errOut := runCtlStdin(t, claudePayload, "--home", home, "statusline", "--json")
	var sl statusLine
	if code != 0 || json.Unmarshal([]byte(out), &sl) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	want := " · 5h 42% (resets " + reset.Local().Format("15:04") + ") · week 7.5% (resets "
	if !strings.Contains(sl.Line, want) || strings.Contains(sl.Line, "99") || strings.Contains(sl.Line, "opus") || len(sl.Limits) != 2 {
		t.Errorf("line %q (limits %d), want it to hold %q and nothing of OpenAI or the Opus window", sl.Line, len(sl.Limits), want)
	}
}
