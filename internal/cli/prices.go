package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/pricing"
)

func pricesCommand() *cli.Command {
	return &cli.Command{
		Name:  "prices",
		Usage: "the model prices in force, and LiteLLM's price database",
		Description: `Prices come from three layers, the first that has the model wins: config.toml's
[pricing.models] overrides, then the price database (LiteLLM's model_prices_and_context_window.json,
imported with ` + "`observerctl prices update`" + `), then observer's built-in table.`,
		Subcommands: []*cli.Command{pricesUpdateCommand(), pricesShowCommand(), pricesDiffCommand()},
	}
}

// pricesUpdateReport is the JSON of `observerctl prices update --json`.
type pricesUpdateReport struct {
	Path      string   `json:"path"`
	Date      string   `json:"date"`
	Entries   int      `json:"entries"`
	Models    int      `json:"models"`
	Skipped   int      `json:"skipped"`
	Added     int      `json:"added"`
	Changed   int      `json:"changed"`
	Unchanged int      `json:"unchanged"`
	Removed   int      `json:"removed"`
	Suspect   []string `json:"suspect,omitempty"`
	Forced    bool     `json:"forced,omitempty"`
}

func pricesUpdateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "import LiteLLM's price database from a file",
		ArgsUsage: " ",
		Description: `Reads --from, a copy of LiteLLM's model_prices_and_context_window.json, checks it and keeps it as
$OBSERVER_HOME/prices/litellm.json (mode 0600, replaced atomically). The running components pick
it up within seconds, without a restart, and the writer reprices the stored rows of every model
whose price changed. Only chat and responses models are read; costs per token become USD per
million tokens.

--from takes a file path only: fetching the file from a URL is not supported yet, and observer
never goes to the network for prices.

The file is refused, and nothing changed, when it is not JSON, is not LiteLLM's schema, has a bad
price, or would take a model already priced (by the built-in table or the database in force) to $0
or move its input or output price by more than 10x; --force imports it anyway.

Exit codes: 0 imported; 64 a bad flag (no --from, a URL); 65 the file is refused; 1 it could not be
read or written.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the LiteLLM JSON file to import (a path; URLs are not supported yet)"},
			&cli.BoolFlag{Name: "force", Usage: "import even when prices drop to $0 or move by more than 10x"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			from := c.String("from")
			switch {
			case from == "":
				return usageErr("--from FILE is required (LiteLLM's model_prices_and_context_window.json)")
			case strings.Contains(from, "://"):
				return usageErr("--from %s: a URL is not supported yet; download the file and give its path", from)
			}
			data, err := os.ReadFile(from)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			db, err := pricing.ParseLiteLLM(data)
			if err != nil {
				return withCode(ExitBadInput, fmt.Errorf("%s refused, nothing changed: %w", from, err))
			}
			old, err := prices.LoadDatabase(e.cfg.Home)
			if err != nil {
				e.logger.Warn("the price database in force does not load; comparing with the built-in table", "err", err)
				old = nil
			}
			base := pricing.Default()
			if old != nil {
				base = base.WithDatabase(old.Prices)
			}
			rep := pricesUpdateReport{Path: prices.DatabasePath(e.cfg.Home), Date: db.Updated, Entries: db.Entries,
				Models: len(db.Prices), Skipped: db.Skipped, Forced: c.Bool("force")}
			for _, k := range sortedKeys(db.Prices) {
				p := db.Prices[k]
				was, ok := base.Exact(k)
				switch {
				case !ok:
					rep.Added++
				case was == p:
					rep.Unchanged++
				default:
					rep.Changed++
					if why := suspectMove(was, p); why != "" {
						rep.Suspect = append(rep.Suspect, k+": "+why)
					}
				}
			}
			if old != nil {
				for k := range old.Prices {
					if _, ok := db.Prices[k]; !ok {
						rep.Removed++
					}
				}
			}
			if len(rep.Suspect) > 0 && !c.Bool("force") {
				list := rep.Suspect
				if len(list) > 20 {
					list = append(list[:20:20], fmt.Sprintf("and %d more", len(rep.Suspect)-20))
				}
				return withCode(ExitBadInput, fmt.Errorf("%s refused, nothing changed: %d models already priced would drop to $0 or move by more than 10x (--force imports it anyway):\n  %s",
					from, len(rep.Suspect), strings.Join(list, "\n  ")))
			}
			if err := writeFileAtomic(rep.Path, data); err != nil {
				return withCode(ExitFailure, err)
			}
			if rep.Date == "" {
				if d, err := prices.LoadDatabase(e.cfg.Home); err == nil && d != nil {
					rep.Date = d.Date
				}
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			fmt.Fprintf(e.stdout, "imported %s (dated %s) as %s\n", from, rep.Date, rep.Path)
			fmt.Fprintf(e.stdout, "%d models kept (chat, responses), %d entries skipped; against the prices in force: %d new, %d changed, %d unchanged, %d no longer in the database\n",
				rep.Models, rep.Skipped, rep.Added, rep.Changed, rep.Unchanged, rep.Removed)
			if len(rep.Suspect) > 0 {
				fmt.Fprintf(e.stdout, "forced: %d models dropped to $0 or moved by more than 10x\n", len(rep.Suspect))
			}
			return nil
		},
	}
}

// suspectMove says why the move from was to now looks wrong: a priced model at $0, or an input or
// output price moved by more than 10x. "" when it does not.
func suspectMove(was, now pricing.Price) string {
	if (was.Input > 0 || was.Output > 0) && now.Input == 0 && now.Output == 0 {
		return fmt.Sprintf("input/output $%g/$%g -> $0", was.Input, was.Output)
	}
	for _, f := range []struct {
		name     string
		was, now float64
	}{{"input", was.Input, now.Input}, {"output", was.Output, now.Output}} {
		if f.was > 0 && (f.now > 10*f.was || f.now*10 < f.was) {
			return fmt.Sprintf("%s $%g -> $%g per million tokens", f.name, f.was, f.now)
		}
	}
	return ""
}

// writeFileAtomic replaces path with data, mode 0600, through a temporary file renamed over it.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // gone after the rename; cleans up after a failure
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, path)
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
				fmt.Fprintf(e.stdout, "%s: unknown price (counted as $0)\n", rep.Model)
			} else {
				src := rep.Source
				if rep.DatabaseDate != "" {
					src += " dated " + rep.DatabaseDate
				}
				approx := ""
				if rep.Approximate {
					approx = ", approximate (family fallback)"
				}
				fmt.Fprintf(e.stdout, "%s: matched %s (%s%s)\n", rep.Model, rep.Key, src, approx)
				printPrice(e.stdout, *rep.Price)
			}
			if !rep.Known {
				return withCode(ExitFailure, errors.New(rep.Model+": unknown price"))
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
			fmt.Fprintf(e.stdout, "price database dated %s against the built-in table (USD per million tokens)\n", rep.DatabaseDate)
			if len(rep.Differ) > 0 {
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "MODEL\tBUILT-IN IN/OUT\tDATABASE IN/OUT\tDIFFER IN")
				for _, d := range rep.Differ {
					fmt.Fprintf(tw, "%s\t%g/%g\t%g/%g\t%s\n", d.Model, d.Builtin.Input, d.Builtin.Output,
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
