package writer

// Price overrides (Writer.Prices): config.toml's [pricing] models can change while everything
// runs. The writer then makes the store agree with the new prices:
//
//   - stored rows: the token_usage and api_turns rows of every model whose price changed get
//     their cost recomputed from their tokens (store.Reprice, in chunks that keep the rollups
//     exact), and the override set is recorded in the store (store.SetPricingState). A writer
//     that starts with overrides other than the recorded ones (config.toml changed while it was
//     down) reprices at start; one that stopped half way starts over, which changes only what is
//     still wrong.
//   - new rows: the proxy and the watcher price what they publish with the table they hold, which
//     may lag a change by a few seconds (or by hours for events spooled while the bus was down).
//     So the writer prices the incoming events of every overridden model, and of every model
//     whose override changed while it ran, with its own table before storing them. A batch being
//     stored while the table changes finishes first: the repricing of stored rows starts after it.

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

// pricer is the price table the writer stores events with.
type pricer struct {
	mu    sync.RWMutex    // held for reading while a batch is priced and stored
	set   *prices.Set     // nil: events keep the cost they came with
	watch map[string]bool // table keys whose incoming events the writer prices itself
}

// swap makes set the table incoming events are priced with; changed are override names whose
// price just changed. It waits for the batch being stored, if any.
func (p *pricer) swap(set *prices.Set, changed []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	watch := maps.Clone(p.watch)
	if watch == nil {
		watch = map[string]bool{}
	}
	for k := range set.Overrides {
		watch[k] = true
	}
	for _, k := range changed {
		watch[k] = true
	}
	p.set, p.watch = set, watch
}

// priceEvents prices the usage events of watched models in evs with the writer's table, and
// returns the function that lets a table change proceed once the batch is stored.
func (w *Writer) priceEvents(evs []event.Event) (release func()) {
	if w.Prices == nil {
		return func() {}
	}
	w.pr.mu.RLock()
	if w.pr.set == nil {
		return w.pr.mu.RUnlock
	}
	t := w.pr.set.Table
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Kind == event.KindTokenUsage && e.TokenUsage != nil:
			u := e.TokenUsage
			u.CostUSD, u.Reliability = w.pr.price(t, "token_usage", e.Client, u.Model, u.Tokens, e.Time, u.CostUSD, u.Reliability)
		case e.Kind == event.KindAPITurn && e.APITurn != nil:
			a := e.APITurn
			a.CostUSD, a.Reliability = w.pr.price(t, "api_turns", e.Client, a.Model, a.Tokens, e.Time, a.CostUSD, a.Reliability)
		}
	}
	return w.pr.mu.RUnlock
}

// price is one event's cost and reliability: recomputed for a watched model, set to unknown for a
// model the table cannot price (a producer still holding a removed override), else as it came.
func (p *pricer) price(t *pricing.Table, table, client, model string, tok event.Tokens, at time.Time,
	usd float64, rel event.Reliability) (float64, event.Reliability) {
	if model == "" {
		return usd, rel
	}
	_, key, ok := t.LookupAt(model, at)
	switch {
	case !ok:
		if usd != 0 || (rel != event.ReliabilityUnknown && tok != (event.Tokens{})) {
			return 0, event.ReliabilityUnknown
		}
		return usd, rel
	case !p.watch[key]:
		return usd, rel
	}
	usd, _ = t.CostAt(model, tok, at)
	if rel == event.ReliabilityUnknown || rel == "" {
		rel = store.PricedReliability(table, client)
	}
	return usd, rel
}

// PriceCheck is how often the writer looks for new price overrides.
var PriceCheck = time.Second

// pricingLoop applies the overrides in force at start, then every change of them.
func (w *Writer) pricingLoop(ctx context.Context) {
	t := time.NewTicker(PriceCheck)
	defer t.Stop()
	var applied *prices.Set
	for {
		if cur := w.Prices.Current(); cur != applied {
			if err := w.applyPrices(ctx, cur); err != nil {
				if ctx.Err() != nil {
					return
				}
				w.Logger.Warn("stored costs not repriced; will retry", "err", err)
			} else {
				applied = cur
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// applyPrices makes set the writer's table and, unless the store already carries its overrides,
// reprices the stored rows of the models whose price changed, then records set in the store.
func (w *Writer) applyPrices(ctx context.Context, set *prices.Set) error {
	key := set.Key()
	storedKey, recorded, err := w.Store.PricingState(ctx)
	if err != nil {
		return err
	}
	if recorded && storedKey == key {
		w.pr.swap(set, nil)
		return nil
	}
	// Rows stored before any override was recorded were priced with the built-in table.
	old, _ := prices.Build(nil)
	if recorded {
		o, skipped, err := prices.ParseKey(storedKey)
		if err == nil {
			old = o
		} else {
			w.Logger.Warn("recorded price overrides unreadable; repricing every overridden model", "err", err)
		}
		if len(skipped) > 0 {
			// Their rows are repriced as if those models had had no price.
			w.Logger.Warn("recorded prices: bad prices left out", "models", strings.Join(skipped, ", "))
		}
	}
	changed := prices.Changed(old, set)
	w.pr.swap(set, changed) // from here on, incoming rows carry the new prices
	start := time.Now()
	var affected []string
	if len(changed) > 0 {
		models, err := w.Store.StoredModels(ctx)
		if err != nil {
			return err
		}
		isChanged := map[string]bool{}
		for _, k := range changed {
			isChanged[k] = true
		}
		for _, m := range models {
			_, before, _ := old.Table.Lookup(m)
			_, after, _ := set.Table.Lookup(m)
			if isChanged[before] || isChanged[after] {
				affected = append(affected, m)
			}
		}
	}
	n, err := w.Store.Reprice(ctx, func(model string, ts time.Time, tok event.Tokens) (float64, bool) {
		return set.Table.CostAt(model, tok, ts)
	}, affected)
	if err != nil {
		return err
	}
	if err := w.Store.SetPricingState(ctx, key); err != nil {
		return err
	}
	if n > 0 {
		w.notify(bus.StoredNote{Repriced: true, Kinds: []string{string(event.KindTokenUsage), string(event.KindAPITurn)}, Many: true})
	}
	if len(changed) > 0 {
		slices.Sort(affected)
		w.Logger.Info("stored costs repriced", "overrides_changed", strings.Join(changed, ", "),
			"models", strings.Join(affected, ", "), "rows", n, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
