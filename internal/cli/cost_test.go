package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// costHome makes an observer home whose store holds three turns: a Claude Code one two days ago,
// a Codex one an hour ago, and a proxy turn of the Claude session (counted under its project).
func costHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	use := func(id, client, session, project, model string, at time.Time, in, out int64, usd float64) event.Event {
		e := event.New(event.KindTokenUsage, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = id, client, session, project, at
		e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: in, Output: out}, Model: model, MessageID: id,
			CostUSD: usd, Reliability: event.ReliabilityApproximate}
		return e
	}
	p := event.New(event.KindAPITurn, "test")
	p.ID, p.Client, p.SessionID, p.Time = "p1", "claude-code", "c1", now.Add(-30*time.Minute)
	p.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 5, Output: 5}, Provider: "anthropic", Model: "claude-sonnet-4-5",
		MessageID: "m-proxy", Status: 200, CostUSD: 0.25, Reliability: event.ReliabilityAccurate}
	evs := []event.Event{
		use("u1", "claude-code", "c1", "/work/a", "claude-sonnet-4-5", now.Add(-48*time.Hour), 100, 10, 1.5),
		use("u2", "codex", "x1", "/work/b", "gpt-5", now.Add(-time.Hour), 200, 20, 0.5),
		p,
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestCost_FiltersAndJSON(t *testing.T) {
	home := costHome(t)
	run := func(args ...string) query.CostReport {
		t.Helper()
		code, out, errOut := runCtl(t, append([]string{"--home", home, "cost", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("cost %v: exit %d: %s", args, code, errOut)
		}
		var rep query.CostReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("cost %v: %v\n%s", args, err, out)
		}
		return rep
	}
	for _, c := range []struct {
		args  []string
		usd   float64
		turns int64
		rel   string
	}{
		{nil, 2.25, 3, query.Approximate},
		{[]string{"--since", "1d"}, 0.75, 2, query.Approximate},
		{[]string{"--until", "1d"}, 1.5, 1, query.Approximate},
		{[]string{"--client", "codex"}, 0.5, 1, query.Approximate},
		{[]string{"--project", "/work/a"}, 1.75, 2, query.Approximate}, // the proxy turn takes its session's project
		{[]string{"--session", "c1", "--since", "2h"}, 0.25, 1, query.Accurate},
		{[]string{"--client", "nobody"}, 0, 0, ""},
	} {
		rep := run(c.args...)
		if d := rep.Total.CostUSD - c.usd; d > 1e-9 || d < -1e-9 || rep.Total.Turns != c.turns || rep.Total.Reliability != c.rel {
			t.Errorf("cost %v: total $%.4f in %d turns (%q), want $%.4f in %d (%q)", c.args, rep.Total.CostUSD,
				rep.Total.Turns, rep.Total.Reliability, c.usd, c.turns, c.rel)
		}
	}
	rep := run("--group-by", "client,hour")
	if len(rep.Rows) != 3 || rep.Rows[0].Client != "claude-code" || rep.Rows[0].Hour == "" {
		t.Errorf("by client and hour: %+v", rep.Rows)
	}
	code, out, _ := runCtl(t, "--home", home, "cost", "--group-by", "model")
	if code != 0 || !strings.Contains(out, "claude-sonnet-4-5") || !strings.Contains(out, "1.7500") || !strings.Contains(out, "TOTAL") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

func TestCost_Errors(t *testing.T) {
	home := costHome(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "cost"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "cost", "--since", "yesterday"}, ExitUsage, "--since"},
		{[]string{"--home", home, "cost", "--until", "-3h"}, ExitUsage, "--until"},
		{[]string{"--home", home, "cost", "--since", "1d", "--until", "2d"}, ExitUsage, "must be after"},
		{[]string{"--home", home, "cost", "--group-by", "week"}, ExitUsage, "cannot group by"},
		{[]string{"--home", home, "cost", "--bogus"}, ExitUsage, "bogus"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// Grouped by session, rows carry the session's title (JSON and table); grouped by day they come in
// time order; the table shows each row's reliability and marks dollars that leave turns unpriced.
func TestCost_TitlesOrderAndMarks(t *testing.T) {
	home := costHome(t)
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := event.New(event.KindAction, "test")
	p.ID, p.Client, p.SessionID, p.Project, p.Time = "a1", "claude-code", "c1", "/work/a", time.Now().Add(-48*time.Hour)
	p.Action = &event.Action{Type: event.ActionUserPrompt, Target: "make the   login page\nfaster"}
	u := event.New(event.KindTokenUsage, "test")
	u.ID, u.Client, u.SessionID, u.Time = "u9", "codex", "x1", time.Now().Add(-72*time.Hour)
	u.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10}, Model: "mystery-9", MessageID: "u9", Reliability: event.ReliabilityUnknown}
	if _, err := st.WriteBatch(context.Background(), []event.Event{p, u}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errOut := runCtl(t, "--home", home, "cost", "--json", "--group-by", "session")
	var rep query.CostReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("cost: exit %d %s%s", code, out, errOut)
	}
	titles := map[string]string{}
	for _, r := range rep.Rows {
		titles[r.SessionID] = r.Title
	}
	if titles["c1"] != "make the login page faster" || titles["x1"] != "" {
		t.Errorf("titles %v", titles)
	}
	code, out, _ = runCtl(t, "--home", home, "cost", "--group-by", "session")
	if code != 0 || !strings.Contains(out, "make the login page faster") || !strings.Contains(out, "RELIABILITY") ||
		!strings.Contains(out, "* 1 turn(s) of models without a price") {
		t.Errorf("table:\n%s", out)
	}
	// --session takes a unique prefix.
	code, out, errOut = runCtl(t, "--home", home, "cost", "--json", "--session", "c")
	rep = query.CostReport{}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Total.Turns != 2 {
		t.Errorf("--session c: exit %d %s%s", code, out, errOut)
	}
	if code, _, errOut := runCtl(t, "--home", home, "cost", "--session", "zz"); code != ExitFailure || !strings.Contains(errOut, "zz") {
		t.Errorf("--session zz: exit %d %s", code, errOut)
	}
	code, out, _ = runCtl(t, "--home", home, "cost", "--json", "--group-by", "day")
	rep = query.CostReport{}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Rows) < 3 {
		t.Fatalf("by day: %s", out)
	}
	for i := 1; i < len(rep.Rows); i++ {
		if rep.Rows[i-1].Day >= rep.Rows[i].Day {
			t.Errorf("days out of order: %s then %s", rep.Rows[i-1].Day, rep.Rows[i].Day)
		}
	}
}

// Every command takes --since all; a window without turns says where the stored ones are.
func TestWindows_AllAndEmptyHint(t *testing.T) {
	home := costHome(t)
	for _, args := range [][]string{{"cost", "--since", "all"}, {"export", "--since", "all"}, {"score", "--since", "all"},
		{"discover", "--since", "all"}, {"patterns", "--since", "all"}, {"cost", "--until", "all"}} {
		if code, _, errOut := runCtl(t, append([]string{"--home", home}, args...)...); code != 0 {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
	code, out, _ := runCtl(t, "--home", home, "cost", "--until", "2001-01-01")
	if code != 0 || !strings.Contains(out, "no model turns before 2001-01-01") || !strings.Contains(out, "the store has 3 turns from ") ||
		!strings.Contains(out, "--since all") {
		t.Errorf("empty window: exit %d %q", code, out)
	}
	code, out, _ = runCtl(t, "--home", home, "score", "--since", "1m")
	if code != 0 || !strings.Contains(out, "no analysed session") || !strings.Contains(out, "--since all") {
		t.Errorf("score, empty window: exit %d %q", code, out)
	}
	if code, out, _ := runCtl(t, "--home", home, "cost", "--since", "yesterday"); code != ExitUsage {
		t.Errorf("a bad --since: exit %d %s", code, out)
	}
}
