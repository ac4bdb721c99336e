package cost

import (
	"context"
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
	want := Row{InputTokens: 100 + 7 + 200 + 5, OutputTokens: 50 + 3 + 20 + 5, CacheReadTokens: 40, CostUSD: 1.0 + 0.1 + 2.0 + 0.5, Turns: 4, ProxyTurns: 2}
	for _, g := range [][]string{nil, {"session"}, {"day"}, {"model"}, {"project"}, {"client"}, {"client", "model"}} {
		rep, err := Run(ctx, st.DB, Query{GroupBy: g})
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Total
		got.CostUSD = float64(int(got.CostUSD*1000+0.5)) / 1000
		if got != want {
			t.Errorf("group by %v: total %+v, want %+v", g, got, want)
		}
	}
	rep, _ := Run(ctx, st.DB, Query{GroupBy: []string{"client"}})
	if len(rep.Rows) != 2 || rep.Rows[0].Client != "codex" || rep.Rows[0].Turns != 2 {
		t.Errorf("rows by client: %+v", rep.Rows)
	}
	// A proxy turn has no project: it counts under its session's.
	rep, _ = Run(ctx, st.DB, Query{GroupBy: []string{"project"}})
	for _, r := range rep.Rows {
		if r.Project == "" || r.Project == "/p" && r.Turns != 2 || r.Project == "/q" && r.Turns != 2 {
			t.Errorf("rows by project: %+v", rep.Rows)
		}
	}
	rep, _ = Run(ctx, st.DB, Query{Since: t0.Add(30 * time.Minute)})
	if rep.Total.Turns != 2 {
		t.Errorf("since: %+v", rep.Total)
	}
	if _, err := Run(ctx, st.DB, Query{GroupBy: []string{"color"}}); err == nil {
		t.Error("grouping by an unknown key was accepted")
	}
}
