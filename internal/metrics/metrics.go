// Package metrics describes the store as Prometheus metrics, for `observerctl metrics` and the
// dashboard's GET /metrics.
//
// Counters are all-time totals from the read model (query.StoreCounts: the writer's rollups, so a
// scrape reads thousands of rows, not millions; a store without the rollups is read raw). Tokens
// and dollars are query.Cost's, each model turn once (from the proxy when it saw the turn); the token buckets are input (net of
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
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/observerhq/observer/internal/query"
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

// Collect turns the store's counts (query.StoreCounts) into the metrics. counts may be nil (no
// store yet): the counters are then empty and the gauges 0. storePath is the database file, for
// its size.
func Collect(counts *query.Counts, storePath string) []Family {
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
	if counts == nil {
		counts = &query.Counts{}
	}
	for _, a := range counts.Actions {
		byName["observer_actions_total"].add(float64(a.Actions), "client", a.Client, "type", a.Type)
		byName["observer_action_failures_total"].add(float64(a.Failures), "client", a.Client, "type", a.Type)
	}
	for _, t := range counts.Turns {
		byName["observer_turns_total"].add(float64(t.Turns), "client", t.Client, "model", t.Model)
		for i, v := range []int64{t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheCreationTokens} {
			byName["observer_tokens_total"].add(float64(v), "client", t.Client, "model", t.Model, "bucket", []string{"input", "output", "cache_read", "cache_creation"}[i])
		}
		byName["observer_cost_usd_total"].add(t.CostUSD, "client", t.Client, "model", t.Model)
	}
	for client, n := range counts.Sessions {
		byName["observer_sessions_total"].add(float64(n), "client", client)
	}
	byName["observer_quarantined_messages"].add(float64(counts.Quarantined))
	byName["observer_analysis_pending_sessions"].add(float64(counts.AnalysisPending))
	for i := range fams {
		slices.SortFunc(fams[i].Samples, func(a, b Sample) int { return compareLabels(a.Labels, b.Labels) })
	}
	return fams
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
