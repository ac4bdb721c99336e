package query

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/corpusstore"
	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

type storePublisher struct{ st *store.Store }

func (p storePublisher) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	_, err := p.st.WriteBatch(ctx, evs, nil)
	return 0, err
}

// corpusStore fills a store from the corpus (corpusstore.Dir) laid out as the clients keep it, read by the
// real adapters; it skips when the corpus is absent.
func corpusStore(t *testing.T) *store.Store {
	t.Helper()
	if why := corpusstore.Available(); why != "" {
		t.Skip(why)
	}
	shared := filepath.Dir(corpusstore.Dir())
	dir := t.TempDir()
	home := filepath.Join(dir, "clienthome")
	if out, err := exec.Command("python3", filepath.Join(shared, "scripts", "gen_history.py"), "small", home).CombinedOutput(); err != nil {
		t.Fatalf("gen_history.py small: %v\n%s", err, out)
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(dir, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cur, err := ingest.OpenCursors(filepath.Join(dir, "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	sc := &ingest.Scanner{
		Adapters:  []transcript.Adapter{claudecode.New([]string{filepath.Join(home, ".claude", "projects")}), codex.New(filepath.Join(home, ".codex"))},
		Cursors:   cur,
		Publisher: storePublisher{st},
	}
	if _, err := sc.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// refTurn is one model turn as store.TurnsSQL gives it.
type refTurn struct {
	ts              int64
	in, out, cr, cc int64
	usd             float64
}

// referenceBlocks applies the block rule turn by turn, as ccusage does (but with a block's end
// exclusive): the straightforward statement Blocks' hourly computation must agree with.
func referenceBlocks(turns []refTurn) []Block {
	var out []Block
	for _, t := range turns {
		if len(out) == 0 || t.ts >= out[len(out)-1].End.UnixMilli() || t.ts-out[len(out)-1].LastTurn.UnixMilli() >= lengthMs {
			start := t.ts - t.ts%store.HourMs
			out = append(out, Block{Start: time.UnixMilli(start).UTC(), End: time.UnixMilli(start + lengthMs).UTC(), FirstTurn: time.UnixMilli(t.ts).UTC()})
		}
		b := &out[len(out)-1]
		b.LastTurn = time.UnixMilli(t.ts).UTC()
		b.Turns++
		b.Tokens.Input += t.in
		b.Tokens.Output += t.out
		b.Tokens.CacheRead += t.cr
		b.Tokens.CacheCreation += t.cc
		b.Tokens.Total += t.in + t.out + t.cr + t.cc
		b.CostUSD += t.usd
	}
	return out
}

// TestRun_Corpus: each client's blocks are the reference's over that client's turns alone.
func TestRun_Corpus(t *testing.T) {
	st := corpusStore(t)
	ctx := context.Background()
	rows, err := st.DB.QueryContext(ctx, `SELECT client, ts, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd
		FROM (`+fmt.Sprintf(store.TurnsSQL, "1", "1")+") ORDER BY client, ts", window)
	if err != nil {
		t.Fatal(err)
	}
	turns := map[string][]refTurn{}
	var n int
	for rows.Next() {
		var r refTurn
		var client string
		if err := rows.Scan(&client, &r.ts, &r.in, &r.out, &r.cr, &r.cc, &r.usd); err != nil {
			t.Fatal(err)
		}
		turns[client] = append(turns[client], r)
		n++
	}
	rows.Close()
	var want []Block
	for _, c := range slices.Sorted(maps.Keys(turns)) {
		for _, b := range referenceBlocks(turns[c]) {
			b.Client = c
			want = append(want, b)
		}
	}
	if len(turns) < 2 || len(want) < 3 {
		t.Fatalf("the corpus gave %d turns of %d clients in %d blocks; expected more", n, len(turns), len(want))
	}
	rep := runBoth(t, st, BlocksQuery{Now: time.Now()})
	var got []Block
	for _, b := range rep.Blocks {
		if !b.Idle {
			got = append(got, b)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d blocks, the reference has %d", len(got), len(want))
	}
	var usd float64
	for i, w := range want {
		g := got[i]
		if g.Client != w.Client || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || !g.FirstTurn.Equal(w.FirstTurn) || !g.LastTurn.Equal(w.LastTurn) ||
			g.Turns != w.Turns || g.Tokens != w.Tokens || !nearUSD(g.CostUSD, w.CostUSD) {
			t.Errorf("block %d:\n got %s %v..%v turns %d (%v..%v) %+v $%.6f\nwant %s %v..%v turns %d (%v..%v) %+v $%.6f", i,
				g.Client, g.Start, g.End, g.Turns, g.FirstTurn, g.LastTurn, g.Tokens, g.CostUSD,
				w.Client, w.Start, w.End, w.Turns, w.FirstTurn, w.LastTurn, w.Tokens, w.CostUSD)
		}
		usd += g.CostUSD
	}
	total, err := Cost(ctx, st.DB, CostQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !nearUSD(usd, total.Total.CostUSD) {
		t.Errorf("blocks add up to $%.6f, cost to $%.6f", usd, total.Total.CostUSD)
	}
	// One client's report is its chain of the whole report.
	for c := range turns {
		one := runBoth(t, st, BlocksQuery{Now: time.Now(), Client: c})
		var mine []Block
		for _, b := range rep.Blocks {
			if b.Client == c {
				mine = append(mine, b)
			}
		}
		if one.Client != c || !reflect.DeepEqual(one.Blocks, mine) {
			t.Errorf("client %s alone: %d blocks, %d in the whole report", c, len(one.Blocks), len(mine))
		}
	}
	t.Logf("corpus: %d turns of %d clients in %d blocks, $%.4f", n, len(turns), len(got), usd)
}
