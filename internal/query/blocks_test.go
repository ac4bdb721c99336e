package query

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func proxyTurn(id, session, model, msg string, at time.Time, tok event.Tokens, usd float64) event.Event {
	ev := event.New(event.KindAPITurn, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Time = id, "claude-code", session, at
	ev.APITurn = &event.APITurn{Tokens: tok, Provider: "anthropic", Model: model, MessageID: msg, Status: 200, CostUSD: usd}
	return ev
}

func blockUsage(id, client, session, model, msg string, at time.Time, tok event.Tokens, usd float64) event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, client, session, "/p", at
	ev.TokenUsage = &event.TokenUsage{Tokens: tok, Model: model, MessageID: msg, CostUSD: usd}
	return ev
}

func newBlockStore(tb testing.TB, evs []event.Event) *store.Store {
	tb.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(tb.TempDir(), "observer.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		tb.Fatal(err)
	}
	return st
}

// runBoth runs q from the rollups and from the raw rows, and fails unless both agree.
func runBoth(t *testing.T, st *store.Store, q BlocksQuery) *BlocksReport {
	t.Helper()
	rolled, err := Blocks(context.Background(), st.DB, q)
	if err != nil {
		t.Fatal(err)
	}
	useRollups = false
	raw, err := Blocks(context.Background(), st.DB, q)
	useRollups = true
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rolled, raw) {
		t.Fatalf("rollups and raw rows disagree:\n%+v\n%+v", rolled.Blocks, raw.Blocks)
	}
	return rolled
}

func nearUSD(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) }

// TestRun_BlockEdges lays turns on a block's edges: a turn 4h59m after the block's first (same
// block), one exactly at the block's end (next block), one exactly 5 h after the previous turn
// (next block), turns on both sides of midnight (one block), an idle night, and a turn seen by
// both the proxy and the transcript (counted once, at the proxy's figures).
func TestRun_BlockEdges(t *testing.T) {
	d := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return d.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	tok := func(in, out int64) event.Tokens {
		return event.Tokens{Input: in, Output: out, CacheRead: 10, CacheCreation: 5}
	}
	evs := []event.Event{
		proxyTurn("a", "s1", "claude-sonnet-4-5", "m-a", at(10, 0), tok(100, 10), 1.0),
		blockUsage("a-transcript", "claude-code", "s1", "claude-sonnet-4-5", "m-a", at(10, 0).Add(time.Second), tok(90, 1), 0.9),
		blockUsage("b", "claude-code", "s1", "claude-opus-4-5", "m-b", at(14, 59), tok(200, 20), 2.0),
		blockUsage("c", "claude-code", "s1", "claude-haiku-4-5", "m-c", at(15, 0), tok(300, 30), 3.0), // exactly at the end
		blockUsage("d", "claude-code", "s1", "claude-haiku-4-5", "m-d", at(20, 0), tok(400, 40), 4.0), // exactly 5 h after c
		blockUsage("e", "claude-code", "s2", "claude-sonnet-4-5", "m-e", at(23, 50), tok(500, 50), 5.0),
		blockUsage("f", "claude-code", "s2", "claude-sonnet-4-5", "m-f", at(24, 40), tok(600, 60), 6.0), // after midnight
		blockUsage("g", "claude-code", "s3", "claude-sonnet-4-5", "m-g", at(32, 30), tok(700, 70), 7.0),
		blockUsage("h", "claude-code", "s3", "claude-sonnet-4-5", "m-h", at(33, 0), tok(800, 80), 8.0),
	}
	st := newBlockStore(t, evs)
	now := at(33, 30)
	rep := runBoth(t, st, BlocksQuery{Now: now})
	type want struct {
		start, end   time.Time
		first, last  time.Time
		idle, active bool
		turns        int64
		usd          float64
		models       []string
	}
	wants := []want{
		{at(10, 0), at(15, 0), at(10, 0), at(14, 59), false, false, 2, 3.0, []string{"claude-opus-4-5", "claude-sonnet-4-5"}},
		{at(15, 0), at(20, 0), at(15, 0), at(15, 0), false, false, 1, 3.0, []string{"claude-haiku-4-5"}},
		{at(20, 0), at(25, 0), at(20, 0), at(24, 40), false, false, 3, 15.0, []string{"claude-haiku-4-5", "claude-sonnet-4-5"}},
		{at(25, 0), at(32, 0), time.Time{}, time.Time{}, true, false, 0, 0, []string{}},
		{at(32, 0), at(37, 0), at(32, 30), at(33, 0), false, true, 2, 15.0, []string{"claude-sonnet-4-5"}},
	}
	if len(rep.Blocks) != len(wants) {
		t.Fatalf("%d blocks, want %d: %+v", len(rep.Blocks), len(wants), rep.Blocks)
	}
	for i, w := range wants {
		b := rep.Blocks[i]
		if b.Client != "claude-code" || !b.Start.Equal(w.start) || !b.End.Equal(w.end) || !b.FirstTurn.Equal(w.first) || !b.LastTurn.Equal(w.last) ||
			b.Idle != w.idle || b.Active != w.active || b.Turns != w.turns || !nearUSD(b.CostUSD, w.usd) || !reflect.DeepEqual(b.Models, w.models) {
			t.Errorf("block %d: %+v\nwant %+v", i, b, w)
		}
	}
	// Tokens: the proxy's figures for turn a, never added to its transcript copy's.
	b0 := rep.Blocks[0].Tokens
	if b0 != (Tokens{Input: 300, Output: 30, CacheRead: 20, CacheCreation: 10, Total: 360}) {
		t.Errorf("block 0 tokens %+v", b0)
	}
	// Burn rate over the first to the last turn: 299 minutes in block 0; none for one turn.
	if br := rep.Blocks[0].Burn; br == nil || !nearUSD(br.TokensPerMinute, 360.0/299) || !nearUSD(br.CostPerHourUSD, 3.0/299*60) {
		t.Errorf("block 0 burn %+v", br)
	}
	if rep.Blocks[1].Burn != nil || rep.Blocks[1].Projected != nil {
		t.Errorf("a block of one turn has a burn rate: %+v", rep.Blocks[1])
	}
	// The active block: 30 minutes of turns, 3.5 hours left.
	act := rep.Active("")
	if act == nil || act != &rep.Blocks[4] {
		t.Fatalf("active block %+v", act)
	}
	tokens := int64(1500 + 150 + 20 + 10)
	if act.Remaining != 210 || act.Burn == nil || !nearUSD(act.Burn.CostPerHourUSD, 30) || act.Projected == nil ||
		!nearUSD(act.Projected.CostUSD, 15+30*3.5) || act.Projected.TotalTokens != tokens+int64(float64(tokens)/30*210) {
		t.Errorf("active block: remaining %d, burn %+v, projection %+v", act.Remaining, act.Burn, act.Projected)
	}
	// The blocks add up to what `observerctl cost` counts.
	total, err := Cost(context.Background(), st.DB, CostQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var turns int64
	var usd float64
	for _, b := range rep.Blocks {
		turns, usd = turns+b.Turns, usd+b.CostUSD
	}
	if turns != total.Total.Turns || !nearUSD(usd, total.Total.CostUSD) {
		t.Errorf("blocks hold %d turns, $%.4f; cost counts %d, $%.4f", turns, usd, total.Total.Turns, total.Total.CostUSD)
	}

	t.Run("ranges select whole blocks", func(t *testing.T) {
		r := runBoth(t, st, BlocksQuery{Since: at(21, 0), Until: at(32, 1), Now: now})
		if len(r.Blocks) != 3 || !reflect.DeepEqual(r.Blocks[0], rep.Blocks[2]) || !reflect.DeepEqual(r.Blocks[2], rep.Blocks[4]) {
			t.Errorf("since 21:00 until 08:01: %+v", r.Blocks)
		}
		r = runBoth(t, st, BlocksQuery{Since: at(15, 30), Until: at(20, 0), Now: now})
		if len(r.Blocks) != 1 || !reflect.DeepEqual(r.Blocks[0], rep.Blocks[1]) {
			t.Errorf("since 15:30 until 20:00: %+v", r.Blocks)
		}
		r = runBoth(t, st, BlocksQuery{Since: at(37, 0), Now: now})
		if len(r.Blocks) != 0 {
			t.Errorf("after the last block: %+v", r.Blocks)
		}
	})
	t.Run("no active block after the last block's end", func(t *testing.T) {
		b, err := ActiveBlock(context.Background(), st.DB, "claude-code", at(37, 0))
		if err != nil || b != nil {
			t.Errorf("at the last block's end: %+v, %v", b, err)
		}
		b, err = ActiveBlock(context.Background(), st.DB, "claude-code", at(36, 59))
		if err != nil || b == nil || !b.Start.Equal(at(32, 0)) || b.Remaining != 1 {
			t.Errorf("a minute before its end: %+v, %v", b, err)
		}
	})
}

// TestRun_ChainDoesNotDependOnTheRange: with turns every 2 hours for 3 days, no gap ends a block
// early, so each block's start depends on the first turn; a range starting anywhere must give the
// blocks the whole history gives. Codex turns every 3 hours from another first turn make a chain
// of their own, with other starts.
func TestRun_ChainDoesNotDependOnTheRange(t *testing.T) {
	d := time.Date(2026, 11, 2, 0, 30, 0, 0, time.UTC)
	var evs []event.Event
	for i := range 36 {
		evs = append(evs, blockUsage(fmt.Sprint("u", i), "claude-code", "s", "claude-sonnet-4-5", fmt.Sprint("m", i),
			d.Add(time.Duration(i)*2*time.Hour), event.Tokens{Input: 10, Output: 1}, 0.01))
	}
	for i := range 22 {
		evs = append(evs, blockUsage(fmt.Sprint("x", i), "codex", "x", "gpt-5.2-codex", "",
			d.Add(3*time.Hour+time.Duration(i)*3*time.Hour), event.Tokens{Input: 20, Output: 2}, 0.02))
	}
	// Two days before, an early turn with a long gap after it.
	evs = append(evs, blockUsage("early", "claude-code", "s0", "claude-sonnet-4-5", "early", d.Add(-47*time.Hour), event.Tokens{Input: 1}, 0.01))
	st := newBlockStore(t, evs)
	now := d.Add(100 * time.Hour)
	all := runBoth(t, st, BlocksQuery{Now: now})
	if len(all.Blocks) < 10 || !all.Blocks[1].Idle || !all.Blocks[2].Start.Equal(d.Add(-30*time.Minute)) {
		t.Fatalf("all blocks: %+v", all.Blocks)
	}
	var codexStart time.Time
	for i, b := range all.Blocks {
		if b.Client == "codex" && codexStart.IsZero() {
			codexStart = b.Start
		}
		if b.Idle {
			continue
		}
		if i > 0 && all.Blocks[i-1].Client == b.Client && !all.Blocks[i-1].End.Equal(b.Start) {
			t.Errorf("block %d does not follow the previous one: %v after %v", i, b.Start, all.Blocks[i-1].End)
		}
		for _, since := range []time.Time{b.Start, b.Start.Add(time.Minute), b.End.Add(-time.Minute)} {
			r := runBoth(t, st, BlocksQuery{Since: since, Now: now})
			i := slices.IndexFunc(r.Blocks, func(o Block) bool { return o.Client == b.Client })
			if i < 0 || !reflect.DeepEqual(r.Blocks[i], b) {
				t.Errorf("since %v: first %s block of %+v, want %+v", since, b.Client, r.Blocks, b)
			}
			if one := runBoth(t, st, BlocksQuery{Since: since, Now: now, Client: b.Client}); len(one.Blocks) == 0 || !reflect.DeepEqual(one.Blocks[0], b) {
				t.Errorf("since %v, %s only: %+v, want %+v", since, b.Client, one.Blocks, b)
			}
		}
	}
	if !codexStart.Equal(d.Add(3*time.Hour - 30*time.Minute)) {
		t.Errorf("codex's chain starts at %v, want its first turn's hour", codexStart)
	}
}

// TestRun_PerClient interleaves Claude Code and Codex turns: each client has its own chain of
// blocks, its own anchors and its own active block. A Codex turn 2 hours into a Claude Code block
// neither extends nor splits it, and starts a Codex block of its own. Drawn from all turns
// together, the chain would be 10:00-15:00 (with the Codex turn) and 15:00-20:00, and at 16:55
// one active block.
func TestRun_PerClient(t *testing.T) {
	d := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return d.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	tok := event.Tokens{Input: 100, Output: 10}
	claude := func(id string, t time.Time, usd float64) event.Event {
		return blockUsage(id, "claude-code", "s1", "claude-sonnet-4-5", "m-"+id, t, tok, usd)
	}
	codex := func(id string, t time.Time, usd float64) event.Event {
		return blockUsage(id, "codex", "x1", "gpt-5.2-codex", "", t, tok, usd)
	}
	evs := []event.Event{
		claude("a", at(10, 5), 1), claude("b", at(12, 0), 1), claude("c", at(14, 30), 1), // 10:00-15:00
		codex("x", at(12, 10), 10),                            // 2 h into it: codex 12:00-17:00
		claude("d", at(15, 10), 2), claude("e", at(16, 0), 2), // claude 15:00-20:00
		codex("y", at(16, 50), 10), // still codex's 12:00 block
		codex("z", at(17, 0), 20),  // codex's block ended at 17:00: the next one
	}
	st := newBlockStore(t, evs)
	now := at(16, 55)
	type want struct {
		client       string
		start, first time.Time
		last         time.Time
		turns        int64
		usd          float64
		active       bool
	}
	check := func(t *testing.T, name string, bs []Block, wants []want) {
		t.Helper()
		if len(bs) != len(wants) {
			t.Fatalf("%s: %d blocks, want %d: %+v", name, len(bs), len(wants), bs)
		}
		for i, w := range wants {
			b := bs[i]
			if b.Client != w.client || !b.Start.Equal(w.start) || !b.End.Equal(w.start.Add(Length)) || !b.FirstTurn.Equal(w.first) ||
				!b.LastTurn.Equal(w.last) || b.Turns != w.turns || !nearUSD(b.CostUSD, w.usd) || b.Active != w.active || b.Idle {
				t.Errorf("%s: block %d: %+v\nwant %+v", name, i, b, w)
			}
		}
	}
	claudes := []want{
		{"claude-code", at(10, 0), at(10, 5), at(14, 30), 3, 3, false},
		{"claude-code", at(15, 0), at(15, 10), at(16, 0), 2, 4, true},
	}
	codexes := []want{
		{"codex", at(12, 0), at(12, 10), at(16, 50), 2, 20, true},
		{"codex", at(17, 0), at(17, 0), at(17, 0), 1, 20, false},
	}
	all := runBoth(t, st, BlocksQuery{Now: now})
	check(t, "all", all.Blocks, append(slices.Clone(claudes), codexes...))
	if b := all.Blocks[1]; b.Remaining != 3*60+5 || b.Burn == nil || !nearUSD(b.Burn.CostPerHourUSD, 4.0/50*60) {
		t.Errorf("claude-code's active block: %+v", b)
	}
	if b := all.Blocks[2]; b.Remaining != 5 || b.Burn == nil || !nearUSD(b.Burn.CostPerHourUSD, 20.0/280*60) {
		t.Errorf("codex's active block: %+v", b)
	}
	one := runBoth(t, st, BlocksQuery{Now: now, Client: "codex"})
	check(t, "codex", one.Blocks, codexes)
	if one.Client != "codex" || !reflect.DeepEqual(one.Blocks, all.Blocks[2:]) {
		t.Errorf("codex alone differs from its chain in the whole report: %+v", one)
	}
	one = runBoth(t, st, BlocksQuery{Now: now, Client: "claude-code"})
	check(t, "claude-code", one.Blocks, claudes)
	if r := runBoth(t, st, BlocksQuery{Now: now, Client: "cursor"}); len(r.Blocks) != 0 {
		t.Errorf("a client without turns: %+v", r.Blocks)
	}
	// From 16:55 on: each client's block of that time, each anchored in its own chain.
	since := runBoth(t, st, BlocksQuery{Since: now, Now: now})
	check(t, "since 16:55", since.Blocks, []want{claudes[1], codexes[0], codexes[1]})
	for _, c := range []struct {
		client string
		want   *Block
	}{{"claude-code", &all.Blocks[1]}, {"codex", &all.Blocks[2]}, {"cursor", nil}} {
		b, err := ActiveBlock(context.Background(), st.DB, c.client, now)
		if err != nil || (b == nil) != (c.want == nil) || (b != nil && !reflect.DeepEqual(*b, *c.want)) {
			t.Errorf("ActiveBlock(%s): %+v, %v; want %+v", c.client, b, err, c.want)
		}
		if got := all.Active(c.client); (got == nil) != (c.want == nil) {
			t.Errorf("BlocksReport.Active(%s): %+v", c.client, got)
		}
	}
	clients, err := BlockClients(context.Background(), st.DB)
	if err != nil || !reflect.DeepEqual(clients, []string{"claude-code", "codex"}) {
		t.Errorf("Clients: %v, %v", clients, err)
	}
	useRollups = false
	clients, err = BlockClients(context.Background(), st.DB)
	useRollups = true
	if err != nil || !reflect.DeepEqual(clients, []string{"claude-code", "codex"}) {
		t.Errorf("Clients from raw rows: %v, %v", clients, err)
	}
}
