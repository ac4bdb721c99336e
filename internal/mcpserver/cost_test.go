package mcpserver

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// scopedCost must count exactly what query.Cost counts (see scopedCost): for every session,
// and for every project over all time and over a recent window, on the corpus and on a store that
// exercises each accounting rule.
func TestScopedCost_EqualsCostRun(t *testing.T) {
	t.Run("Rules", func(t *testing.T) { compareCosts(t, rulesStore(t)) })
	t.Run("Corpus", func(t *testing.T) { compareCosts(t, corpusStore(t)) })
}

// rulesStore holds, in two projects: a Claude message the proxy and the transcript both saw
// (the proxy's figures count), one only the transcript saw, a Codex row without message id near a
// proxy turn of its session (the proxy's) and one long after it (its own), spread over days.
func rulesStore(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Second)
	tok := func(in, out int64) event.Tokens {
		return event.Tokens{Input: in, Output: out, CacheRead: 10, CacheCreation: 3}
	}
	turn := func(id, client, sess, proj, msg string, at time.Time, tk event.Tokens, usd float64) event.Event {
		ev := event.New(event.KindAPITurn, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, client, sess, proj, at
		ev.APITurn = &event.APITurn{Tokens: tk, Provider: "anthropic", Model: "m-" + client, MessageID: msg, Status: 200, CostUSD: usd}
		return ev
	}
	usage := func(id, client, sess, proj, msg string, at time.Time, tk event.Tokens, usd float64) event.Event {
		ev := event.New(event.KindTokenUsage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, client, sess, proj, at
		ev.TokenUsage = &event.TokenUsage{Tokens: tk, Model: "m-" + client, MessageID: msg, CostUSD: usd}
		return ev
	}
	day := 24 * time.Hour
	evs := []event.Event{
		turn("p1", "claude-code", "c1", "/p", "msg_1", t0, tok(100, 50), 1.0),
		usage("u1", "claude-code", "c1", "/p", "msg_1", t0, tok(90, 1), 0.9),
		usage("u2", "claude-code", "c1", "/p", "msg_2", t0.Add(time.Minute), tok(7, 3), 0.1),
		turn("p2", "codex", "x1", "/q", "resp_1", t0.Add(time.Hour), tok(200, 20), 2.0),
		usage("u3", "codex", "x1", "/q", "", t0.Add(time.Hour+2*time.Second), tok(200, 20), 2.0),
		usage("u4", "codex", "x1", "/q", "", t0.Add(3*time.Hour), tok(5, 5), 0.5),
		// Later sessions, inside a recent window.
		usage("u5", "claude-code", "c2", "/p", "msg_3", t0.Add(8*day), tok(1, 2), 0.25),
		turn("p3", "claude-code", "c2", "/p", "msg_4", t0.Add(9*day), tok(3, 4), 0.75),
		usage("u6", "claude-code", "c2", "/p", "msg_4", t0.Add(9*day), tok(3, 1), 0.5),
		usage("u7", "codex", "x2", "/q", "", t0.Add(9*day), tok(9, 9), 0.125),
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

func compareCosts(t *testing.T, path string) {
	db := roDB(t, path)
	h := &dbh{DB: db}
	ctx := context.Background()
	newest := time.UnixMilli(queryInt(t, db, `SELECT max(ts) FROM (SELECT ts FROM token_usage UNION ALL SELECT ts FROM api_turns)`))
	all, err := query.Cost(ctx, db, query.CostQuery{GroupBy: []string{"session"}})
	if err != nil {
		t.Fatal(err)
	}
	sessions := 0
	for _, r := range all.Rows {
		var x session
		if err := db.QueryRow(`SELECT session_id FROM sessions WHERE session_id = ?`, r.SessionID).Scan(&x.ID); err == sql.ErrNoRows {
			continue
		}
		got, err := sessionCost(ctx, h, x)
		if err != nil {
			t.Fatal(err)
		}
		sameCost(t, "session "+x.ID, got, r)
		sessions++
	}
	for _, since := range []time.Time{{}, newest.Add(-3 * 24 * time.Hour)} {
		rep, err := query.Cost(ctx, db, query.CostQuery{GroupBy: []string{"project"}, Filter: query.Filter{Since: since}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rows {
			sinceMS := int64(0)
			if !since.IsZero() {
				sinceMS = since.UnixMilli()
			}
			got, err := projectCost(ctx, h, r.Project, sinceMS)
			if err != nil {
				t.Fatal(err)
			}
			sameCost(t, "project "+r.Project+" since "+since.String(), got, r)
		}
	}
	if sessions == 0 {
		t.Fatal("no session with turns to compare")
	}
	t.Logf("%d sessions and the projects compared", sessions)
}

func sameCost(t *testing.T, what string, got costFig, want query.CostRow) {
	t.Helper()
	if got.Turns != want.Turns || got.In != want.InputTokens || got.Out != want.OutputTokens || got.CacheRead != want.CacheReadTokens ||
		got.CacheWrite != want.CacheCreationTokens || got.Proxy != want.ProxyTurns || math.Abs(got.USD-want.CostUSD) > 0.00005 {
		t.Errorf("%s: %+v, query.Cost says %+v", what, got, want)
	}
}
