package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// pruneHome makes an observer home whose store holds, for each of three ages (100 days, 10 days
// and an hour ago), two tool calls with outputs, a transcript turn, a proxy turn and a hook event.
func pruneHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	var evs []event.Event
	for i, age := range []time.Duration{100 * 24 * time.Hour, 10 * 24 * time.Hour, time.Hour} {
		at := now.Add(-age)
		sess := fmt.Sprintf("s%d", i)
		ev := func(kind event.Kind, key string, at time.Time) event.Event {
			e := event.New(kind, "test")
			e.ID, e.Client, e.SessionID, e.Project, e.Time = fmt.Sprintf("%s-%d", key, i), "claude-code", sess, fmt.Sprintf("/p/%d", i), at
			return e
		}
		for j := 0; j < 2; j++ {
			a := ev(event.KindAction, fmt.Sprintf("a%d", j), at.Add(time.Duration(j)*time.Minute))
			a.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Output: "some output"}
			evs = append(evs, a)
		}
		u := ev(event.KindTokenUsage, "u", at)
		u.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: 10}, Model: "m", MessageID: fmt.Sprintf("msg-%d", i),
			CostUSD: 1, Reliability: event.ReliabilityApproximate}
		p := ev(event.KindAPITurn, "p", at.Add(-5*time.Minute))
		p.Project = ""
		p.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 1, Output: 1}, Provider: "anthropic", Model: "m",
			MessageID: fmt.Sprintf("resp-%d", i), Status: 200, CostUSD: 0.5, Reliability: event.ReliabilityAccurate}
		h := ev(event.KindHook, "h", at)
		h.Hook = &event.Hook{Event: "Stop"}
		evs = append(evs, u, p, h)
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexOutputs(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	return home
}

type pruneJSON struct {
	DryRun     bool             `json:"dry_run"`
	Before     time.Time        `json:"before"`
	MaxActions int64            `json:"max_actions"`
	Deleted    map[string]int64 `json:"deleted"`
	Total      int64            `json:"total"`
}

func runPruneJSON(t *testing.T, home string, args ...string) pruneJSON {
	t.Helper()
	code, out, errOut := runCtl(t, append([]string{"--home", home, "prune", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("prune %v: exit %d\n%s%s", args, code, out, errOut)
	}
	var r pruneJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("prune %v: %v\n%s", args, err, out)
	}
	return r
}

// rollupsMatchRebuild reports whether the store's rollups equal a rebuild from its raw rows.
func rollupsMatchRebuild(t *testing.T, home string) bool {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dump := func() string {
		var b strings.Builder
		for _, q := range []string{
			"SELECT hour, client, session_id, project, model, turns, input_tokens, output_tokens, printf('%.6f', cost_usd) FROM usage_hourly ORDER BY 1, 2, 3, 4, 5",
			"SELECT hour, client, session_id, project, type, tool, actions FROM actions_hourly ORDER BY 1, 2, 3, 4, 5, 6",
			"SELECT day, client, type, tool, actions FROM actions_daily ORDER BY 1, 2, 3, 4",
		} {
			rows, err := st.DB.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				rows.Scan(ptrs...)
				fmt.Fprintln(&b, vals...)
			}
			rows.Close()
		}
		return b.String()
	}
	kept := dump()
	if err := st.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	rebuilt := dump()
	if kept != rebuilt {
		t.Logf("kept rollups:\n%s\nrebuilt:\n%s", kept, rebuilt)
	}
	return kept == rebuilt && kept != ""
}

func TestPrune_DryRunThenPrune(t *testing.T) {
	home := pruneHome(t)
	want := map[string]int64{"actions": 2, "action_outputs": 2, "token_usage": 1, "api_turns": 1, "hook_events": 1, "sessions": 1, "projects": 1}
	check := func(r pruneJSON, what string) {
		t.Helper()
		for table, n := range want {
			if r.Deleted[table] != n {
				t.Errorf("%s: %s %d, want %d (all: %v)", what, table, r.Deleted[table], n, r.Deleted)
			}
		}
		if r.Total != 9 {
			t.Errorf("%s: total %d, want 9", what, r.Total)
		}
	}
	dry := runPruneJSON(t, home, "--older-than", "30d", "--dry-run")
	check(dry, "dry run")
	if !dry.DryRun || time.Since(dry.Before) < 29*24*time.Hour || time.Since(dry.Before) > 31*24*time.Hour {
		t.Errorf("dry run: %+v", dry)
	}
	if c := storeCounts(t, home); c["actions"] != 6 || c["api_turns"] != 3 {
		t.Fatalf("the dry run deleted rows: %v", c)
	}
	costBefore := costTotal(t, home)

	r := runPruneJSON(t, home, "--older-than", "30d")
	check(r, "prune")
	if c := storeCounts(t, home); c["actions"] != 4 || c["token_usage"] != 2 || c["api_turns"] != 2 || c["hook_events"] != 2 || c["sessions"] != 2 {
		t.Errorf("after prune: %v", c)
	}
	if got := costTotal(t, home); got != costBefore-1.5 {
		t.Errorf("cost after prune $%.2f, want $%.2f less $1.50", got, costBefore)
	}
	if !rollupsMatchRebuild(t, home) {
		t.Error("after prune the rollups differ from a rebuild")
	}

	code, out, errOut := runCtl(t, "--home", home, "prune", "--max-actions", "1")
	if code != ExitOK || !strings.Contains(out, "deleted 6 rows: actions beyond the newest 1") || !strings.Contains(out, "action_outputs") {
		t.Errorf("--max-actions 1: exit %d\n%s%s", code, out, errOut)
	}
	if c := storeCounts(t, home); c["actions"] != 1 || c["token_usage"] != 2 {
		t.Errorf("after --max-actions 1: %v", c)
	}
	if !rollupsMatchRebuild(t, home) {
		t.Error("after --max-actions the rollups differ from a rebuild")
	}
}

// TestPrune_RetentionConfig: [retention] gives the defaults; a flag overrides it.
func TestPrune_RetentionConfig(t *testing.T) {
	home := pruneHome(t)
	write(t, filepath.Join(home, "config.toml"), "[retention]\nmax_age = \"720h\"\nmax_actions = 3\n")
	r := runPruneJSON(t, home, "--dry-run")
	if r.Deleted["actions"] != 3 || r.MaxActions != 3 || r.Before.IsZero() {
		t.Errorf("with [retention]: %+v, want 2 old actions and 1 beyond 3", r)
	}
	r = runPruneJSON(t, home, "--dry-run", "--older-than", "0")
	if r.Deleted["actions"] != 3 || r.Deleted["token_usage"] != 0 || !r.Before.IsZero() {
		t.Errorf("--older-than 0 keeps only the cap: %+v", r)
	}
	r = runPruneJSON(t, home, "--dry-run", "--max-actions", "0", "--older-than", "5d")
	if r.Deleted["actions"] != 4 || r.Deleted["token_usage"] != 2 {
		t.Errorf("--older-than 5d without a cap: %+v", r)
	}
}

func TestPrune_Errors(t *testing.T) {
	home := pruneHome(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "prune", "--older-than", "30d"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "prune"}, ExitUsage, "nothing to prune by"},
		{[]string{"--home", home, "prune", "--older-than", "soon"}, ExitUsage, "--older-than"},
		{[]string{"--home", home, "prune", "--older-than", "0d"}, ExitUsage, "greater than 0"},
		{[]string{"--home", home, "prune", "--max-actions", "-1"}, ExitUsage, "--max-actions"},
		{[]string{"--home", home, "prune", "--bogus"}, ExitUsage, "bogus"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, _, errOut := runCtl(t, "--home", home, "prune", "--older-than", "30d")
	if code != ExitUnavailable || !strings.Contains(errOut, "observerctl down") || !strings.Contains(errOut, "[retention]") {
		t.Errorf("writer holds the store: exit %d, %s", code, errOut)
	}
	if r := runPruneJSON(t, home, "--older-than", "30d", "--dry-run"); r.Deleted["actions"] != 2 {
		t.Errorf("a dry run while the writer runs: %+v", r)
	}
}

// TestWriter_AppliesRetentionAtStart runs the writer process's code against a real bus with
// [retention] set: it deletes the old rows at start, beside its normal work, and logs it.
func TestWriter_AppliesRetentionAtStart(t *testing.T) {
	home := pruneHome(t)
	cfg := config.Default()
	cfg.Home = home
	cfg.Retention.MaxAge = config.Duration(30 * 24 * time.Hour)
	cfg.Pricing.AutoUpdate = false // no test reaches the network
	token, err := bus.LoadOrCreateToken(cfg.TokenPath())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := busserver.Start(ctx, busserver.Config{Dir: cfg.BusDir(), Host: "127.0.0.1", Port: -1, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Sscanf(srv.ClientURL()[strings.LastIndex(srv.ClientURL(), ":")+1:], "%d", &cfg.Bus.Port)
	logs := &lockedBuffer{}
	e := &env{cfg: cfg, logger: slog.New(slog.NewTextHandler(logs, nil))}
	done := make(chan error, 1)
	go func() { done <- runWriter(ctx, e) }()
	// Retention runs beside the writer, table by table: wait for its last word, not for one
	// table's count (a stop in between leaves the other tables for the next start).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "retention applied") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if c := storeCounts(t, home); c["actions"] != 4 || c["token_usage"] != 2 {
		t.Errorf("after the writer's start: %v", c)
	}
	if s := logs.String(); !strings.Contains(s, "retention applied") || !strings.Contains(s, "deleted=9") {
		t.Errorf("writer log:\n%s", s)
	}
	if !rollupsMatchRebuild(t, home) {
		t.Error("after retention the rollups differ from a rebuild")
	}
}

// lockedBuffer is a bytes.Buffer a logger writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// costTotal is `observerctl cost`'s total in dollars.
func costTotal(t *testing.T, home string) float64 {
	t.Helper()
	code, out, errOut := runCtl(t, "--home", home, "cost", "--json")
	if code != ExitOK {
		t.Fatalf("cost: exit %d %s", code, errOut)
	}
	var rep struct {
		Total struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Total.CostUSD
}
