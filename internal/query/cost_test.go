package query

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func turn(id, client, session, model, msg string, at time.Time, tok event.Tokens, usd float64) event.Event {
	ev := event.New(event.KindAPITurn, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Time = id, client, session, at
	ev.APITurn = &event.APITurn{Tokens: tok, Provider: "anthropic", Model: model, MessageID: msg, Status: 200, CostUSD: usd}
	return ev
}

func usage(id, client, session, project, model, msg string, at time.Time, tok event.Tokens, usd float64) event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, client, session, project, at
	ev.TokenUsage = &event.TokenUsage{Tokens: tok, Model: model, MessageID: msg, CostUSD: usd}
	return ev
}

func TestRun_EachTurnOnceWhateverTheGrouping(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	tok := func(in, out int64) event.Tokens { return event.Tokens{Input: in, Output: out, CacheRead: 10} }
	evs := []event.Event{
		// Claude: msg_1 seen by both paths (the proxy's figures win), msg_2 by the transcript only.
		turn("p1", "claude-code", "c1", "claude-sonnet-4-5", "msg_1", t0, tok(100, 50), 1.0),
		usage("u1", "claude-code", "c1", "/p", "claude-sonnet-4-5", "msg_1", t0, tok(90, 1), 0.9),
		usage("u2", "claude-code", "c1", "/p", "claude-sonnet-4-5", "msg_2", t0.Add(time.Minute), tok(7, 3), 0.1),
		// Codex logs no message id: a transcript row near a proxy turn of its session is that turn.
		turn("p2", "codex", "x1", "gpt-5.2-codex", "resp_1", t0.Add(time.Hour), tok(200, 20), 2.0),
		usage("u3", "codex", "x1", "/q", "gpt-5.2-codex", "", t0.Add(time.Hour+2*time.Second), tok(200, 20), 2.0),
		// ... and one long after, which the proxy did not see.
		usage("u4", "codex", "x1", "/q", "gpt-5.2-codex", "", t0.Add(3*time.Hour), tok(5, 5), 0.5),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	want := CostRow{InputTokens: 100 + 7 + 200 + 5, OutputTokens: 50 + 3 + 20 + 5, CacheReadTokens: 40, CostUSD: 1.0 + 0.1 + 2.0 + 0.5, Turns: 4, ProxyTurns: 2, Reliability: Approximate}
	for _, g := range [][]string{nil, {"session"}, {"day"}, {"model"}, {"project"}, {"client"}, {"client", "model"}} {
		rep, err := Cost(ctx, st.DB, CostQuery{GroupBy: g})
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Total
		got.CostUSD = float64(int(got.CostUSD*1000+0.5)) / 1000
		if got != want {
			t.Errorf("group by %v: total %+v, want %+v", g, got, want)
		}
	}
	rep, _ := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"client"}})
	if len(rep.Rows) != 2 || rep.Rows[0].Client != "codex" || rep.Rows[0].Turns != 2 {
		t.Errorf("rows by client: %+v", rep.Rows)
	}
	// A proxy turn has no project: it counts under its session's.
	rep, _ = Cost(ctx, st.DB, CostQuery{GroupBy: []string{"project"}})
	for _, r := range rep.Rows {
		if r.Project == "" || r.Project == "/p" && r.Turns != 2 || r.Project == "/q" && r.Turns != 2 {
			t.Errorf("rows by project: %+v", rep.Rows)
		}
	}
	rep, _ = Cost(ctx, st.DB, CostQuery{Filter: Filter{Since: t0.Add(30 * time.Minute)}})
	if rep.Total.Turns != 2 {
		t.Errorf("since: %+v", rep.Total)
	}
	if _, err := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"color"}}); err == nil {
		t.Error("grouping by an unknown key was accepted")
	}
}

// TestRun_Filters checks each filter alone and together against turns counted by hand, and that
// the totals of a filtered report are the same under every grouping, hour included.
func TestRun_Filters(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	tok := event.Tokens{Input: 10, Output: 1}
	evs := []event.Event{
		// c1 (/p): a proxy turn without a project (it takes /p from its session, which the
		// transcript row registers), and a transcript row.
		turn("p1", "claude-code", "c1", "m1", "msg_1", t0, tok, 1),
		usage("u1", "claude-code", "c1", "/p", "m1", "msg_2", t0.Add(90*time.Minute), tok, 2),
		// c2 (/q), same client, an hour later and the day after.
		usage("u2", "claude-code", "c2", "/q", "m1", "msg_3", t0.Add(3*time.Hour), tok, 4),
		usage("u3", "claude-code", "c2", "/q", "m2", "msg_4", t0.Add(24*time.Hour), tok, 8),
		// x1 (/p) of another client.
		usage("u4", "codex", "x1", "/p", "m3", "", t0.Add(2*time.Hour), tok, 16),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		q    CostQuery
		usd  float64 // the sum of the selected turns' dollars: each turn's is a distinct power of 2
	}{
		{"all", CostQuery{}, 31},
		{"since", CostQuery{Filter: Filter{Since: t0.Add(time.Hour)}}, 2 + 4 + 8 + 16},
		{"until", CostQuery{Filter: Filter{Until: t0.Add(2 * time.Hour)}}, 1 + 2},
		{"until is exclusive", CostQuery{Filter: Filter{Until: t0.Add(3 * time.Hour)}}, 1 + 2 + 16},
		{"since and until", CostQuery{Filter: Filter{Since: t0.Add(time.Hour), Until: t0.Add(4 * time.Hour)}}, 2 + 4 + 16},
		{"project takes the proxy turn's from its session", CostQuery{Filter: Filter{Project: "/p"}}, 1 + 2 + 16},
		{"project", CostQuery{Filter: Filter{Project: "/q"}}, 4 + 8},
		{"client", CostQuery{Filter: Filter{Client: "codex"}}, 16},
		{"session", CostQuery{Filter: Filter{SessionID: "c1"}}, 1 + 2},
		{"session and client", CostQuery{Filter: Filter{SessionID: "c1", Client: "codex"}}, 0},
		{"project and client", CostQuery{Filter: Filter{Project: "/p", Client: "claude-code"}}, 1 + 2},
		{"everything", CostQuery{Filter: Filter{Since: t0, Until: t0.Add(2 * time.Hour), Project: "/p", Client: "claude-code", SessionID: "c1"}}, 1 + 2},
		{"unknown project", CostQuery{Filter: Filter{Project: "/nowhere"}}, 0},
	}
	for _, c := range cases {
		var first *CostRow
		for _, g := range [][]string{nil, {"session"}, {"day"}, {"hour"}, {"model"}, {"project"}, {"client"}, {"hour", "model", "project"}} {
			q := c.q
			q.GroupBy = g
			rep, err := Cost(ctx, st.DB, q)
			if err != nil {
				t.Fatalf("%s by %v: %v", c.name, g, err)
			}
			if rep.Total.CostUSD != c.usd {
				t.Errorf("%s by %v: $%v, want $%v (rows %+v)", c.name, g, rep.Total.CostUSD, c.usd, rep.Rows)
			}
			if first == nil {
				first = &rep.Total
			} else if rep.Total != *first {
				t.Errorf("%s: total by %v %+v differs from the ungrouped %+v", c.name, g, rep.Total, *first)
			}
			if c.q.Project != "" {
				for _, r := range rep.Rows {
					if r.Project != "" && r.Project != c.q.Project {
						t.Errorf("%s by %v: a row of project %q", c.name, g, r.Project)
					}
				}
			}
		}
	}
	// Hours are local, labelled like days with the hour appended.
	rep, err := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"hour"}, Filter: Filter{Client: "claude-code"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, ev := range []struct {
		at  time.Time
		usd float64
	}{{t0, 1}, {t0.Add(90 * time.Minute), 2}, {t0.Add(3 * time.Hour), 4}, {t0.Add(24 * time.Hour), 8}} {
		want[ev.at.Local().Format("2006-01-02T15")] += ev.usd
	}
	if len(rep.Rows) != len(want) {
		t.Fatalf("rows by hour: %+v, want %v", rep.Rows, want)
	}
	for _, r := range rep.Rows {
		if want[r.Hour] != r.CostUSD || r.Day != "" {
			t.Errorf("hour %q: $%v, want $%v", r.Hour, r.CostUSD, want[r.Hour])
		}
	}
}

// TestRun_RollupsEqualRawRows checks that a report summed from the writer's hourly rollup plus raw
// rows at the window's partial hours equals the one read from raw rows alone, for windows whose
// edges fall inside hours, on hours, and around a proxy/transcript join across an hour's edge.
func TestRun_RollupsEqualRawRows(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	var evs []event.Event
	for i := 0; i < 300; i++ {
		at := t0.Add(time.Duration(i*97) * time.Second)
		client, sess, msg := "claude-code", fmt.Sprintf("c%d", i%3), fmt.Sprintf("msg_%d", i)
		if i%4 == 0 {
			client, sess, msg = "codex", "x1", ""
		}
		tok := event.Tokens{Input: int64(i), Output: int64(2 * i), CacheRead: 7}
		evs = append(evs, usage(fmt.Sprintf("u%d", i), client, sess, fmt.Sprintf("/p%d", i%2), "claude-sonnet-4-5", msg, at, tok, float64(i)/100))
		if i%3 == 0 { // the proxy saw it, a little earlier (Codex: no message id, joined by time)
			pm := msg
			if pm == "" {
				pm = fmt.Sprintf("resp_%d", i)
			}
			evs = append(evs, turn(fmt.Sprintf("p%d", i), client, sess, "claude-sonnet-4-5", pm, at.Add(-20*time.Second), tok, float64(i)/90))
		}
	}
	// And four days of turns 45 minutes apart, so that windows hold whole local days (usage_daily).
	for i := 0; i < 130; i++ {
		at := t0.Add(time.Duration(i*45) * time.Minute)
		tok := event.Tokens{Input: int64(i), Output: 3, CacheCreation: 11}
		evs = append(evs, usage(fmt.Sprintf("d%d", i), "claude-code", fmt.Sprintf("d%d", i%5), fmt.Sprintf("/p%d", i%3),
			[]string{"claude-sonnet-4-5", "claude-haiku-4-5"}[i%2], fmt.Sprintf("dmsg_%d", i), at, tok, float64(i)/70))
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	windows := [][2]time.Time{
		{}, {t0.Add(17 * time.Minute), time.Time{}}, {t0.Add(time.Hour), t0.Add(4 * time.Hour)},
		{t0.Add(59*time.Minute + 50*time.Second), t0.Add(3*time.Hour + 10*time.Second)},
		{t0.Add(61 * time.Minute), t0.Add(62 * time.Minute)}, {time.Time{}, t0.Add(5*time.Hour + 30*time.Minute)},
		{t0.Add(5*time.Hour + 13*time.Minute), t0.Add(70*time.Hour + 1*time.Minute)}, {t0.Add(14 * time.Hour), time.Time{}},
		{t0.Add(-10 * time.Hour), t0.Add(62 * time.Hour)},
	}
	// Each zone in its own process: SQLite's localtime (the raw rows' days and hours) follows the
	// process's TZ, and time.Local is read from it at start. The daily rollups follow the zone as
	// the writer's start makes them (KeepZone).
	if zone := os.Getenv("OBSERVER_TEST_ZONE"); zone != "" {
		if err := st.KeepZone(ctx); err != nil {
			t.Fatal(err)
		}
		compareWindows(t, st, windows, zone)
		return
	}
	compareWindows(t, st, windows, time.Local.String())
	for _, zone := range []string{"America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"} {
		if _, err := time.LoadLocation(zone); err != nil {
			t.Logf("zone %s not on this machine: %v", zone, err)
			continue
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestRun_RollupsEqualRawRows$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TZ="+zone, "OBSERVER_TEST_ZONE="+zone)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("in %s: %v\n%s", zone, err, out)
		}
	}
}

// compareWindows checks that Run with rollups equals Run on raw rows for each window, grouping
// and filter.
func compareWindows(t *testing.T, st *store.Store, windows [][2]time.Time, zone string) {
	ctx := context.Background()
	for _, w := range windows {
		for _, g := range [][]string{nil, {"session"}, {"hour"}, {"day", "model"}, {"project"}, {"client"}, {"day", "hour"},
			{"model", "client"}, {"session", "client", "model"}, {"day", "model", "project", "client"}} {
			for _, f := range []CostQuery{{}, {Filter: Filter{Client: "codex"}}, {Filter: Filter{Project: "/p1"}}, {Filter: Filter{SessionID: "c1"}}} {
				f.GroupBy, f.Since, f.Until = g, w[0], w[1]
				withRollup, err := Cost(ctx, st.DB, f)
				if err != nil {
					t.Fatal(err)
				}
				useRollups = false
				raw, err := Cost(ctx, st.DB, f)
				useRollups = true
				if err != nil {
					t.Fatal(err)
				}
				if len(raw.Rows) == 0 && w[0].IsZero() && w[1].IsZero() && f.Client == "" && f.Project == "" && f.SessionID == "" {
					t.Fatalf("no rows at all for %+v", f)
				}
				if !sameReport(withRollup, raw) {
					t.Errorf("%s %+v: with the rollups %d rows, total %+v\nraw rows only %d rows, total %+v\n%s", zone, f,
						len(withRollup.Rows), withRollup.Total, len(raw.Rows), raw.Total, firstDiff(withRollup, raw))
				}
			}
		}
	}
}

// firstDiff shows the first row that differs.
func firstDiff(a, b *CostReport) string {
	for i := range min(len(a.Rows), len(b.Rows)) {
		if a.Rows[i] != b.Rows[i] {
			return fmt.Sprintf("row %d: %+v\n    vs %+v", i, a.Rows[i], b.Rows[i])
		}
	}
	return ""
}

func sameReport(a, b *CostReport) bool {
	if len(a.Rows) != len(b.Rows) {
		return false
	}
	round := func(r CostRow) CostRow { r.CostUSD = math.Round(r.CostUSD * 1e9); return r }
	for i := range a.Rows {
		if round(a.Rows[i]) != round(b.Rows[i]) {
			return false
		}
	}
	return round(a.Total) == round(b.Total)
}
