package dash

// Analysis (/api/analysis): where the money went and what it bought.
//
// Every dollar and token figure comes from query.Cost over the window's filters (see the package
// doc), grouped as each figure needs, so the totals here equal the Cost tab's. Choices:
//   - The prior period is the window of the same length that ends where this one starts
//     (query.Cost with Until); "all" has none.
//   - An active hour is a local clock hour with at least one model turn; burn rate is the window's
//     cost over its active hours.
//   - Cache savings price each model's cache-read tokens at its input price minus its cache-read
//     price (pkg/pricing, current list prices); hit rate is cache_read / (input + cache_read +
//     cache_creation).
//   - A session's reason is its dominant billing bucket (the split of costs.go) and its share.
//   - Cheaper model rule (cheaperRule): a session's use of a model with at most cheapMaxTools tool
//     calls in the session and at most cheapMaxOutput output tokens per turn, when the model is
//     priced above its family's small model (claude-haiku-4-5 for Claude, gpt-5-mini for GPT); the
//     saving is its recorded cost minus its tokens at the small model's prices.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
)

// The cheaper-model rule's limits.
const (
	cheapMaxTools  = 10
	cheapMaxOutput = 800
	topSessions    = 10
)

// cheaperModels maps a model family prefix to the small model it could have used.
var cheaperModels = []struct{ prefix, model string }{
	{"claude-", "claude-haiku-4-5"},
	{"gpt-", "gpt-5-mini"},
}

// Analysis is the answer of /api/analysis.
type Analysis struct {
	Store   bool    `json:"store"`
	Filters filters `json:"filters"`
	Total   Totals  `json:"total"`
	// Prior is the same-length period before the window; nil for all time.
	Prior         *Totals            `json:"prior"`
	ChangePct     *float64           `json:"change_pct"` // nil when there is no prior spend
	PerTurnUSD    float64            `json:"per_turn_usd"`
	ActiveHours   int64              `json:"active_hours"`
	BurnPerHour   float64            `json:"burn_per_active_hour_usd"`
	CacheSavedUSD float64            `json:"cache_savings_usd"`
	CacheHitRate  float64            `json:"cache_hit_rate"`
	TopSessions   []ExpensiveSess    `json:"top_sessions"`
	Heatmap       [7][24]HeatCell    `json:"heatmap"` // [weekday Sunday=0][local hour]
	Cheaper       []CheaperCandidate `json:"cheaper"`
	CheaperRule   string             `json:"cheaper_rule"`
}

// ExpensiveSess is one of the window's costliest sessions.
type ExpensiveSess struct {
	SessionID string  `json:"session_id"`
	Title     string  `json:"title"`
	Client    string  `json:"client"`
	CostUSD   float64 `json:"cost_usd"`
	Turns     int64   `json:"turns"`
	Buckets
	Reason string `json:"reason"` // "cache writes 62%"
}

// HeatCell is one weekday × hour cell.
type HeatCell struct {
	Turns   int64   `json:"turns"`
	CostUSD float64 `json:"cost_usd"`
}

// CheaperCandidate is a session's use of a model the rule says a cheaper one would have served.
type CheaperCandidate struct {
	SessionID    string  `json:"session_id"`
	Title        string  `json:"title"`
	Client       string  `json:"client"`
	Model        string  `json:"model"`
	Turns        int64   `json:"turns"`
	ToolCalls    int64   `json:"tool_calls"`
	OutputPerTrn float64 `json:"output_per_turn"`
	CostUSD      float64 `json:"cost_usd"`
	Cheaper      string  `json:"cheaper_model"`
	CheaperUSD   float64 `json:"cheaper_cost_usd"`
	SavingUSD    float64 `json:"saving_usd"`
}

func (s *Server) analysisAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	a := &Analysis{Filters: f, TopSessions: []ExpensiveSess{}, Cheaper: []CheaperCandidate{}, CheaperRule: cheaperRule()}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return a, err
	}
	a.Store = true
	base := query.CostQuery{Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client}}

	// The three cost queries are independent reads: run side by side on the reader's connections.
	var byHour, bySession, prior *query.CostReport
	var errs [3]error
	var wg sync.WaitGroup
	wg.Go(func() { byHour, errs[0] = s.runCost(ctx, db, base, "hour") })
	wg.Go(func() { bySession, errs[1] = s.runCost(ctx, db, base, "session", "client", "model") })
	if !f.Since.IsZero() {
		pq := base
		pq.Since, pq.Until = f.Since.Add(-q.now.Sub(f.Since)), f.Since
		wg.Go(func() { prior, errs[2] = s.runCost(ctx, db, pq) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	a.Total = totalsOf(byHour.Total)
	if a.Total.Turns > 0 {
		a.PerTurnUSD = a.Total.CostUSD / float64(a.Total.Turns)
	}
	for _, r := range byHour.Rows {
		t, err := time.ParseInLocation("2006-01-02T15", r.Hour, time.Local)
		if err != nil {
			continue
		}
		a.ActiveHours++
		c := &a.Heatmap[t.Weekday()][t.Hour()]
		c.Turns += r.Turns
		c.CostUSD += r.CostUSD
	}
	if a.ActiveHours > 0 {
		a.BurnPerHour = a.Total.CostUSD / float64(a.ActiveHours)
	}

	if prior != nil {
		p := totalsOf(prior.Total)
		a.Prior = &p
		if p.CostUSD > 0 {
			pct := 100 * (a.Total.CostUSD - p.CostUSD) / p.CostUSD
			a.ChangePct = &pct
		}
	}

	// Cache savings are linear in the tokens: the session rows serve (one query fewer).
	a.CacheSavedUSD = s.cacheSavings(bySession.Rows)
	if den := a.Total.InputTokens + a.Total.CacheReadTokens + a.Total.CacheWriteTokens; den > 0 {
		a.CacheHitRate = float64(a.Total.CacheReadTokens) / float64(den)
	}

	a.TopSessions = s.expensiveSessions(bySession.Rows)
	// Tool calls are counted only for the sessions the other conditions leave.
	var maybe []string
	for _, r := range bySession.Rows {
		if r.Turns > 0 && r.CostUSD > 0 && float64(r.OutputTokens)/float64(r.Turns) <= cheapMaxOutput {
			maybe = append(maybe, r.SessionID)
		}
	}
	tools, err := query.ToolCallsBySession(ctx, db, f.readFilter(), maybe)
	if err != nil {
		return nil, err
	}
	a.Cheaper = s.cheaperCandidates(bySession.Rows, tools)
	return a, nil
}

func (s *Server) runCost(ctx context.Context, db query.DB, q query.CostQuery, keys ...string) (*query.CostReport, error) {
	q.GroupBy = keys
	return query.Cost(ctx, db, q)
}

// cacheSavings is what the cache reads would have cost at the input price, less what they cost.
func (s *Server) cacheSavings(rows []query.CostRow) float64 {
	var saved float64
	for _, r := range rows {
		if p, _, ok := s.lookup(r.Model); ok && p.Input > p.CacheRead {
			saved += float64(r.CacheReadTokens) * (p.Input - p.CacheRead) / 1e6
		}
	}
	return saved
}

// expensiveSessions sums (session, client, model) rows per session and keeps the costliest.
func (s *Server) expensiveSessions(rows []query.CostRow) []ExpensiveSess {
	type key struct{ client, id string }
	idx := map[key]int{}
	out := []ExpensiveSess{}
	for _, r := range rows {
		k := key{r.Client, r.SessionID}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, ExpensiveSess{SessionID: r.SessionID, Title: r.Title, Client: r.Client})
		}
		e := &out[i]
		e.CostUSD += r.CostUSD
		e.Turns += r.Turns
		e.Buckets.add(s.split(r))
	}
	slices.SortStableFunc(out, func(a, b ExpensiveSess) int {
		switch {
		case a.CostUSD > b.CostUSD:
			return -1
		case a.CostUSD < b.CostUSD:
			return 1
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	out = out[:min(len(out), topSessions)]
	for i := range out {
		out[i].Reason = reasonOf(out[i].Buckets, out[i].CostUSD)
	}
	return out
}

// reasonOf names the bucket that dominates a cost and its share.
func reasonOf(b Buckets, total float64) string {
	if total <= 0 {
		return "no priced usage"
	}
	name, v := "input", b.Input
	for _, c := range []struct {
		n string
		v float64
	}{{"output", b.Output}, {"cache reads", b.CacheRead}, {"cache writes", b.CacheWrite}} {
		if c.v > v {
			name, v = c.n, c.v
		}
	}
	return fmt.Sprintf("%s %.0f%%", name, 100*v/total)
}

func cheaperRule() string {
	return fmt.Sprintf("a session's use of a Claude or GPT model priced above its family's small model (claude-haiku-4-5, gpt-5-mini), "+
		"with at most %d tool calls in the session and at most %d output tokens per turn; the saving prices the same tokens at the small model's list prices",
		cheapMaxTools, cheapMaxOutput)
}

// cheaperCandidates applies the rule to (session, client, model) rows.
func (s *Server) cheaperCandidates(rows []query.CostRow, tools map[[2]string]int64) []CheaperCandidate {
	out := []CheaperCandidate{}
	for _, r := range rows {
		if r.Turns == 0 || r.CostUSD <= 0 {
			continue
		}
		n := tools[[2]string{r.Client, r.SessionID}]
		perTurn := float64(r.OutputTokens) / float64(r.Turns)
		if n > cheapMaxTools || perTurn > cheapMaxOutput {
			continue
		}
		small := ""
		for _, c := range cheaperModels {
			if strings.HasPrefix(strings.ToLower(r.Model), c.prefix) {
				small = c.model
			}
		}
		p, _, ok1 := s.lookup(small)
		cur, _, ok2 := s.lookup(r.Model)
		if small == "" || !ok1 || !ok2 || cur.Input <= p.Input {
			continue
		}
		cheap := p.Cost(event.Tokens{Input: r.InputTokens, Output: r.OutputTokens, CacheRead: r.CacheReadTokens,
			CacheCreation: r.CacheCreationTokens, CacheCreation1h: r.CacheCreation1hTokens, Reasoning: r.ReasoningTokens})
		if cheap >= r.CostUSD {
			continue
		}
		out = append(out, CheaperCandidate{SessionID: r.SessionID, Title: r.Title, Client: r.Client, Model: r.Model, Turns: r.Turns, ToolCalls: n,
			OutputPerTrn: perTurn, CostUSD: r.CostUSD, Cheaper: small, CheaperUSD: cheap, SavingUSD: r.CostUSD - cheap})
	}
	slices.SortStableFunc(out, func(a, b CheaperCandidate) int {
		switch {
		case a.SavingUSD > b.SavingUSD:
			return -1
		case a.SavingUSD < b.SavingUSD:
			return 1
		}
		return 0
	})
	return out[:min(len(out), 20)]
}

// tabRoutes registers the endpoints of the Analysis, Discovery, Patterns, Memory and Settings tabs.
func (s *Server) tabRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/analysis", s.api(s.analysisAPI))
	mux.HandleFunc("GET /api/discovery", s.api(s.discoveryAPI))
	mux.HandleFunc("GET /api/patterns", s.api(s.patternsAPI))
	mux.HandleFunc("GET /api/memory", s.api(s.memoryAPI))
	mux.HandleFunc("GET /api/settings", s.api(s.settingsAPI))
	mux.HandleFunc("POST /api/settings", s.api(s.saveSettings))
}
