// Package metrics describes the store as Prometheus metrics, for `observerctl metrics` and the
// dashboard's GET /metrics.
//
// Counters are all-time totals read from the writer's rollups (actions_daily, or actions_hourly
// where the writer keeps no daily rollup; usage_hourly), so a scrape reads thousands of rows, not
// millions; a store without the rollups is read raw. Tokens and dollars count each model turn once
// (store.TurnsSQL: from the proxy when it saw the turn); the token buckets are input (net of
// cache), output (reasoning included), cache_read and cache_creation (5-minute and 1-hour
// writes), so they add up to the turns' tokens. A counter can go down when rows are pruned or
// repriced; Prometheus treats that as a reset. Gauges: the store's size on disk (database, WAL
// and shared-memory files), the quarantined messages, and the sessions waiting for the writer's
// analysis.
//
// The text is the Prometheus text exposition format 0.0.4: a # HELP and a # TYPE line per family,
// samples sorted by their labels.
package metrics

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/observerhq/observer/pkg/store"
)

// ContentType is the media type of Write's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Label is one label of a sample.
type Label struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Sample is one value of a family.
type Sample struct {
	Labels []Label `json:"labels"`
	Value  float64 `json:"value"`
}

// Family is one metric and its samples.
type Family struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Type    string   `json:"type"` // counter or gauge
	Samples []Sample `json:"samples"`
}

// Collect reads the metrics. db may be nil (no store yet): the counters are then empty and the
// gauges 0. storePath is the database file, for its size.
func Collect(ctx context.Context, db *sql.DB, storePath string) ([]Family, error) {
	fams := []Family{
		{Name: "observer_actions_total", Type: "counter", Help: "Actions (tool calls, prompts, errors) stored, by client and action type."},
		{Name: "observer_action_failures_total", Type: "counter", Help: "Actions whose result reported an error, by client and action type."},
		{Name: "observer_turns_total", Type: "counter", Help: "Model turns, each counted once, by client and model."},
		{Name: "observer_tokens_total", Type: "counter", Help: "Tokens of the model turns by client, model and billing bucket (input net of cache, output with reasoning, cache_read, cache_creation)."},
		{Name: "observer_cost_usd_total", Type: "counter", Help: "Recorded US dollars of the model turns, by client and model."},
		{Name: "observer_sessions_total", Type: "counter", Help: "Sessions seen, by client."},
		{Name: "observer_store_size_bytes", Type: "gauge", Help: "Size of the SQLite store on disk: database, WAL and shared-memory files."},
		{Name: "observer_quarantined_messages", Type: "gauge", Help: "Bus messages the writer could not decode, kept in the quarantine table."},
		{Name: "observer_analysis_pending_sessions", Type: "gauge", Help: "Sessions whose new actions the writer has not analysed yet."},
	}
	byName := map[string]*Family{}
	for i := range fams {
		byName[fams[i].Name] = &fams[i]
	}
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(storePath + suffix); err == nil {
			size += fi.Size()
		}
	}
	byName["observer_store_size_bytes"].add(float64(size))
	if db == nil {
		byName["observer_quarantined_messages"].add(0)
		byName["observer_analysis_pending_sessions"].add(0)
		return fams, nil
	}
	tables, err := tableSet(ctx, db)
	if err != nil {
		return nil, err
	}
	// Actions.
	actions := "SELECT client, type, count(*), coalesce(sum(success = 0), 0) FROM actions GROUP BY client, type"
	var zone string
	if tables["actions_daily"] {
		db.QueryRowContext(ctx, "SELECT value FROM rollup_state WHERE key = 'zone'").Scan(&zone)
	}
	switch {
	case zone != "":
		actions = "SELECT client, type, sum(actions), sum(failures) FROM actions_daily GROUP BY client, type"
	case tables["actions_hourly"]:
		actions = "SELECT client, type, sum(actions), sum(failures) FROM actions_hourly GROUP BY client, type"
	}
	err = scan(ctx, db, actions, func(k []string, v []float64) {
		byName["observer_actions_total"].add(v[0], "client", k[0], "type", k[1])
		byName["observer_action_failures_total"].add(v[1], "client", k[0], "type", k[1])
	}, 2, 2)
	if err != nil {
		return nil, fmt.Errorf("metrics: actions: %w", err)
	}
	// Model turns.
	sums := "sum(turns), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens), sum(cost_usd)"
	turns := "SELECT client, model, " + sums + " FROM usage_hourly GROUP BY client, model"
	if !tables["usage_hourly"] {
		turns = "SELECT client, model, count(*) AS turns, " + strings.TrimPrefix(sums, "sum(turns), ") +
			" FROM (" + fmt.Sprintf(store.TurnsSQL, "1", "1") + ") GROUP BY client, model"
	}
	err = scan(ctx, db, turns, func(k []string, v []float64) {
		byName["observer_turns_total"].add(v[0], "client", k[0], "model", k[1])
		for i, b := range []string{"input", "output", "cache_read", "cache_creation"} {
			byName["observer_tokens_total"].add(v[1+i], "client", k[0], "model", k[1], "bucket", b)
		}
		byName["observer_cost_usd_total"].add(v[5], "client", k[0], "model", k[1])
	}, 2, 6, sql.Named("window", store.JoinWindowMs))
	if err != nil {
		return nil, fmt.Errorf("metrics: turns: %w", err)
	}
	err = scan(ctx, db, "SELECT client, count(*) FROM sessions GROUP BY client", func(k []string, v []float64) {
		byName["observer_sessions_total"].add(v[0], "client", k[0])
	}, 1, 1)
	if err != nil {
		return nil, fmt.Errorf("metrics: sessions: %w", err)
	}
	for name, table := range map[string]string{"observer_quarantined_messages": "quarantine", "observer_analysis_pending_sessions": "analysis_dirty"} {
		var n int64
		if tables[table] {
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return nil, fmt.Errorf("metrics: %s: %w", table, err)
			}
		}
		byName[name].add(float64(n))
	}
	for i := range fams {
		slices.SortFunc(fams[i].Samples, func(a, b Sample) int { return compareLabels(a.Labels, b.Labels) })
	}
	return fams, nil
}

func (f *Family) add(v float64, kv ...string) {
	s := Sample{Value: v, Labels: []Label{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Labels = append(s.Labels, Label{kv[i], kv[i+1]})
	}
	f.Samples = append(f.Samples, s)
}

func compareLabels(a, b []Label) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// tableSet lists the store's tables.
func tableSet(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

// scan runs q, whose rows are nk text keys then nv numbers, and hands each row to fn.
func scan(ctx context.Context, db *sql.DB, q string, fn func(keys []string, vals []float64), nk, nv int, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		keys := make([]string, nk)
		vals := make([]sql.NullFloat64, nv)
		dest := make([]any, 0, nk+nv)
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		out := make([]float64, nv)
		for i, v := range vals {
			out[i] = v.Float64
		}
		fn(keys, out)
	}
	return rows.Err()
}

// Write writes fams in the text exposition format.
func Write(w io.Writer, fams []Family) error {
	var b strings.Builder
	for _, f := range fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.Name, escape(f.Help, false), f.Name, f.Type)
		for _, s := range f.Samples {
			b.WriteString(f.Name)
			if len(s.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range s.Labels {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `%s="%s"`, l.Name, escape(l.Value, true))
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(formatValue(s.Value))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escape escapes a HELP text (backslash, newline) or a label value (and the double quote).
func escape(s string, quote bool) string {
	r := []string{`\`, `\\`, "\n", `\n`}
	if quote {
		r = append(r, `"`, `\"`)
	}
	return strings.NewReplacer(r...).Replace(s)
}

// formatValue writes whole numbers without an exponent.
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
