package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/observerhq/observer/pkg/event"
)

// The writer's connection keeps the statements it compiled: a batch stored after others of the
// same kinds compiles its statements again only where SQLite does so on its own (they were all
// compiled per transaction, which cost more than storing a few of the proxy's turns). SQLite
// consults a connection's authorizer only while it compiles a statement, so the authorizer's
// calls count the compilations.
func TestWriteBatch_ReusesTheStatementsOfTheBatchBefore(t *testing.T) {
	ctx := context.Background()
	st := newWriter(t)
	at := time.Now().Add(-time.Hour)
	batch := func(tag string) []event.Event {
		var evs []event.Event
		for i := range 4 {
			turn := event.New(event.KindAPITurn, "proxy")
			turn.ID, turn.Time, turn.Client, turn.SessionID = event.ID(tag, fmt.Sprint(i)), at.Add(time.Duration(i)*time.Second), "claude-code", "px"
			turn.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 1200, Output: 300}, Provider: "anthropic", Endpoint: "/v1/messages",
				Model: "claude-sonnet-4-5", MessageID: "msg_" + tag + fmt.Sprint(i), RequestID: "req_" + tag + fmt.Sprint(i), Status: 200, CostUSD: 0.02}
			act := event.New(event.KindAction, "watch")
			act.ID, act.Time, act.Client, act.SessionID, act.Project = event.ID(tag, "a"+fmt.Sprint(i)), turn.Time, "claude-code", "s1", testProject
			act.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "main.go", MessageID: "m" + tag}
			use := event.New(event.KindTokenUsage, "watch")
			use.ID, use.Time, use.Client, use.SessionID, use.Project = event.ID(tag, "u"+fmt.Sprint(i)), turn.Time, "claude-code", "s1", testProject
			use.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: 20}, MessageID: "m" + tag + fmt.Sprint(i), Model: "claude-sonnet-4-5"}
			evs = append(evs, turn, act, use)
		}
		return evs
	}
	// The authorizer is set once: setting one expires the statements a connection holds.
	compiled := 0
	authorize := func(on bool) {
		conn, err := st.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.Raw(func(dc any) error {
			var f func(int, string, string, string) int
			if on {
				f = func(int, string, string, string) int {
					compiled++
					return sqlite3.SQLITE_OK
				}
			}
			dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(f)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	authorize(true)
	defer authorize(false)
	write := func(tag string) int {
		compiled = 0
		if _, err := st.WriteBatch(ctx, batch(tag), nil); err != nil {
			t.Fatal(err)
		}
		return compiled
	}
	first := write("one")
	if first == 0 {
		t.Fatal("the authorizer saw no compilation in the first batch")
	}
	// The second batch falls in the same hours: some of its rollup statements are not the
	// first's. The third runs the second's statements. A few of them SQLite compiles again on its
	// own at each run (4 of the batch's 30 here, each of which asks the authorizer about every
	// column it reads); without the cache, each batch compiled every one (993 authorizations).
	second := write("two")
	if again := write("three"); again*4 > first {
		t.Errorf("the third batch compiled again much of what the batches before had compiled: %d authorizations (the first: %d, the second: %d)", again, first, second)
	}
	var turns int
	if err := st.DB.QueryRowContext(ctx, `SELECT count(*) FROM api_turns`).Scan(&turns); err != nil || turns != 12 {
		t.Errorf("%d turns stored (%v), want 12", turns, err)
	}
}
