package hermes

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// usageOf is the token_usage event of id in evs, or nil.
func usageOf(evs []event.Event, id string) *event.TokenUsage {
	for _, e := range ofKind(evs, event.KindTokenUsage) {
		if e.ID == id {
			return e.TokenUsage
		}
	}
	return nil
}

// The gateway writes a session's main-loop usage as absolute totals into sessions and no
// session_model_usage row, while the title generation (an auxiliary task) adds a row that is not in
// the totals: the totals are still reported, under the session's usage id, as they grow, and
// whether the auxiliary row came before the first pass or after it.
func TestPoll_GatewayTotalsBesideAuxRows(t *testing.T) {
	path := fixture(t)
	totalsID := event.ID(Client, "usage", s3)
	evs, state, _ := poll(t, path, nil)
	if u := usageOf(evs, totalsID); u == nil || u.Tokens != (event.Tokens{Input: 5000, Output: 700, CacheRead: 2000, Reasoning: 200}) ||
		u.Model != "gpt-5" || u.CostUSD != 0.0123 {
		t.Fatalf("gateway totals %+v: want the session's totals beside its title-generation row, at Hermes's actual cost", u)
	}
	if u := usageOf(evs, event.ID(Client, "usage", s1)); u != nil {
		t.Errorf("CLI session: %+v, want no remainder (its main-loop row holds its totals; the title row is not in them)", u)
	}

	// The next gateway turn sets the totals; a new session gets its title row after the first pass.
	const s4 = "20260211_120000_77aa00"
	db := newDB(t, path)
	execT(t, db, `INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, actual_cost_usd)
		VALUES (?, 'discord', 'gpt-5', 1770811200.0, 1500, 90, 0.003)`, s4)
	evs, state, _ = poll(t, path, state)
	if u := usageOf(evs, event.ID(Client, "usage", s4)); u == nil || u.Tokens != (event.Tokens{Input: 1500, Output: 90}) {
		t.Fatalf("new gateway session %+v: want its totals", u)
	}
	execT(t, db, `UPDATE sessions SET input_tokens = 9000, output_tokens = 1100, cache_read_tokens = 4000, actual_cost_usd = 0.021 WHERE id = ?`, s3)
	execT(t, db, `UPDATE sessions SET input_tokens = 2600, output_tokens = 170, actual_cost_usd = 0.005 WHERE id = ?`, s4)
	execT(t, db, `INSERT INTO session_model_usage (session_id, model, billing_provider, task, api_call_count, input_tokens, output_tokens,
		estimated_cost_usd, first_seen, last_seen) VALUES (?, 'gpt-5-mini', 'openai', 'title_generation', 1, 150, 10, 0.00006, 1770811205.0, 1770811205.0)`, s4)
	evs, _, _ = poll(t, path, state)
	if u := usageOf(evs, totalsID); u == nil || u.Tokens != (event.Tokens{Input: 9000, Output: 1100, CacheRead: 4000, Reasoning: 200}) || u.CostUSD != 0.021 {
		t.Errorf("grown gateway totals %+v: want the new totals under the same id", u)
	}
	if u := usageOf(evs, event.ID(Client, "usage", s4)); u == nil || u.Tokens != (event.Tokens{Input: 2600, Output: 170}) {
		t.Errorf("totals of a session whose title row came later: %+v, want them reported, grown", u)
	}
	if u := usageOf(evs, event.ID(Client, "usage", s4, "gpt-5-mini", "openai", "", "", "title_generation")); u == nil || u.Tokens != (event.Tokens{Input: 150, Output: 10}) {
		t.Errorf("title row %+v", u)
	}
}

// A CLI session begun before Hermes kept session_model_usage has rows only for what came after
// the upgrade: the usage before it (the totals less the main-loop rows, a voice turn's row among
// them) is reported under the session's usage id; an auxiliary row is subtracted from nothing.
func TestPoll_RemainderOfPreUpgradeSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path, schemaSQL)
	const id = "20251120_093000_5e5e5e"
	execT(t, db, `INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
		reasoning_tokens, estimated_cost_usd) VALUES (?, 'cli', 'claude-sonnet-4-5', 1763631000.0, 10000, 800, 30000, 2000, 0, 0.09)`, id)
	for _, r := range []struct {
		model, task                    string
		in, out, cacheRead, cacheWrite int
		est                            float64
	}{
		{"claude-sonnet-4-5", "", 4000, 300, 20000, 500, 0.03},
		{"gpt-4o-mini-tts", "voice_chat", 1000, 100, 0, 0, 0.001},
		{"gemini-2.5-flash", "compression", 7000, 400, 0, 0, 0.002},
	} {
		execT(t, db, `INSERT INTO session_model_usage (session_id, model, task, input_tokens, output_tokens, cache_read_tokens,
			cache_write_tokens, estimated_cost_usd, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1763900000.0, 1763900000.0)`,
			id, r.model, r.task, r.in, r.out, r.cacheRead, r.cacheWrite, r.est)
	}
	evs, _, _ := poll(t, path, nil)
	if n := len(ofKind(evs, event.KindTokenUsage)); n != 4 {
		t.Errorf("%d usage events, want the three rows and the remainder", n)
	}
	u := usageOf(evs, event.ID(Client, "usage", id))
	if u == nil || u.Tokens != (event.Tokens{Input: 5000, Output: 400, CacheRead: 10000, CacheCreation: 1500}) ||
		u.Model != "claude-sonnet-4-5" || u.CostUSD <= 0 {
		t.Fatalf("remainder %+v: want the totals less the main-loop and voice rows (not the compression's), priced", u)
	}
}

// Figures the rows exceed (Hermes's totals lag a row, or the rows hold what the totals lost) leave
// no negative remainder: each figure stops at zero.
func TestRemainder(t *testing.T) {
	got := remainder(figures{in: 100, out: 10, cacheRead: 2, cacheWrite: 8, reasoning: 1, est: 1, actual: 2},
		[]usageRow{{task: "", fig: figures{in: 40, out: 20, cacheRead: 4, cacheWrite: 3, reasoning: 2, est: 2, actual: 0.5}},
			{task: "vision", fig: figures{in: 1000, out: 1000, actual: 5}}})
	if want := (figures{in: 60, cacheWrite: 5, actual: 1.5}); got != want {
		t.Errorf("remainder %+v, want %+v", got, want)
	}
}

// The State keeps the sessions one by one only for the most recently active ones; the others are
// settled: a pass passes over them unless a sum of their fingerprints changes (a title Hermes
// set later, totals the gateway wrote, a session that appeared with an old start), and then
// reports the sessions of that bucket again under the same ids.
func TestPoll_StateBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path, schemaSQL)
	const n = maxRecent + 150
	idOf := func(i int) string { return fmt.Sprintf("20260101_%06d_%06x", i, i) }
	base := 1767225600.0 // 2026-01-01
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		at := base + float64(i)*600
		if _, err := tx.Exec(`INSERT INTO sessions (id, source, model, started_at, last_activity_at, input_tokens, output_tokens, title)
			VALUES (?, 'telegram', 'gpt-5', ?, ?, ?, 50, ?)`, idOf(i), at, at+60, 1000+i, fmt.Sprintf("chat %d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)`,
			idOf(i), fmt.Sprintf("question %d", i), at+1); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	first, state, _ := poll(t, path, nil)
	if got := len(ofKind(first, event.KindTokenUsage)); got != n {
		t.Fatalf("%d usage events, want %d", got, n)
	}
	var st dbState
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Sessions) != maxRecent || st.Settled != base+float64(n-maxRecent-1)*600 || len(st.Sums) != buckets || len(state) > 24<<10 {
		t.Fatalf("state of %d bytes: %d sessions kept, settled %v, %d sums; want the %d most recent, the start of the newest settled one",
			len(state), len(st.Sessions), st.Settled, len(st.Sums), maxRecent)
	}
	if _, ok := st.Sessions[idOf(0)]; ok {
		t.Errorf("the oldest session is kept one by one")
	}
	if again, _, _ := poll(t, path, state); len(again) != 0 {
		t.Errorf("a pass from the state emitted %d events", len(again))
	}
	ids := map[string]bool{}
	for _, e := range first {
		ids[e.ID] = true
	}

	// A settled session changes without any activity Hermes notes: the gateway sets its totals, and
	// its title changes.
	old := idOf(3)
	execT(t, db, `UPDATE sessions SET input_tokens = 99000, output_tokens = 4000, title = 'renamed chat' WHERE id = ?`, old)
	evs, state2, _ := poll(t, path, state)
	if u := usageOf(evs, event.ID(Client, "usage", old)); u == nil || u.Tokens != (event.Tokens{Input: 99000, Output: 4000}) {
		t.Errorf("settled session's new totals %+v: want them reported", u)
	}
	renamed := false
	sessions := map[string]bool{}
	for _, e := range evs {
		sessions[e.SessionID] = true
		if e.Session != nil && e.SessionID == old && e.Session.Title == "renamed chat" {
			renamed = true
		} else if !ids[e.ID] {
			t.Errorf("re-reported %s %s under a new id %s", e.Kind, e.SessionID, e.ID)
		}
	}
	if !renamed || len(sessions) > (n-maxRecent)/4 {
		t.Errorf("after a settled session changed: %d sessions reported, renamed %v; want its bucket's sessions (a few) again, the new title",
			len(sessions), renamed)
	}
	if again, _, _ := poll(t, path, state2); len(again) != 0 {
		t.Errorf("a pass after the change emitted %d events", len(again))
	}

	// A settled session gets a message (it rejoins the recent ones), and a session appears with a
	// start older than the settled ones.
	execT(t, db, `INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'back again', ?)`, idOf(5), base+1e6)
	const late = "20251231_230000_abcdef"
	execT(t, db, `INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) VALUES (?, 'cli', 'gpt-5', ?, 10, 5)`, late, base-3600)
	evs, state3, _ := poll(t, path, state2)
	var started, prompt bool
	for _, e := range evs {
		started = started || (e.SessionID == late && e.Session != nil && e.Session.State == event.SessionStarted)
		prompt = prompt || (e.SessionID == idOf(5) && e.Action != nil && e.Action.Target == "back again")
	}
	if !started || !prompt || usageOf(evs, event.ID(Client, "usage", late)) == nil {
		t.Errorf("events %d: want the late session's start and usage, the settled session's new prompt", len(evs))
	}
	st = dbState{}
	if err := json.Unmarshal(state3, &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Sessions[idOf(5)]; !ok || len(st.Sessions) != maxRecent {
		t.Errorf("the session with a new message is not among the %d recent ones kept (%d)", maxRecent, len(st.Sessions))
	}
	if again, _, _ := poll(t, path, state3); len(again) != 0 {
		t.Errorf("a pass after them emitted %d events: %v", len(again), strings.Join(kindsOf(again), ","))
	}
}

func kindsOf(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind)+":"+e.SessionID)
	}
	return out
}
