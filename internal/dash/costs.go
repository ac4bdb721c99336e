package dash

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/pricing"
)

// costRows runs query.Cost over the filters' window, project and client, grouped by keys. query.Cost
// applies the filters itself (in SQL, before its proxy/transcript join), so each turn is counted
// once and total is exactly what `observerctl cost --json` reports for the same selection.
func costRows(ctx context.Context, db query.DB, f filters, keys ...string) (rows []query.CostRow, total query.CostRow, err error) {
	return runCost(ctx, db, f, query.CostQuery{GroupBy: keys, Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client}})
}

// runCost is query.Cost's rows and total for q, of the filters' member alone when they name one.
func runCost(ctx context.Context, db query.DB, f filters, q query.CostQuery) (rows []query.CostRow, total query.CostRow, err error) {
	q.Member = f.Member
	rep, err := query.Cost(ctx, db, q)
	if err != nil {
		return nil, total, err
	}
	return rep.Rows, rep.Total, nil
}

// timeKey is the query.Cost grouping key of cost over time: hours up to two days (as the activity
// chart), days beyond.
func timeKey(f filters, now time.Time) string {
	return activityUnit(f, now)
}

// bucketOf is a row's cost-over-time label: its local hour or its local day.
func bucketOf(r query.CostRow) string {
	if r.Hour != "" {
		return r.Hour
	}
	return r.Day
}

// Buckets are dollars split by billing bucket.
type Buckets struct {
	Input      float64 `json:"input_usd"`
	Output     float64 `json:"output_usd"`
	CacheRead  float64 `json:"cache_read_usd"`
	CacheWrite float64 `json:"cache_write_usd"`
}

func (b *Buckets) add(o Buckets) {
	b.Input += o.Input
	b.Output += o.Output
	b.CacheRead += o.CacheRead
	b.CacheWrite += o.CacheWrite
}

// split shares a group's recorded dollars among the billing buckets in the proportions of its
// tokens at the model's list price (see the package doc). A model without a price has no dollars
// to share; a group whose weights are all zero is shared by token counts.
func (s *Server) split(r query.CostRow) Buckets {
	if r.CostUSD == 0 {
		return Buckets{}
	}
	cw5 := max(r.CacheCreationTokens-r.CacheCreation1hTokens, 0)
	w := [4]float64{float64(r.InputTokens), float64(r.OutputTokens), float64(r.CacheReadTokens), float64(r.CacheCreationTokens)}
	if p, _, ok := s.lookup(r.Model); ok {
		priced := [4]float64{w[0] * p.Input, w[1] * p.Output, w[2] * p.CacheRead, float64(cw5)*p.CacheWrite5m + float64(r.CacheCreation1hTokens)*p.CacheWrite1h}
		if priced[0]+priced[1]+priced[2]+priced[3] > 0 {
			w = priced
		}
	}
	sum := w[0] + w[1] + w[2] + w[3]
	if sum == 0 {
		return Buckets{Input: r.CostUSD}
	}
	return Buckets{Input: r.CostUSD * w[0] / sum, Output: r.CostUSD * w[1] / sum, CacheRead: r.CostUSD * w[2] / sum, CacheWrite: r.CostUSD * w[3] / sum}
}

// Totals is a cost row as the API shows it: tokens by bucket, dollars, turns.
type Totals struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_creation_tokens"`
	CacheWrite1h     int64   `json:"cache_creation_1h_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	Turns            int64   `json:"turns"`
	ProxyTurns       int64   `json:"proxy_turns"`
}

func totalsOf(r query.CostRow) Totals {
	return Totals{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens, r.CacheCreation1hTokens,
		r.ReasoningTokens, r.CostUSD, r.Turns, r.ProxyTurns}
}

// bucketStart turns query.Cost's local day ("2006-01-02") or hour ("2006-01-02T15") label into the
// Unix time of its start.
func bucketStart(label string) int64 {
	layout := "2006-01-02"
	if len(label) > len(layout) {
		layout = "2006-01-02T15"
	}
	t, err := time.ParseInLocation(layout, label, time.Local)
	if err != nil {
		return 0
	}
	return t.Unix()
}

// Reliability labels of a model's figures.
const (
	ReliabilityAccurate     = "accurate"      // every turn measured by the proxy
	ReliabilityApproximate  = "approximate"   // from transcripts
	ReliabilityUnreliable   = "unreliable"    // from transcripts known to log placeholders (Claude Code)
	ReliabilityMixed        = "mixed"         // some turns from the proxy, some from transcripts
	ReliabilityUnknownPrice = "unknown price" // no price for the model: its dollars are 0
)

// ModelCost is one row of /api/cost.
type ModelCost struct {
	Model string `json:"model"`
	Totals
	Buckets
	Reliability string `json:"reliability"`
	PriceKnown  bool   `json:"price_known"`
	PriceKey    string `json:"price_key,omitempty"` // the price table entry the model matched
}

func (s *Server) modelCost(r query.CostRow) ModelCost {
	mc := ModelCost{Model: r.Model, Totals: totalsOf(r), Buckets: s.split(r)}
	_, key, ok := s.lookup(r.Model)
	mc.PriceKnown, mc.PriceKey = ok, key
	switch {
	case !ok:
		mc.Reliability = ReliabilityUnknownPrice
	case r.ProxyTurns == r.Turns:
		mc.Reliability = ReliabilityAccurate
	case r.ProxyTurns > 0:
		mc.Reliability = ReliabilityMixed
	case r.UnreliableTurns > 0:
		mc.Reliability = ReliabilityUnreliable
	default:
		mc.Reliability = ReliabilityApproximate
	}
	return mc
}

// costAPI answers /api/cost: per model, the four buckets in tokens and dollars, the cost and
// how far to trust it; per project and per client, the totals.
func (s *Server) costAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store    bool              `json:"store"`
		Total    Totals            `json:"total"`
		Buckets  Buckets           `json:"buckets"`
		Models   []ModelCost       `json:"models"`
		Projects []groupCost       `json:"projects"`
		Clients  []groupCost       `json:"clients"`
		Days     []dayCost         `json:"days"`
		CostUnit string            `json:"days_unit"` // hour or day: the buckets of days
		Legend   map[string]string `json:"legend"`
	}{filters: f, Models: []ModelCost{}, Projects: []groupCost{}, Clients: []groupCost{}, Days: []dayCost{}, Legend: reliabilityLegend}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	out.CostUnit = timeKey(f, q.now)
	rows, total, err := costRows(ctx, db, f, out.CostUnit, "model", "project", "client")
	if err != nil {
		return nil, err
	}
	out.Total = totalsOf(total)
	byModel, modelBuckets := map[string]*query.CostRow{}, map[string]*Buckets{}
	byProject, byClient := map[string]*groupCost{}, map[string]*groupCost{}
	days := map[string]*dayCost{}
	for _, r := range rows {
		b := s.split(r)
		out.Buckets.add(b)
		m := byModel[r.Model]
		if m == nil {
			m = &query.CostRow{Model: r.Model}
			byModel[r.Model] = m
			modelBuckets[r.Model] = &Buckets{}
		}
		m.Add(r)
		// A model's buckets add its groups' splits, as the totals do.
		modelBuckets[r.Model].add(b)
		groupInto(byProject, r.Project, r, b)
		groupInto(byClient, r.Client, r, b)
		dayInto(days, bucketOf(r), r, b)
	}
	for _, m := range byModel {
		mc := s.modelCost(*m)
		mc.Buckets = *modelBuckets[m.Model]
		out.Models = append(out.Models, mc)
	}
	slices.SortFunc(out.Models, func(a, b ModelCost) int { return cmpCost(a.CostUSD, b.CostUSD, a.Model, b.Model) })
	out.Projects = sortedGroups(byProject)
	out.Clients = sortedGroups(byClient)
	out.Days = sortedDays(days)
	return out, nil
}

var reliabilityLegend = map[string]string{
	ReliabilityAccurate:     "every turn measured by observer-proxy from the API's own usage figures",
	ReliabilityApproximate:  "from the client's transcripts, as the client logged its usage",
	ReliabilityUnreliable:   "from transcripts whose client logs streaming placeholders; observer keeps each message's final figures, but they may still be short",
	ReliabilityMixed:        "some turns from observer-proxy, the rest from transcripts",
	ReliabilityUnknownPrice: "the price table has no price for this model: its tokens are counted, its dollars are 0",
}

// groupCost is the totals of one project or client.
type groupCost struct {
	Key string `json:"key"`
	Totals
	Buckets
	row query.CostRow
}

func groupInto(m map[string]*groupCost, key string, r query.CostRow, b Buckets) {
	g := m[key]
	if g == nil {
		g = &groupCost{Key: key}
		m[key] = g
	}
	g.row.Add(r)
	g.Buckets.add(b)
}

func sortedGroups(m map[string]*groupCost) []groupCost {
	out := make([]groupCost, 0, len(m))
	for _, g := range m {
		g.Totals = totalsOf(g.row)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b groupCost) int { return cmpCost(a.CostUSD, b.CostUSD, a.Key, b.Key) })
	return out
}

// cmpCost orders by dollars, highest first, then by name.
func cmpCost(a, b float64, ka, kb string) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return strings.Compare(ka, kb)
}

// dayCost is one local day, or one local hour for windows up to two days, of cost over time.
type dayCost struct {
	Day     string  `json:"day"`            // the bucket's label: "2026-11-30", or "2026-11-30T14" by hour
	Hour    string  `json:"hour,omitempty"` // the hour's label when the bucket is an hour
	T       int64   `json:"t"`              // Unix seconds of the bucket's local start
	CostUSD float64 `json:"cost_usd"`
	Tokens  int64   `json:"tokens"`
	Buckets
}

func dayInto(m map[string]*dayCost, day string, r query.CostRow, b Buckets) {
	d := m[day]
	if d == nil {
		d = &dayCost{Day: day, T: bucketStart(day)}
		if len(day) > len("2006-01-02") {
			d.Hour = day
		}
		m[day] = d
	}
	d.CostUSD += r.CostUSD
	d.Tokens += r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheCreationTokens
	d.Buckets.add(b)
}

func sortedDays(m map[string]*dayCost) []dayCost {
	out := make([]dayCost, 0, len(m))
	for _, d := range m {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b dayCost) int { return strings.Compare(a.Day, b.Day) })
	return out
}

// priceOf is a price table lookup's answer.
type priceOf struct {
	price pricing.Price
	key   string
	ok    bool
}

// priceMemo remembers one table's lookups.
type priceMemo struct {
	table *pricing.Table
	m     sync.Map // model name -> priceOf
}

// lookup is the table's Lookup remembered per model name: a cost tab over months splits thousands
// of rows among a handful of models, and a lookup normalizes the name each time. A new table
// (config.toml's overrides changed) starts a new memory.
func (s *Server) lookup(model string) (pricing.Price, string, bool) {
	t := s.table()
	memo := s.prices.Load()
	if memo == nil || memo.table != t {
		memo = &priceMemo{table: t}
		s.prices.Store(memo)
	}
	if v, ok := memo.m.Load(model); ok {
		p := v.(priceOf)
		return p.price, p.key, p.ok
	}
	p, key, ok := t.Lookup(model)
	memo.m.Store(model, priceOf{p, key, ok})
	return p, key, ok
}
