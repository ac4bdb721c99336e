package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/metrics"
	"github.com/observerhq/observer/internal/query"
)

func metricsCommand() *cli.Command {
	return &cli.Command{
		Name:  "metrics",
		Usage: "the store's totals as Prometheus metrics",
		Description: `Prints the metrics the dashboard serves on GET /metrics, in the Prometheus text exposition format
(# HELP and # TYPE lines, then the samples): counters observer_actions_total{client,type},
observer_action_failures_total{client,type}, observer_turns_total{client,model},
observer_tokens_total{client,model,bucket} (bucket: input, output, cache_read, cache_creation),
observer_cost_usd_total{client,model} and observer_sessions_total{client}, all time; gauges
observer_store_size_bytes, observer_quarantined_messages and observer_analysis_pending_sessions.
Counters come from the writer's hourly and daily rollups, so this is fast on a large store.
Redirect it into node_exporter's textfile directory to scrape it without the dashboard.

--json prints the same families as JSON: name, help, type, samples [{labels [{name, value}], value}].

Exit codes: 0 done; 64 a bad flag; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			counts, err := query.StoreCounts(c.Context, st.DB)
			if err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
			fams := metrics.Collect(counts, st.Path())
			if c.Bool("json") {
				writeJSON(e.stdout, fams)
				return nil
			}
			return metrics.Write(e.stdout, fams)
		},
	}
}
