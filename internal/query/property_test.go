package query

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// randomStore writes a hub-like store: proxy turns, transcript messages (some the proxy also saw,
// some it did not, some without a message id), OTLP turns, over four days, for three clients,
// projects and members (member "" is the hub's own rows), and returns the times it used.
func randomStore(t *testing.T, rng *rand.Rand) (*store.Store, []time.Time) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clients := []string{"claude-code", "codex", "gemini-cli"}
	projects := []string{"/p1", "/p2", "/srv/p3"}
	members := []string{"", "alice", "bob"}
	models := []string{"claude-sonnet-4-5", "gpt-5.2-codex", "gemini-2.5-pro"}
	t0 := time.Date(2026, 11, 2, 9, 17, 0, 0, time.UTC)
	var evs []event.Event
	var times []time.Time
	for i := range 600 {
		at := t0.Add(time.Duration(rng.Int64N(int64(96 * time.Hour))))
		times = append(times, at)
		c := rng.IntN(len(clients))
		session := fmt.Sprintf("s%d-%d", c, rng.IntN(6))
		member := members[rng.IntN(len(members))]
		cc1 := rng.Int64N(50)
		tok := event.Tokens{Input: rng.Int64N(5000), Output: 100 + rng.Int64N(900), CacheRead: rng.Int64N(20000),
			CacheCreation: cc1 + rng.Int64N(300), CacheCreation1h: cc1, Reasoning: rng.Int64N(100)}
		usd := float64(rng.Int64N(100000)) / 1e5
		msg := fmt.Sprintf("msg_%d", i)
		project := projects[rng.IntN(len(projects))]
		var batch []event.Event
		switch rng.IntN(5) {
		case 0: // the proxy only
			batch = append(batch, turn(fmt.Sprint("p", i), clients[c], session, models[c], msg, at, tok, usd))
		case 1: // both: counted once, from the proxy
			batch = append(batch, turn(fmt.Sprint("p", i), clients[c], session, models[c], msg, at, tok, usd),
				usage(fmt.Sprint("u", i), clients[c], session, project, models[c], msg, at.Add(time.Second), tok, usd*0.9))
		case 2: // the transcript only
			batch = append(batch, usage(fmt.Sprint("u", i), clients[c], session, project, models[c], msg, at, tok, usd))
		case 3: // a transcript message without an id
			batch = append(batch, usage(fmt.Sprint("u", i), clients[c], session, project, models[c], "", at, tok, usd))
		case 4: // an OTLP turn
			ev := turn(fmt.Sprint("o", i), clients[c], session, models[c], "", at, tok, usd)
			ev.APITurn.Origin = "otlp"
			batch = append(batch, ev)
		}
		for j := range batch {
			batch[j].Member = member
		}
		evs = append(evs, batch...)
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return st, times
}

// randomFilter picks each field of a Filter at random, often empty; times are turn times (not
// whole hours, so the raw edges around the rollups are read too) or a whole hour.
func randomFilter(rng *rand.Rand, times []time.Time, values map[string][]string) Filter {
	var f Filter
	pick := func(k string) string {
		vs := values[k]
		if len(vs) == 0 || rng.IntN(3) > 0 {
			return ""
		}
		return vs[rng.IntN(len(vs))]
	}
	if rng.IntN(2) == 0 {
		f.Since = times[rng.IntN(len(times))]
		if rng.IntN(2) == 0 {
			f.Since = f.Since.Truncate(time.Hour)
		}
	}
	if rng.IntN(2) == 0 {
		f.Until = times[rng.IntN(len(times))].Add(time.Duration(rng.IntN(48)) * time.Hour)
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			f.Until = f.Since.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		}
	}
	f.Project, f.Client, f.SessionID, f.Member = pick("project"), pick("client"), pick("session"), pick("member")
	return f
}

// distinct reads the values of a column of TurnsSQL's turns.
func distinct(t *testing.T, db *store.Store, col string) []string {
	t.Helper()
	rows, err := db.DB.Query("SELECT DISTINCT "+col+" FROM ("+fmt.Sprintf(store.MemberTurnsSQL, "1", "1")+") ORDER BY 1", window)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// sums are a report's figures in every bucket.
type sums struct {
	in, out, cr, cc, cc1, rs, turns, proxy, unrel, unpriced int64
	usd                                                     float64
}

func sumOf(r CostRow) sums {
	return sums{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens, r.CacheCreation1hTokens,
		r.ReasoningTokens, r.Turns, r.ProxyTurns, r.UnreliableTurns, r.UnpricedTurns, r.CostUSD}
}

func (a sums) add(b sums) sums {
	return sums{a.in + b.in, a.out + b.out, a.cr + b.cr, a.cc + b.cc, a.cc1 + b.cc1, a.rs + b.rs, a.turns + b.turns,
		a.proxy + b.proxy, a.unrel + b.unrel, a.unpriced + b.unpriced, a.usd + b.usd}
}

func (a sums) equal(b sums) bool {
	x, y := a, b
	x.usd, y.usd = 0, 0
	return x == y && math.Abs(a.usd-b.usd) <= 1e-9*max(1, math.Abs(a.usd))
}

// checkGroupsAddUp: for random filters and groupings, the groups' sums are the report's total
// and the ungrouped report's, in dollars and every token bucket; and the rollups give what the
// raw turns give.
func checkGroupsAddUp(t *testing.T, st *store.Store, times []time.Time, rng *rand.Rand, rounds int) {
	ctx := context.Background()
	values := map[string][]string{}
	for k, col := range map[string]string{"project": "project", "client": "client", "session": "session_id", "member": "member"} {
		values[k] = distinct(t, st, col)
	}
	nonEmpty := 0
	for range rounds {
		f := randomFilter(rng, times, values)
		keys := slices.Clone(CostKeys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		groups := keys[:1+rng.IntN(3)]
		whole, err := Cost(ctx, st.DB, CostQuery{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Cost(ctx, st.DB, CostQuery{GroupBy: groups, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var got sums
		for _, r := range rep.Rows {
			got = got.add(sumOf(r))
		}
		name := fmt.Sprintf("by %s, %+v", strings.Join(groups, ","), f)
		if !got.equal(sumOf(rep.Total)) {
			t.Errorf("%s: the rows add up to %+v, the total is %+v", name, got, sumOf(rep.Total))
		}
		if !got.equal(sumOf(whole.Total)) {
			t.Errorf("%s: the rows add up to %+v, the ungrouped total is %+v", name, got, sumOf(whole.Total))
		}
		useRollups = false
		raw, err := Cost(ctx, st.DB, CostQuery{GroupBy: groups, Filter: f})
		useRollups = true
		if err != nil {
			t.Fatal(err)
		}
		if !sumOf(raw.Total).equal(sumOf(rep.Total)) || len(raw.Rows) != len(rep.Rows) {
			t.Errorf("%s: from the raw turns %d rows, %+v; from the rollups %d rows, %+v", name, len(raw.Rows), sumOf(raw.Total), len(rep.Rows), sumOf(rep.Total))
		}
		if whole.Total.Turns > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < rounds/4 {
		t.Fatalf("only %d of %d random filters selected any turn: the test checks too little", nonEmpty, rounds)
	}
}

// TestCost_GroupsAddUpToTheTotal is the property of the read model's totals on a random hub-like
// store: however a report is filtered and grouped (member included), its groups add up to its
// total and to the ungrouped total.
func TestCost_GroupsAddUpToTheTotal(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 30))
	st, times := randomStore(t, rng)
	checkGroupsAddUp(t, st, times, rng, 150)
}

// TestCost_GroupsAddUpOnTheCorpus is the same property on the store built from the real
// transcripts of the corpus.
func TestCost_GroupsAddUpOnTheCorpus(t *testing.T) {
	st := corpusStore(t)
	var times []time.Time
	rows, err := st.DB.Query("SELECT ts FROM ("+fmt.Sprintf(store.TurnsSQL, "1", "1")+")", window)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ms int64
		rows.Scan(&ms)
		times = append(times, time.UnixMilli(ms))
	}
	rows.Close()
	if len(times) == 0 {
		t.Fatal("the corpus store holds no turns")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	checkGroupsAddUp(t, st, times, rand.New(rand.NewPCG(seed, 31)), 60)
}
