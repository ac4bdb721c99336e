// Updating the price database: reading LiteLLM's file from a path or a URL, checking it against
// the prices in force, and keeping it under $OBSERVER_HOME/prices. `observerctl prices update`
// does it on request, an AutoUpdater (the writer, when [pricing] auto_update is on) once a day.
// Nothing else in observer reaches the network for prices.

package prices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/pricing"
)

// DefaultURL is LiteLLM's price database on GitHub, what `prices update` fetches without --from.
const DefaultURL = config.DefaultPricingURL

// MaxDatabaseBytes is the size limit of a price file, from a path or a URL alike
// (pricing.MaxLiteLLMBytes, 64 MB; LiteLLM's is about 1.5 MB): a longer one is refused while it
// is read.
const MaxDatabaseBytes = pricing.MaxLiteLLMBytes

// FetchTimeout bounds one fetch, connection to last byte.
const FetchTimeout = 60 * time.Second

// IsURL reports whether from names a URL rather than a file.
func IsURL(from string) bool {
	return strings.HasPrefix(from, "https://") || strings.HasPrefix(from, "http://")
}

// Fetch reads the database at url: an HTTP 200 answer of at most MaxDatabaseBytes, within
// FetchTimeout (or ctx's deadline). client may be nil (http.DefaultClient).
func Fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	r, err := Open(ctx, client, url)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxDatabaseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if len(data) > MaxDatabaseBytes {
		return nil, fmt.Errorf("fetch %s: %w", url, pricing.ErrTooLarge)
	}
	return data, nil
}

// Open opens the database at from, a file path or an http(s) URL (an HTTP 200 answer, read
// within FetchTimeout or ctx's deadline), for ImportFrom to stream. client may be nil
// (http.DefaultClient).
func Open(ctx context.Context, client *http.Client, from string) (io.ReadCloser, error) {
	if !IsURL(from) {
		return os.Open(from)
	}
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("User-Agent", "observer-prices")
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("fetch %s: %w", from, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("fetch %s: %s", from, resp.Status)
	}
	return &body{ReadCloser: resp.Body, cancel: cancel}, nil
}

// body is an HTTP answer's body that ends its request's context when closed.
type body struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// UpdateReport is what an import found: the JSON of `observerctl prices update --json`.
type UpdateReport struct {
	From      string   `json:"from"`
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
	// Absurd are the chat models left out for a price above pricing.MaxPricePerMillion.
	Absurd []string `json:"absurd,omitempty"`
	Forced bool     `json:"forced,omitempty"`
	// Identical is true when the file installs as byte for byte the database in force (nothing
	// written).
	Identical bool `json:"identical,omitempty"`
}

// ErrRefused wraps every reason Import refuses a file; nothing was changed.
var ErrRefused = errors.New("refused, nothing changed")

// Import is ImportFrom for a file already in memory.
func Import(home string, data []byte, force bool, logger *slog.Logger) (UpdateReport, error) {
	return ImportFrom(home, bytes.NewReader(data), force, logger)
}

// source remembers the first error reading an import's input: a read that failed is not a
// refused file.
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// ImportFrom reads LiteLLM's JSON from r (streamed, at most MaxDatabaseBytes), checks it against
// the prices in force and keeps it as home's database. It refuses (an error wrapping ErrRefused) a
// file that is too large, does not parse, is not LiteLLM's schema, or would take an already
// priced model to $0 or move one of its prices (input, output, cache read, cache writes, long
// input and output) by more than 10x, up or down, unless force. A move is measured both from the
// price in force and from the model's baseline (see Baselines): a run of imports just under 10x
// each is refused once the total passes 10x. Chat models priced above
// pricing.MaxPricePerMillion are left out whatever force says (UpdateReport.Absurd).
//
// What is kept is the file's kept models only (pricing.Database.MarshalLiteLLM): the components
// that load it read that, not the imported file. They pick it up without a restart
// (Follower.Check). logger may be nil.
func ImportFrom(home string, r io.Reader, force bool, logger *slog.Logger) (UpdateReport, error) {
	rep := UpdateReport{Path: DatabasePath(home), Forced: force}
	src := &source{r: r}
	db, err := pricing.DecodeLiteLLM(src)
	if src.err != nil {
		return rep, fmt.Errorf("read: %w", src.err)
	}
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	installed, err := db.MarshalLiteLLM()
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	old, err := LoadDatabase(home)
	if err != nil {
		if logger != nil {
			logger.Warn("the price database in force does not load; comparing with the built-in table", "err", err)
		}
		old = nil
	}
	builtin := pricing.Default()
	base := builtin
	if old != nil {
		base = base.WithDatabase(old.Prices)
	}
	anchors, err := readBaselines(home)
	if err != nil && logger != nil {
		logger.Warn("price baselines unreadable; comparing with the built-in table and the prices in force", "err", err)
	}
	rep.Date, rep.Entries, rep.Models, rep.Skipped, rep.Absurd = db.Updated, db.Entries, len(db.Prices), db.Skipped, db.Absurd
	forced := map[string]pricing.Price{}
	for _, k := range slices.Sorted(maps.Keys(db.Prices)) {
		p := db.Prices[k]
		was, ok := base.Exact(k)
		switch {
		case !ok:
			rep.Added++
		case was == p:
			rep.Unchanged++
		default:
			rep.Changed++
		}
		why := ""
		if ok {
			why = suspectMove("in force", was, p)
		}
		if a, aok := anchor(builtin, anchors, k); aok && why == "" {
			why = suspectMove("baseline", a, p)
		}
		if why != "" {
			rep.Suspect = append(rep.Suspect, fmt.Sprintf("%q: %s", k, why))
			forced[k] = p
		}
	}
	if old != nil {
		for k := range old.Prices {
			if _, ok := db.Prices[k]; !ok {
				rep.Removed++
			}
		}
	}
	if len(rep.Suspect) > 0 && !force {
		list := rep.Suspect
		if len(list) > 20 {
			list = append(list[:20:20], fmt.Sprintf("and %d more", len(rep.Suspect)-20))
		}
		return rep, fmt.Errorf("%w: %d models already priced would drop to $0 or move by more than 10x (--force imports it anyway):\n  %s",
			ErrRefused, len(rep.Suspect), strings.Join(list, "\n  "))
	}
	if err := os.MkdirAll(DatabaseDir(home), 0o700); err != nil {
		return rep, err
	}
	// The baselines first: a database in force is never without them.
	if err := writeBaselines(home, builtin, anchors, db.Prices, forced); err != nil {
		return rep, err
	}
	if cur, err := os.ReadFile(rep.Path); err == nil && bytes.Equal(cur, installed) {
		rep.Identical = true
	} else if err := atomicfile.Write(rep.Path, installed, 0o600); err != nil {
		return rep, err
	}
	if rep.Date == "" {
		if d, err := LoadDatabase(home); err == nil && d != nil {
			rep.Date = d.Date
		}
	}
	return rep, nil
}

// BaselinesPath is the file of home's price baselines, beside the database.
func BaselinesPath(home string) string { return filepath.Join(DatabaseDir(home), "baselines.json") }

// Baselines: the 10x guard of an import measures each model's move from the price in force and
// from its baseline, so that it cannot be walked up (or down) by imports just under 10x each.
// A model's baseline is its price in the built-in table; for a model the built-in table lacks, the
// first price an import gave it; for a model whose move an import was forced past the guard, the
// forced price (the user accepted it). They are kept in BaselinesPath, written before the database.

// anchor is model k's baseline.
func anchor(builtin *pricing.Table, anchors map[string]pricing.Price, k string) (pricing.Price, bool) {
	if p, ok := anchors[k]; ok {
		return p, true
	}
	return builtin.Exact(k)
}

func readBaselines(home string) (map[string]pricing.Price, error) {
	b, err := os.ReadFile(BaselinesPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]pricing.Price{}, nil
	}
	if err != nil {
		return map[string]pricing.Price{}, err
	}
	var v struct {
		Models map[string]json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return map[string]pricing.Price{}, fmt.Errorf("%s: %w", BaselinesPath(home), err)
	}
	m := make(map[string]pricing.Price, len(v.Models))
	for k, raw := range v.Models {
		var p pricing.Price
		if json.Unmarshal(raw, &p) == nil && p.Sane() {
			m[k] = p
		}
	}
	return m, nil
}

// writeBaselines adds to anchors the first price of every model of prices without a baseline, and
// the forced ones, and writes them when that changed something.
func writeBaselines(home string, builtin *pricing.Table, anchors, prices, forced map[string]pricing.Price) error {
	next := maps.Clone(anchors)
	for k, p := range prices {
		if _, ok := anchor(builtin, next, k); !ok {
			next[k] = p
		}
	}
	maps.Copy(next, forced)
	if maps.Equal(next, anchors) {
		return nil
	}
	b, err := json.MarshalIndent(struct {
		Models map[string]pricing.Price `json:"models"`
	}{next}, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(BaselinesPath(home), b, 0o600)
}

// suspectMove says why the move from was (the price "in force" or the model's "baseline") to now
// looks wrong: a priced model at $0, or a price moved by more than 10x, up or down. The cache and
// long prices are compared only where both are above 0 (a file that leaves a cache price out
// gives 0). "" when it does not.
func suspectMove(from string, was, now pricing.Price) string {
	if (was.Input > 0 || was.Output > 0) && now.Input == 0 && now.Output == 0 {
		return fmt.Sprintf("input/output $%g/$%g (%s) -> $0", was.Input, was.Output, from)
	}
	for _, f := range []struct {
		name     string
		was, now float64
		both     bool
	}{{"input", was.Input, now.Input, false}, {"output", was.Output, now.Output, false},
		{"cache_read", was.CacheRead, now.CacheRead, true}, {"cache_write_5m", was.CacheWrite5m, now.CacheWrite5m, true},
		{"cache_write_1h", was.CacheWrite1h, now.CacheWrite1h, true},
		{"long_input", was.LongInput, now.LongInput, true}, {"long_output", was.LongOutput, now.LongOutput, true}} {
		if f.both && f.now == 0 {
			continue
		}
		if f.was > 0 && (f.now > 10*f.was || f.now*10 < f.was) {
			return fmt.Sprintf("%s $%g (%s) -> $%g per million tokens", f.name, f.was, from, f.now)
		}
	}
	return ""
}

// AutoUpdater fetches the database from URL when home's copy is older than Every (or missing),
// then looks again every Every; a failed fetch or a refused file is logged and tried again after
// Retry. It runs only where [pricing] auto_update is on.
type AutoUpdater struct {
	Home   string
	URL    string
	Every  time.Duration // the age at which the copy is refreshed; 24h when zero
	Retry  time.Duration // the wait after a failure; 1h when zero
	Client *http.Client  // nil: http.DefaultClient
	Logger *slog.Logger
}

// Run updates until ctx ends.
func (u *AutoUpdater) Run(ctx context.Context) {
	every, retry := u.Every, u.Retry
	if every <= 0 {
		every = 24 * time.Hour
	}
	if retry <= 0 {
		retry = time.Hour
	}
	logger := u.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for {
		wait := every
		if fi, err := os.Stat(DatabasePath(u.Home)); err == nil && time.Since(fi.ModTime()) < every {
			wait = every - time.Since(fi.ModTime())
		} else if err := u.Once(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			logger.Warn("price database not updated", "url", u.URL, "err", err, "retry_in", retry.String())
			wait = retry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Once fetches and imports the database now (never forced).
func (u *AutoUpdater) Once(ctx context.Context) error {
	r, err := Open(ctx, u.Client, u.URL)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := ImportFrom(u.Home, r, false, u.Logger)
	if err != nil {
		return err
	}
	if len(rep.Absurd) > 0 && u.Logger != nil {
		u.Logger.Warn("price database: models left out for an absurd price", "url", u.URL, "models", strings.Join(rep.Absurd, "; "))
	}
	if rep.Identical {
		// Same bytes: touch it so its age says when it was last checked.
		now := time.Now()
		_ = os.Chtimes(rep.Path, now, now)
	}
	if u.Logger != nil {
		u.Logger.Info("price database updated", "url", u.URL, "date", rep.Date, "models", rep.Models,
			"added", rep.Added, "changed", rep.Changed, "removed", rep.Removed)
	}
	return nil
}
