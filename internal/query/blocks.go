// Blocks splits model turns into 5-hour billing blocks, the windows in which a Claude
// subscription (and a ChatGPT plan's Codex) counts usage, by the rule ccusage's `blocks` report
// uses: a block starts at its first turn's time floored to the UTC hour and lasts five hours; the
// first turn at or after a block's end starts the next block. Time between two blocks is an idle
// gap.
//
// Clients: each client has its own limit, so each has its own chain of blocks, drawn from its
// turns only: a Codex turn never starts, extends or splits a Claude Code block. A report lists
// the chains one after the other, by client name, each oldest first; BlocksQuery.Client picks one.
// ccusage's `blocks` report reads Claude Code's transcripts only: its blocks are the claude-code
// chain's.
//
// Boundaries: a block is the half-open interval [start, start+5h). A turn exactly at a block's
// end starts a new block; ccusage compares with ">" and keeps such a turn in the old block. A
// gap of 5 hours or more between two turns always starts a new block (the earlier turn's block
// has ended by then), so the gap rule needs no test of its own.
//
// Because every block starts and ends on a whole hour, which block a turn falls in depends only
// on which UTC hours hold turns of its client. Blocks finds those hours in the writer's usage_hourly
// rollup (one primary-key seek per hour, and one per client of the hour), draws the blocks, then
// sums the rollup's hours of the blocks it reports (usage_hourly is store.TurnsSQL by hour and
// client: each turn counts once, from the proxy when it saw it); without the rollup it reads the
// raw turns. Only a block's first and last turn times come from raw rows, one hour each. The
// status line's active block costs about a millisecond this way.
//
// Where a chain starts: a block's start depends on the blocks before it. The first turn after a
// pause of 5 hours always starts a block, so Blocks starts each client's chain at its latest such
// turn before the range, looking a day back, or Lookback when the day holds no such pause for
// some client: the blocks are then the ones the whole history gives, whatever the range. Only
// turns every few hours for the whole week before the range leave a chain starting at the week's
// first turn, where the true one may differ.
//
// Ranges: Since and Until select the blocks that overlap [Since, Until); each block is reported
// whole, with all its turns, so its figures never depend on the range.
//
// Burn rate is over a block's active span, from its first turn to its last (none for a block of
// one turn, or of turns in the same millisecond); the active block's projection extends it to
// the block's end. Tokens are the four billing buckets: input (net of cache), output (reasoning
// included), cache read and cache write.

package query

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// Length is a block's length.
const Length = 5 * time.Hour

// Lookback is how far before a range Run reads turns to find where the chain of blocks starts.
const Lookback = 7 * 24 * time.Hour

const lengthMs = int64(Length / time.Millisecond)

// Block is one billing block or idle gap of one client. The JSON is what `observerctl blocks
// --json` prints.
type Block struct {
	Client    string    `json:"client"` // the client whose turns the block holds (claude-code, codex, ...)
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`                  // Start + 5h; for an idle gap, the next block's start
	FirstTurn time.Time `json:"first_turn,omitzero"`  // the block's first turn
	LastTurn  time.Time `json:"last_turn,omitzero"`   // its actual last turn
	Idle      bool      `json:"idle,omitempty"`       // a gap between blocks, without turns
	Active    bool      `json:"active"`               // now is inside the block
	Turns     int64     `json:"turns"`                // model turns, each once
	Unpriced  int64     `json:"unpriced_turns"`       // of Turns, of a model without a price ($0)
	Models    []string  `json:"models"`               // sorted
	CostUSD   float64   `json:"cost_usd"`             // recorded dollars of the turns
	Tokens    Tokens    `json:"tokens"`               // the four billing buckets
	Burn      *BurnRate `json:"burn_rate,omitempty"`  // over FirstTurn..LastTurn
	Remaining int64     `json:"remaining_minutes"`    // active block: minutes to its end
	Projected *Forecast `json:"projection,omitempty"` // active block: at its end, at the current burn rate
}

// Tokens are the four billing buckets and their sum.
type Tokens struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_tokens"`
	CacheCreation int64 `json:"cache_creation_tokens"`
	Total         int64 `json:"total_tokens"`
}

// BurnRate is how fast a block spends.
type BurnRate struct {
	TokensPerMinute float64 `json:"tokens_per_minute"`
	CostPerHourUSD  float64 `json:"cost_per_hour_usd"`
}

// Forecast is what the active block will have spent at its end.
type Forecast struct {
	TotalTokens int64   `json:"total_tokens"`
	CostUSD     float64 `json:"cost_usd"`
}

// BlocksQuery selects the blocks to report.
type BlocksQuery struct {
	Since  time.Time // zero: from the first turn
	Until  time.Time // exclusive; zero: no end
	Now    time.Time // zero: time.Now(); decides which block is active
	Client string    // only this client's blocks (its full name: claude-code); "": every client's
}

// BlocksReport is the answer.
type BlocksReport struct {
	Since  string  `json:"since,omitempty"`
	Until  string  `json:"until,omitempty"`
	Client string  `json:"client,omitempty"` // the client asked for, when one was
	Blocks []Block `json:"blocks"`           // by client name, then oldest first, idle gaps between a client's blocks
}

// Active returns client's active block ("": the first client's with one), or nil.
func (r *BlocksReport) Active(client string) *Block {
	for i := range r.Blocks {
		if b := &r.Blocks[i]; b.Active && (client == "" || b.Client == client) {
			return b
		}
	}
	return nil
}

// hour is the sums of one UTC hour's turns of one client.
type hour struct {
	start           int64 // ms
	turns, unpriced int64
	in, out, cr, cc int64
	usd             float64
	models          map[string]bool
}

// Blocks computes the blocks that overlap the query's range, each client's from its own turns. It
// finds the blocks' bounds from the hours that hold turns (an index seek per hour and client),
// then sums the hours of those blocks only.
func Blocks(ctx context.Context, db *sql.DB, q BlocksQuery) (*BlocksReport, error) {
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	rep := &BlocksReport{Client: q.Client, Blocks: []Block{}}
	var to int64 // the end of the hours to read, ms; 0 for no bound
	if !q.Until.IsZero() {
		rep.Until = q.Until.UTC().Format(time.RFC3339)
		// A block starting before Until is read whole.
		to = store.HourOf(q.Until.UnixMilli()-1) + lengthMs
	}
	rolled, err := hasRollup(ctx, db)
	if err != nil {
		return nil, err
	}
	var hours map[string][]int64 // by client
	first := map[string]int{}    // where each client's chain starts
	if q.Since.IsZero() {
		if hours, err = activeHours(ctx, db, rolled, 0, to, q.Client); err != nil {
			return nil, err
		}
	} else {
		// A day back is enough when it holds a pause of 5 hours of each client; else the whole lookback.
		rep.Since = q.Since.UTC().Format(time.RFC3339)
		since := q.Since.UnixMilli()
		for _, back := range []time.Duration{24 * time.Hour, Lookback} {
			from := store.HourOf(since - int64(back/time.Millisecond))
			if hours, err = activeHours(ctx, db, rolled, from, to, q.Client); err != nil {
				return nil, err
			}
			all := true
			for c, hs := range hours {
				i, ok := anchor(hs, from, since)
				first[c], all = i, all && ok
			}
			if all {
				break
			}
		}
	}
	clients := slices.Sorted(maps.Keys(hours))
	var bs []Block
	from, end := int64(math.MaxInt64), int64(0) // the hours the blocks span
	for _, c := range clients {
		var cb []Block
		for _, b := range chain(c, hours[c][first[c]:]) {
			if (q.Since.IsZero() || b.End.After(q.Since)) && (q.Until.IsZero() || b.Start.Before(q.Until)) {
				cb = append(cb, b)
			}
		}
		// An idle gap at an edge of the range is not worth a row.
		for len(cb) > 0 && cb[0].Idle {
			cb = cb[1:]
		}
		for len(cb) > 0 && cb[len(cb)-1].Idle {
			cb = cb[:len(cb)-1]
		}
		if len(cb) > 0 {
			from, end = min(from, cb[0].Start.UnixMilli()), max(end, cb[len(cb)-1].End.UnixMilli())
			bs = append(bs, cb...)
		}
	}
	if len(bs) == 0 {
		return rep, nil
	}
	sums, err := readHours(ctx, db, rolled, from, end, q.Client)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(bs); {
		j := i + 1
		for j < len(bs) && bs[j].Client == bs[i].Client {
			j++
		}
		fill(bs[i:j], sums[bs[i].Client])
		i = j
	}
	now := q.Now.UnixMilli()
	for i := range bs {
		if b := &bs[i]; !b.Idle {
			if err := turnTimes(ctx, db, b); err != nil {
				return nil, err
			}
			b.Active = now >= b.Start.UnixMilli() && now < b.End.UnixMilli()
			finish(b, now)
		}
	}
	rep.Blocks = bs
	return rep, nil
}

// ActiveBlock returns the block of client (its full name) that now is in, or nil when its last turn's
// block has ended. The status line asks for Claude Code's.
func ActiveBlock(ctx context.Context, db *sql.DB, client string, now time.Time) (*Block, error) {
	rep, err := Blocks(ctx, db, BlocksQuery{Since: now, Now: now, Client: client})
	if err != nil {
		return nil, err
	}
	return rep.Active(client), nil
}

// anchor returns the index of an hour of hours (read from from on) that certainly starts a block,
// the latest at or before since: one with no turn in the 4 hours before it, all read (the block
// of any earlier turn ended by then). It reports false when there is none, unless no turn at all
// is at or before since, where the first hour read starts a block (the window starts at least 5
// hours before since).
func anchor(hours []int64, from, since int64) (int, bool) {
	best, ok := 0, false
	for i, h := range hours {
		if h > since {
			if i == 0 {
				return 0, true
			}
			break
		}
		if (i == 0 && h-4*store.HourMs >= from) || (i > 0 && h-hours[i-1] >= lengthMs) {
			best, ok = i, true
		}
	}
	return best, ok
}

// chain splits client's sorted active hours (ms) into blocks, with idle gaps between them. A
// block's FirstTurn and LastTurn hold its first and last hours until turnTimes reads the turns'
// times.
func chain(client string, hours []int64) []Block {
	var out []Block
	for _, h := range hours {
		at := time.UnixMilli(h).UTC()
		if n := len(out); n > 0 && h < out[n-1].End.UnixMilli() {
			out[n-1].LastTurn = at
			continue
		}
		if n := len(out); n > 0 && h > out[n-1].End.UnixMilli() {
			out = append(out, Block{Client: client, Start: out[n-1].End, End: at, Idle: true, Models: []string{}})
		}
		out = append(out, Block{Client: client, Start: at, End: at.Add(Length), FirstTurn: at, LastTurn: at, Models: []string{}})
	}
	return out
}

// fill adds each hour's sums to the block holding it (hours and blocks of one client).
func fill(bs []Block, hours []hour) {
	i := 0
	for _, h := range hours {
		for i < len(bs) && (bs[i].Idle || h.start >= bs[i].End.UnixMilli()) {
			i++
		}
		if i == len(bs) {
			break
		}
		b := &bs[i]
		if h.start < b.Start.UnixMilli() {
			continue
		}
		b.Turns += h.turns
		b.Unpriced += h.unpriced
		b.Tokens.Input += h.in
		b.Tokens.Output += h.out
		b.Tokens.CacheRead += h.cr
		b.Tokens.CacheCreation += h.cc
		b.Tokens.Total += h.in + h.out + h.cr + h.cc
		b.CostUSD += h.usd
		for m := range h.models {
			if !slices.Contains(b.Models, m) {
				b.Models = append(b.Models, m)
			}
		}
	}
	for i := range bs {
		slices.Sort(bs[i].Models)
	}
}

// finish adds the burn rate, and for the active block the time left and the projection.
func finish(b *Block, now int64) {
	span := b.LastTurn.Sub(b.FirstTurn).Minutes()
	if span > 0 {
		b.Burn = &BurnRate{TokensPerMinute: float64(b.Tokens.Total) / span, CostPerHourUSD: b.CostUSD / span * 60}
	}
	if !b.Active {
		return
	}
	left := float64(b.End.UnixMilli()-now) / 60000
	b.Remaining = int64(left)
	if b.Burn != nil {
		b.Projected = &Forecast{TotalTokens: b.Tokens.Total + int64(b.Burn.TokensPerMinute*left),
			CostUSD: b.CostUSD + b.Burn.CostPerHourUSD*left/60}
	}
}

// turnsIn is store.TurnsSQL restricted to [from, to) ms (0: no bound), and to the client :client
// when client is not "".
func turnsIn(from, to int64, client string) string {
	var p, t []string
	if from != 0 {
		p, t = append(p, fmt.Sprintf("api_turns.ts >= %d", from)), append(t, fmt.Sprintf("t.ts >= %d", from))
	}
	if to != 0 {
		p, t = append(p, fmt.Sprintf("api_turns.ts < %d", to)), append(t, fmt.Sprintf("t.ts < %d", to))
	}
	if client != "" {
		p, t = append(p, "api_turns.client = :client"), append(t, "t.client = :client")
	}
	if len(p) == 0 {
		p, t = []string{"1"}, []string{"1"}
	}
	return fmt.Sprintf(store.TurnsSQL, strings.Join(p, " AND "), strings.Join(t, " AND "))
}

var window = sql.Named("window", store.JoinWindowMs)

// turnTimes replaces the hours kept in b's FirstTurn and LastTurn by the times of the first turn
// of the first hour and the last turn of the last hour, of b's client.
func turnTimes(ctx context.Context, db *sql.DB, b *Block) error {
	f, l := b.FirstTurn.UnixMilli(), b.LastTurn.UnixMilli()
	client := sql.Named("client", b.Client)
	var first, last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT min(ts) FROM ("+turnsIn(f, f+store.HourMs, b.Client)+")", window, client).Scan(&first); err != nil {
		return fmt.Errorf("blocks: first turn: %w", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT max(ts) FROM ("+turnsIn(l, l+store.HourMs, b.Client)+")", window, client).Scan(&last); err != nil {
		return fmt.Errorf("blocks: last turn: %w", err)
	}
	if first.Valid {
		b.FirstTurn = time.UnixMilli(first.Int64).UTC()
	}
	if last.Valid {
		b.LastTurn = time.UnixMilli(last.Int64).UTC()
	}
	return nil
}

// hasRollup reports whether to read usage_hourly: it is there, and tests do not forbid it.
func hasRollup(ctx context.Context, db *sql.DB) (bool, error) {
	has, err := hasTable(ctx, db, "usage_hourly")
	if err != nil {
		return false, fmt.Errorf("blocks: %w", err)
	}
	return useRollups && has, nil
}

// hoursSQL walks usage_hourly's distinct hours in [:from, :to) by one primary-key seek each.
const hoursSQL = `WITH RECURSIVE h(hour) AS (
  SELECT (SELECT min(hour) FROM usage_hourly WHERE hour >= :from)
  UNION ALL
  SELECT (SELECT min(hour) FROM usage_hourly WHERE hour > h.hour) FROM h WHERE h.hour < :to)`

// activeHoursSQL gives the distinct (hour, client) pairs of those hours: each hour's clients by
// one seek each on the primary key (hour, client, ...), never a scan of the hour's rows.
const activeHoursSQL = hoursSQL + `,
c(hour, client) AS (
  SELECT hour, (SELECT min(client) FROM usage_hourly u WHERE u.hour = h.hour) FROM h WHERE hour < :to
  UNION ALL
  SELECT hour, (SELECT min(client) FROM usage_hourly u WHERE u.hour = c.hour AND u.client > c.client) FROM c
   WHERE client IS NOT NULL)
SELECT hour, client FROM c WHERE client IS NOT NULL ORDER BY hour, client`

// clientHoursSQL gives the hours that hold turns of :client: one seek each on the primary key.
const clientHoursSQL = hoursSQL + `
SELECT hour, :client FROM h WHERE hour < :to
   AND EXISTS (SELECT 1 FROM usage_hourly u WHERE u.hour = h.hour AND u.client = :client)`

// activeHours returns the starts (ms) of the hours in [from, to) (whole hours; 0 for no bound)
// that hold turns, by client (only client's when it is not ""), oldest first.
func activeHours(ctx context.Context, db *sql.DB, rolled bool, from, to int64, client string) (map[string][]int64, error) {
	if to == 0 {
		to = math.MaxInt64
	}
	var stmt string
	switch {
	case !rolled:
		stmt = "SELECT DISTINCT ts - ts % 3600000 AS h, client FROM (" + turnsIn(from, to, client) + ") ORDER BY h, client"
	case client != "":
		stmt = clientHoursSQL
	default:
		stmt = activeHoursSQL
	}
	rows, err := db.QueryContext(ctx, stmt, sql.Named("from", from), sql.Named("to", to), sql.Named("client", client), window)
	if err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var h int64
		var c string
		if err := rows.Scan(&h, &c); err != nil {
			return nil, fmt.Errorf("blocks: %w", err)
		}
		out[c] = append(out[c], h)
	}
	return out, rows.Err()
}

// readHours returns the sums of the hours in [from, to) (ms, whole hours; 0 for no bound) that
// hold turns, by client (only client's when it is not ""), oldest first.
func readHours(ctx context.Context, db *sql.DB, rolled bool, from, to int64, client string) (map[string][]hour, error) {
	stmt := `SELECT ts - ts % 3600000 AS h, client, model, count(*), sum(reliability = 'unknown'), sum(input_tokens),
       sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens), sum(cost_usd)
  FROM (` + turnsIn(from, to, client) + ") GROUP BY h, client, model ORDER BY h, client"
	if rolled {
		var c []string
		if from != 0 {
			c = append(c, fmt.Sprintf("hour >= %d", from))
		}
		if to != 0 {
			c = append(c, fmt.Sprintf("hour < %d", to))
		}
		if client != "" {
			c = append(c, "client = :client")
		}
		where := ""
		if len(c) > 0 {
			where = " WHERE " + strings.Join(c, " AND ")
		}
		stmt = `SELECT hour, client, model, sum(turns), sum(unpriced_turns), sum(input_tokens), sum(output_tokens),
       sum(cache_read_tokens), sum(cache_creation_tokens), sum(cost_usd)
  FROM usage_hourly` + where + " GROUP BY hour, client, model ORDER BY hour, client"
	}
	rows, err := db.QueryContext(ctx, stmt, window, sql.Named("client", client))
	if err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	defer rows.Close()
	out := map[string][]hour{}
	for rows.Next() {
		var h hour
		var c, model string
		var usd sql.NullFloat64
		if err := rows.Scan(&h.start, &c, &model, &h.turns, &h.unpriced, &h.in, &h.out, &h.cr, &h.cc, &usd); err != nil {
			return nil, fmt.Errorf("blocks: %w", err)
		}
		if h.turns == 0 {
			continue
		}
		h.usd = usd.Float64
		hs := out[c]
		if len(hs) == 0 || hs[len(hs)-1].start != h.start {
			h.models = map[string]bool{}
			hs = append(hs, h)
		} else {
			last := &hs[len(hs)-1]
			last.turns += h.turns
			last.unpriced += h.unpriced
			last.in, last.out, last.cr, last.cc = last.in+h.in, last.out+h.out, last.cr+h.cr, last.cc+h.cc
			last.usd += h.usd
		}
		if model != "" {
			hs[len(hs)-1].models[model] = true
		}
		out[c] = hs
	}
	return out, rows.Err()
}

// BlockClients returns the clients that have turns in the store, sorted.
func BlockClients(ctx context.Context, db *sql.DB) ([]string, error) {
	has, err := hasTable(ctx, db, "usage_sessions")
	if err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	stmt := "SELECT DISTINCT client FROM (" + turnsIn(0, 0, "") + ") ORDER BY client"
	if useRollups && has {
		// usage_sessions (kept with usage_hourly) leads with client: one seek per client.
		stmt = `WITH RECURSIVE c(client) AS (
  SELECT (SELECT min(client) FROM usage_sessions)
  UNION ALL
  SELECT (SELECT min(client) FROM usage_sessions WHERE client > c.client) FROM c WHERE c.client IS NOT NULL)
SELECT client FROM c WHERE client IS NOT NULL`
	}
	rows, err := db.QueryContext(ctx, stmt, window)
	if err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("blocks: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ActiveBlocks returns the block now is in of every client that has one, by client: observer's
// estimate of a 5-hour window from token counts (what `observerctl limits` and the dashboard show,
// marked estimated, when no provider figure was ever seen).
func ActiveBlocks(ctx context.Context, db *sql.DB, now time.Time) ([]Block, error) {
	clients, err := BlockClients(ctx, db)
	if err != nil {
		return nil, err
	}
	out := []Block{}
	for _, cl := range clients {
		b, err := ActiveBlock(ctx, db, cl, now)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, nil
}
