// Updating the price database: reading LiteLLM's file from a path or a URL, checking it against
// the prices in force, and keeping it under $OBSERVER_HOME/prices. `observerctl prices update`
// does it on request, an AutoUpdater (the writer, when [pricing] auto_update is on) once a day.
// Nothing else in observer reaches the network for prices.

package prices

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/pricing"
)

// DefaultURL is LiteLLM's price database on GitHub, what `prices update` fetches without --from.
const DefaultURL = config.DefaultPricingURL

// MaxDatabaseBytes bounds a fetched database (LiteLLM's is about 1.5 MB).
const MaxDatabaseBytes = 64 << 20

// FetchTimeout bounds one fetch, connection to last byte.
const FetchTimeout = 60 * time.Second

// IsURL reports whether from names a URL rather than a file.
func IsURL(from string) bool {
	return strings.HasPrefix(from, "https://") || strings.HasPrefix(from, "http://")
}

// Fetch reads the database at url: an HTTP 200 answer of at most MaxDatabaseBytes, within
// FetchTimeout (or ctx's deadline). client may be nil (http.DefaultClient).
func Fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "observer-prices")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxDatabaseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if len(data) > MaxDatabaseBytes {
		return nil, fmt.Errorf("fetch %s: larger than %d MB", url, MaxDatabaseBytes>>20)
	}
	return data, nil
}

// Read reads the database from a file path or, for an http(s) URL, fetches it.
func Read(ctx context.Context, client *http.Client, from string) ([]byte, error) {
	if IsURL(from) {
		return Fetch(ctx, client, from)
	}
	return os.ReadFile(from)
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
	Forced    bool     `json:"forced,omitempty"`
	// Identical is true when the file is byte for byte the database in force (nothing written).
	Identical bool `json:"identical,omitempty"`
}

// ErrRefused wraps every reason Import refuses a file; nothing was changed.
var ErrRefused = errors.New("refused, nothing changed")

// Import checks data, LiteLLM's JSON, against the prices in force (the built-in table under home's
// current database) and keeps it as home's database. It refuses (an error wrapping ErrRefused) a
// file that does not parse, is not LiteLLM's schema, or would take an already priced model to $0
// or move its input or output price by more than 10x, unless force. The components in force pick
// the new file up without a restart (Follower.Check). logger may be nil.
func Import(home string, data []byte, force bool, logger *slog.Logger) (UpdateReport, error) {
	rep := UpdateReport{Path: DatabasePath(home), Forced: force}
	db, err := pricing.ParseLiteLLM(data)
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
	base := pricing.Default()
	if old != nil {
		base = base.WithDatabase(old.Prices)
	}
	rep.Date, rep.Entries, rep.Models, rep.Skipped = db.Updated, db.Entries, len(db.Prices), db.Skipped
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
	if len(rep.Suspect) > 0 && !force {
		list := rep.Suspect
		if len(list) > 20 {
			list = append(list[:20:20], fmt.Sprintf("and %d more", len(rep.Suspect)-20))
		}
		return rep, fmt.Errorf("%w: %d models already priced would drop to $0 or move by more than 10x (--force imports it anyway):\n  %s",
			ErrRefused, len(rep.Suspect), strings.Join(list, "\n  "))
	}
	if cur, err := os.ReadFile(rep.Path); err == nil && string(cur) == string(data) {
		rep.Identical = true
	} else {
		if err := os.MkdirAll(DatabaseDir(home), 0o700); err != nil {
			return rep, err
		}
		if err := atomicfile.Write(rep.Path, data, 0o600); err != nil {
			return rep, err
		}
	}
	if rep.Date == "" {
		if d, err := LoadDatabase(home); err == nil && d != nil {
			rep.Date = d.Date
		}
	}
	return rep, nil
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
	data, err := Fetch(ctx, u.Client, u.URL)
	if err != nil {
		return err
	}
	rep, err := Import(u.Home, data, false, u.Logger)
	if err != nil {
		return err
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
