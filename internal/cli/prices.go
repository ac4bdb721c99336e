package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/pricing"
)

func pricesCommand() *cli.Command {
	return &cli.Command{
		Name:  "prices",
		Usage: "the model prices in force, and LiteLLM's price database",
		Description: `Prices come from three layers, the first that has the model wins: config.toml's
[pricing.models] overrides, then the price database (LiteLLM's model_prices_and_context_window.json,
imported with ` + "`observerctl prices update`" + `), then observer's built-in table.`,
		Subcommands: []*cli.Command{pricesUpdateCommand(), pricesShowCommand(), pricesListCommand(), pricesDiffCommand()},
	}
}

func pricesUpdateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "import LiteLLM's price database from a file or a URL",
		ArgsUsage: " ",
		Description: `Reads --from, LiteLLM's model_prices_and_context_window.json as a file path or an http(s) URL
(without --from, [pricing] url: LiteLLM's file on GitHub), checks it and keeps it as
$OBSERVER_HOME/prices/litellm.json (mode 0600, replaced atomically). The running components pick
it up within seconds, without a restart, and the writer reprices the stored rows of every model
whose price changed. Only chat and responses models are read; costs per token become USD per
million tokens.

Besides this command, only the writer goes to the network for prices: with [pricing] auto_update
(on by default) it does the same at most once per update_every (24h), keeping the last good copy;
auto_update = false leaves prices to this command.

The file is read as a stream and refused, and nothing changed, when it is larger than 64 MB (the
same size limit for a file and a URL), is not JSON, is not LiteLLM's schema, has a bad price (not
a number, negative, too large for a float), or would take a model already priced to $0 or move one
of its prices (input, output, cache read, cache writes, long-context input and output) by more
than 10x, up or down; --force imports it anyway. A move is measured from the price in force and
from the model's baseline: its built-in price, else the first price an import gave it, else the
price a forced import set (kept in $OBSERVER_HOME/prices/baselines.json), so imports just under
10x each cannot add up. A chat model priced above $10,000 per million tokens (0.01 per token, any
field) is a mistake in the file: it is left out with a warning, even with --force, and the rest
imported. What is kept is the file's chat and responses models only.

Exit codes: 0 imported; 64 a bad flag; 65 the file is refused; 1 it could not be read, fetched or
written.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the LiteLLM JSON to import: a file path or an http(s) URL (default: [pricing] url)"},
			&cli.BoolFlag{Name: "force", Usage: "import even when prices drop to $0 or move by more than 10x"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			from := c.String("from")
			if from == "" {
				from = e.cfg.Pricing.URL
			}
			if from == "" {
				return usageErr("no --from and no [pricing] url: give LiteLLM's JSON as a path or a URL")
			}
			if strings.Contains(from, "://") && !prices.IsURL(from) {
				return usageErr("--from %s: only http and https URLs are fetched", from)
			}
			if prices.IsURL(from) {
				fmt.Fprintf(e.stderr, "fetching %s\n", from)
			}
			r, err := prices.Open(c.Context, nil, from)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			rep, err := prices.ImportFrom(e.cfg.Home, r, c.Bool("force"), e.logger)
			r.Close()
			rep.From = from
			switch {
			case errors.Is(err, prices.ErrRefused):
				return withCode(ExitBadInput, fmt.Errorf("%s %s", printable(from), printableLines(err.Error())))
			case err != nil:
				return withCode(ExitFailure, fmt.Errorf("%s: %w", from, err))
			}
			for _, a := range rep.Absurd {
				fmt.Fprintf(e.stderr, "warning: left out: %s\n", printable(a))
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			if rep.Identical {
				fmt.Fprintf(e.stdout, "%s (dated %s) is already the database in force (%s); nothing changed\n", printable(from), printable(rep.Date), rep.Path)
				return nil
			}
			fmt.Fprintf(e.stdout, "imported %s (dated %s) as %s\n", printable(from), printable(rep.Date), rep.Path)
			fmt.Fprintf(e.stdout, "%d models kept (chat, responses), %d entries skipped; against the prices in force: %d new, %d changed, %d unchanged, %d no longer in the database\n",
				rep.Models, rep.Skipped, rep.Added, rep.Changed, rep.Unchanged, rep.Removed)
			if len(rep.Suspect) > 0 {
				fmt.Fprintf(e.stdout, "forced: %d models dropped to $0 or moved by more than 10x\n", len(rep.Suspect))
			}
			return nil
		},
	}
}

// priceShow is the JSON of `observerctl prices show --json`.
type priceShow struct {
	Model        string         `json:"model"`
	Known        bool           `json:"known"`
	Key          string         `json:"key,omitempty"`
	Source       string         `json:"source"` // builtin, database, override or unknown
	DatabaseDate string         `json:"database_date,omitempty"`
	Approximate  bool           `json:"approximate"`
	Price        *pricing.Price `json:"price,omitempty"` // USD per million tokens
}

func pricesShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "the price in force for a model, the key it matched and where the price comes from",
		ArgsUsage: "MODEL",
		Description: `Matches MODEL as the components do and prints its price (USD per million tokens), the key it
matched and the source of that price: override (config.toml), database (the imported LiteLLM
file, with its date) or builtin. A match by the family fallback (a deployment name around a known
model) is marked approximate. The JSON has model, known, key, source (builtin, database, override
or unknown), database_date, approximate and price (input, output, cache_read, cache_write_5m,
cache_write_1h and the long_* prices above long_context_threshold).

Exit codes: 0 the model has a price; 1 it has none (unknown); 64 a bad flag or no MODEL.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErr("prices show takes one MODEL")
			}
			set, err := prices.Load(e.cfg.Home)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			rep := showPrice(set, c.Args().First())
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
			} else if !rep.Known {
				fmt.Fprintf(e.stdout, "%s: unknown price (counted as $0)\n", printable(rep.Model))
			} else {
				src := rep.Source
				if rep.DatabaseDate != "" {
					src += " dated " + rep.DatabaseDate
				}
				approx := ""
				if rep.Approximate {
					approx = ", approximate (family fallback)"
				}
				fmt.Fprintf(e.stdout, "%s: matched %s (%s%s)\n", printable(rep.Model), printable(rep.Key), printable(src), approx)
				printPrice(e.stdout, *rep.Price)
			}
			if !rep.Known {
				return withCode(ExitFailure, errors.New(printable(rep.Model)+": unknown price"))
			}
			return nil
		},
	}
}

// showPrice says what prices model in set, and where that price comes from.
func showPrice(set *prices.Set, model string) priceShow {
	rep := priceShow{Model: model, Source: "unknown"}
	m, ok := set.Table.Resolve(model)
	if !ok {
		return rep
	}
	p, _, _ := set.Table.Lookup(model)
	rep.Known, rep.Key, rep.Approximate, rep.Price = true, m.Key, m.Approximate, &p
	_, over := set.Overrides[m.Key]
	switch {
	case over:
		rep.Source = "override"
	case set.Database != nil && hasKey(set.Database.Prices, m.Key):
		rep.Source = "database"
		rep.DatabaseDate = set.Database.Date
	default:
		rep.Source = "builtin"
	}
	return rep
}

// priceListRow is one model of `observerctl prices list --json`.
type priceListRow struct {
	priceShow
	Turns         int64   `json:"turns"`
	UnpricedTurns int64   `json:"unpriced_turns"` // stored at $0 for want of a price
	CostUSD       float64 `json:"cost_usd"`
}

func pricesListCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "the models seen in the store, each with its price source; --unpriced: those without a price",
		ArgsUsage: " ",
		Description: `Lists every model the store has turns of: its turns, their cost, the key its price matched and
where that price comes from (override, database with its date, builtin; approximate when only the
family fallback matched), or unknown. Turns of a model without a price are stored at $0 and
counted in unpriced_turns: give the model a price ([pricing.models] in config.toml, or
` + "`observerctl prices update`" + `) and the writer reprices them.

--unpriced keeps the models without a price now, and those with turns still stored unpriced.
The JSON is an array of the rows of ` + "`prices show --json`" + ` with turns, unpriced_turns and cost_usd.

Exit codes: 0 listed (also when empty); 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "unpriced", Usage: "only the models without a price"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			if c.NArg() > 0 {
				return usageErr("prices list takes no arguments (did you mean prices show %s?)", c.Args().First())
			}
			set, err := prices.Load(e.cfg.Home)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := query.Cost(c.Context, st.DB, query.CostQuery{GroupBy: []string{"model"}})
			if err != nil {
				return err
			}
			rows := listPrices(set, rep.Rows, c.Bool("unpriced"))
			if c.Bool("json") {
				writeJSON(e.stdout, rows)
				return nil
			}
			if len(rows) == 0 {
				if c.Bool("unpriced") {
					fmt.Fprintln(e.stdout, "every model seen has a price")
				} else {
					fmt.Fprintln(e.stdout, "no turns stored yet")
				}
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "MODEL\tTURNS\tUNPRICED\tCOST\tPRICED AS\tSOURCE")
			for _, r := range rows {
				key, src := r.Key, r.Source
				if !r.Known {
					key = "-"
				}
				if r.DatabaseDate != "" {
					src += " " + r.DatabaseDate
				}
				if r.Approximate {
					src += ", approximate"
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t$%.4f\t%s\t%s\n", printable(r.Model), r.Turns, r.UnpricedTurns, r.CostUSD, printable(key), printable(src))
			}
			tw.Flush()
			return nil
		},
	}
}

// listPrices says how set prices each model of rows (cost rows grouped by model), keeping only the
// unpriced ones when unpriced: no price now, or turns still stored without one.
func listPrices(set *prices.Set, rows []query.CostRow, unpriced bool) []priceListRow {
	out := []priceListRow{}
	for _, r := range rows {
		if r.Model == "" {
			continue
		}
		l := priceListRow{priceShow: showPrice(set, r.Model), Turns: r.Turns, UnpricedTurns: r.UnpricedTurns, CostUSD: r.CostUSD}
		if unpriced && l.Known && l.UnpricedTurns == 0 {
			continue
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Known != out[j].Known {
			return !out[i].Known
		}
		return out[i].Model < out[j].Model
	})
	return out
}

func hasKey(m map[string]pricing.Price, k string) bool { _, ok := m[k]; return ok }

func printPrice(w interface{ Write([]byte) (int, error) }, p pricing.Price) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  input\t%g\n  output\t%g\n  cache read\t%g\n  cache write 5m\t%g\n  cache write 1h\t%g\n",
		p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h)
	if p.LongContextThreshold > 0 {
		fmt.Fprintf(tw, "  above %d prompt tokens\tinput %g, output %g, cache read %g, cache write 5m %g, 1h %g\n",
			p.LongContextThreshold, p.LongInput, p.LongOutput, p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h)
	}
	fmt.Fprintln(tw, "  (USD per million tokens)")
	tw.Flush()
}

// priceDiff is one model of `observerctl prices diff`.
type priceDiff struct {
	Model    string        `json:"model"`
	Builtin  pricing.Price `json:"builtin"`
	Database pricing.Price `json:"database"`
}

// pricesDiffReport is the JSON of `observerctl prices diff --json`.
type pricesDiffReport struct {
	DatabaseDate string      `json:"database_date"`
	Differ       []priceDiff `json:"differ"`
	Same         int         `json:"same"`
	DatabaseOnly int         `json:"database_only"`
	BuiltinOnly  int         `json:"builtin_only"`
}

func pricesDiffCommand() *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "the models whose price differs between the price database and the built-in table",
		Description: `Compares the imported LiteLLM database with observer's built-in table, key by key (current
prices; config.toml overrides are not part of it), and lists the models both have at different
prices, with their input and output prices. It also counts the models priced alike and those only
one of them has. The JSON has database_date, differ (model, builtin, database: full prices),
same, database_only and builtin_only.

Exit codes: 0 done; 64 a bad flag; 69 no price database (run ` + "`observerctl prices update --from FILE`" + `); 1 it
does not load.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			db, err := prices.LoadDatabase(e.cfg.Home)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if db == nil {
				return withCode(ExitUnavailable, fmt.Errorf("no price database at %s: import one with `observerctl prices update --from FILE`", prices.DatabasePath(e.cfg.Home)))
			}
			rep := diffPrices(pricing.Default(), db)
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			fmt.Fprintf(e.stdout, "price database dated %s against the built-in table (USD per million tokens)\n", printable(rep.DatabaseDate))
			if len(rep.Differ) > 0 {
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "MODEL\tBUILT-IN IN/OUT\tDATABASE IN/OUT\tDIFFER IN")
				for _, d := range rep.Differ {
					fmt.Fprintf(tw, "%s\t%g/%g\t%g/%g\t%s\n", printable(d.Model), d.Builtin.Input, d.Builtin.Output,
						d.Database.Input, d.Database.Output, strings.Join(priceFieldsDiffer(d.Builtin, d.Database), " "))
				}
				tw.Flush()
			}
			fmt.Fprintf(e.stdout, "%d differ, %d the same, %d only in the database, %d only built in\n",
				len(rep.Differ), rep.Same, rep.DatabaseOnly, rep.BuiltinOnly)
			return nil
		},
	}
}

func diffPrices(builtin *pricing.Table, db *prices.Database) pricesDiffReport {
	rep := pricesDiffReport{DatabaseDate: db.Date, Differ: []priceDiff{}}
	for _, k := range sortedKeys(db.Prices) {
		b, ok := builtin.Exact(k)
		switch {
		case !ok:
			rep.DatabaseOnly++
		case b == db.Prices[k]:
			rep.Same++
		default:
			rep.Differ = append(rep.Differ, priceDiff{Model: k, Builtin: b, Database: db.Prices[k]})
		}
	}
	for _, k := range builtin.Models() {
		if !hasKey(db.Prices, k) {
			rep.BuiltinOnly++
		}
	}
	return rep
}

// priceFieldsDiffer names the fields (config.toml's names) in which a and b differ.
func priceFieldsDiffer(a, b pricing.Price) []string {
	var out []string
	for _, f := range []struct {
		name string
		a, b float64
	}{{"input", a.Input, b.Input}, {"output", a.Output, b.Output}, {"cache_read", a.CacheRead, b.CacheRead},
		{"cache_write_5m", a.CacheWrite5m, b.CacheWrite5m}, {"cache_write_1h", a.CacheWrite1h, b.CacheWrite1h},
		{"long_context_threshold", float64(a.LongContextThreshold), float64(b.LongContextThreshold)},
		{"long_input", a.LongInput, b.LongInput}, {"long_output", a.LongOutput, b.LongOutput},
		{"long_cache_read", a.LongCacheRead, b.LongCacheRead}, {"long_cache_write_5m", a.LongCacheWrite5m, b.LongCacheWrite5m},
		{"long_cache_write_1h", a.LongCacheWrite1h, b.LongCacheWrite1h}} {
		if f.a != f.b {
			out = append(out, f.name)
		}
	}
	return out
}

func sortedKeys(m map[string]pricing.Price) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printableLines is printable for each line of s, keeping the line breaks.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return strings.Join(lines, "\n")
}

// printable is s with its control characters (C0, DEL, C1), and bytes that are not UTF-8, written
// as Go escapes (\x1b, \u009b): a model name or a date from a price file or the store is printed
// to a terminal, which must not take it for a command. Tabs and newlines are escaped too, so that
// a name stays on its row.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
