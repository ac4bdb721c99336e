package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/event"
)

// Repricing: when a model's price changes (config.toml's price overrides), the writer recomputes
// cost_usd of the stored token_usage and api_turns rows of that model from their token columns
// (Reprice). Each chunk of rows is updated in one transaction that also recomputes the
// usage_hourly hours the chunk changed, so a reader never sees a rollup that disagrees with the
// raw rows, and an interrupted run leaves every committed chunk consistent. The override set the
// stored costs carry is remembered in rollup_state (PricingState), so a restarted writer knows
// whether it still has repricing to do.
//
// A row of a model without a price has cost 0 and reliability 'unknown' (usage_hourly counts it
// in unpriced_turns). Repriced with a price, it takes the reliability its capture path gives a
// priced row (PricedReliability); a row whose model loses its price goes back to 0 and 'unknown'.

// repriceChunk is the number of rows read per transaction.
const repriceChunk = 1000

// pricingStateKey is rollup_state's key for the price overrides the stored costs carry.
const pricingStateKey = "pricing_overrides"

// PricedReliability is the reliability of a priced row of table (token_usage or api_turns) and
// client: the proxy's figures are accurate; a transcript's are as its client's registry entry says
// (pkg/client: Claude Code's log streaming placeholders, unreliable; others final usage,
// approximate).
func PricedReliability(table, name string) event.Reliability {
	if table == "api_turns" {
		return event.ReliabilityAccurate
	}
	return client.UsageReliability(name)
}

// Reprice sets cost_usd, from the row's token columns and price at the row's time, on every
// token_usage and api_turns row whose model is one of models (exact stored names, see
// StoredModels), and the reliability of the rows that gain or lose a price. It works in
// transactions of repriceChunk rows, each recomputing the rollup hours it changed. n is the number
// of rows changed; rows whose cost is already right are left alone, so a second run changes
// nothing. A Codex row whose tokens span two requests is priced as one request here (its reader
// splits it when the last request is known): the two differ only beyond a long-context threshold.
func (s *Store) Reprice(ctx context.Context, price func(model string, ts time.Time, tok event.Tokens) (float64, bool), models []string) (n int, err error) {
	if len(models) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(models)
	if err != nil {
		return 0, err
	}
	for _, table := range []string{"token_usage", "api_turns"} {
		var after int64
		for {
			changed, last, done, err := s.repriceChunk(ctx, table, string(list), after, price)
			n += changed
			if err != nil {
				return n, fmt.Errorf("reprice %s: %w", table, err)
			}
			if done {
				break
			}
			after = last
		}
	}
	return n, nil
}

// repriceChunk reprices the next repriceChunk rows of table after the id after. done is true when
// there were no more.
func (s *Store) repriceChunk(ctx context.Context, table, models string, after int64,
	price func(string, time.Time, event.Tokens) (float64, bool)) (changed int, last int64, done bool, err error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, after, false, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, ts, client, model, input_tokens, output_tokens, cache_read_tokens,
       cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability
  FROM `+table+` WHERE id > ? AND model IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ?`,
		after, models, repriceChunk)
	if err != nil {
		return 0, after, false, err
	}
	type update struct {
		id, ts int64
		usd    float64
		rel    string
	}
	var updates []update
	read := 0
	last = after
	for rows.Next() {
		var (
			id, ts             int64
			client, model, rel string
			tok                event.Tokens
			usd                float64
		)
		if err := rows.Scan(&id, &ts, &client, &model, &tok.Input, &tok.Output, &tok.CacheRead, &tok.CacheCreation,
			&tok.CacheCreation1h, &tok.Reasoning, &usd, &rel); err != nil {
			rows.Close()
			return 0, after, false, err
		}
		read++
		last = id
		newUSD, known := price(model, time.UnixMilli(ts).UTC(), tok)
		newRel := rel
		switch {
		case !known:
			newUSD, newRel = 0, string(event.ReliabilityUnknown)
		case rel == string(event.ReliabilityUnknown) || rel == "":
			newRel = string(PricedReliability(table, client))
		}
		if newUSD != usd || newRel != rel {
			updates = append(updates, update{id, ts, newUSD, newRel})
		}
	}
	if err := rows.Close(); err != nil {
		return 0, after, false, err
	}
	if err := rows.Err(); err != nil {
		return 0, after, false, err
	}
	if len(updates) > 0 {
		upd, err := tx.PrepareContext(ctx, "UPDATE "+table+" SET cost_usd = ?, reliability = ? WHERE id = ?")
		if err != nil {
			return 0, after, false, err
		}
		defer upd.Close()
		d := newDirtyHours()
		for _, u := range updates {
			if _, err := upd.ExecContext(ctx, u.usd, u.rel, u.id); err != nil {
				return 0, after, false, err
			}
			d.turn(u.ts)
		}
		if err := refreshRollups(ctx, tx, d); err != nil {
			return 0, after, false, err
		}
		if err := tx.Commit(); err != nil {
			return 0, after, false, err
		}
	}
	return len(updates), last, read < repriceChunk, nil
}

// StoredModels lists the distinct model names of the token_usage and api_turns rows (a scan of
// both tables: for the rare repricing, not for a page).
func (s *Store) StoredModels(ctx context.Context) ([]string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT model FROM token_usage WHERE model != ''
UNION SELECT model FROM api_turns WHERE model != '' ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// PricingState returns the price overrides (in the caller's text form) the stored costs were last
// computed with, and false when none was ever recorded.
func (s *Store) PricingState(ctx context.Context) (string, bool, error) {
	var v string
	err := s.DB.QueryRowContext(ctx, "SELECT value FROM rollup_state WHERE key = ?", pricingStateKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// SetPricingState records the price overrides the stored costs now carry.
func (s *Store) SetPricingState(ctx context.Context, overrides string) error {
	_, err := s.DB.ExecContext(ctx, "INSERT OR REPLACE INTO rollup_state (key, value) VALUES (?, ?)", pricingStateKey, overrides)
	return err
}
