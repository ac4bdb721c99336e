// Package prices gives observer's processes the price table that config.toml's [pricing] models
// (and OBSERVER_PRICING_MODELS) ask for, and keeps it in step with the file without a restart.
//
// A Set is pkg/pricing's built-in table with the overrides applied (Table.WithOverrides): each
// override replaces a model's price, history included, or adds a model. Every override is checked
// with pricing.Price.Valid; a bad one is a configuration error that names the model.
//
// A Follower holds the current Set behind an atomic pointer. Run polls config.toml every Interval
// and reloads it when its modification time or size changed; a file that does not load (bad TOML,
// an unknown key, a bad price) leaves the last good Set in force and logs a warning once per
// change of the file. Polling, not file notifications: editors and the dashboard replace the file
// by renaming a new one over it, which a watch on the file itself misses, and a stat every few
// seconds costs nothing. The proxy prices turns with Follower.Cost, the transcript readers take
// Follower.Table, and the writer re-prices stored rows when the overrides change (see
// internal/writer).
package prices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// Interval is how often a Follower looks at config.toml by default.
const Interval = 2 * time.Second

// settle is how long config.toml must have stayed unchanged before a Follower reads it.
const settle = 250 * time.Millisecond

// Set is one price table and the overrides (and price database) it was built from.
type Set struct {
	// Overrides are the models config.toml prices itself, keyed by their lower-case name.
	Overrides map[string]pricing.Price
	// Database is the LiteLLM price database in force ($OBSERVER_HOME/prices/litellm.json), nil
	// when there is none.
	Database *Database
	// Table is pricing.Default(), then Database, then Overrides applied: an override wins over the
	// database, which wins over the built-in table.
	Table *pricing.Table
}

// Database is the price database a Set was built with.
type Database struct {
	// Prices are its models (pricing.Database.Prices).
	Prices map[string]pricing.Price `json:"models"`
	// Date is the file's own last_updated stamp, else the day it was imported.
	Date string `json:"date"`
}

// Validate checks every override: a name that is not empty and a pricing.Price.Valid price. The
// error names each bad model.
func Validate(models map[string]pricing.Price) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(models)) {
		p := models[name]
		switch {
		case strings.TrimSpace(name) == "":
			errs = append(errs, errors.New(`[pricing.models.""]: a price override needs a model name`))
		case !p.Valid():
			errs = append(errs, fmt.Errorf("[pricing.models.%q]: %s", name, problem(p)))
		}
	}
	return errors.Join(errs...)
}

// problem says what makes a price not pricing.Price.Valid, in config.toml's key names.
func problem(p pricing.Price) string {
	var bad []string
	for _, f := range []struct {
		key string
		v   float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write_5m", p.CacheWrite5m},
		{"cache_write_1h", p.CacheWrite1h}, {"long_input", p.LongInput}, {"long_output", p.LongOutput},
		{"long_cache_read", p.LongCacheRead}, {"long_cache_write_5m", p.LongCacheWrite5m}, {"long_cache_write_1h", p.LongCacheWrite1h}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			bad = append(bad, fmt.Sprintf("%s = %v", f.key, f.v))
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, ", ") + ": prices must be numbers >= 0 (USD per million tokens)"
	}
	if p.LongContextThreshold < 0 {
		return fmt.Sprintf("long_context_threshold = %d must not be negative", p.LongContextThreshold)
	}
	return "long_context_threshold needs long_input and long_output (the prices above the threshold)"
}

// Build validates the overrides and applies them to the built-in table.
func Build(models map[string]pricing.Price) (*Set, error) {
	return BuildWith(models, nil)
}

// BuildWith validates the overrides and applies the database (which may be nil), then the
// overrides, to the built-in table. A database price that is not pricing.Price.Sane (not a
// number, negative, above pricing.MaxPricePerMillion: nothing an import lets in) is left out.
func BuildWith(models map[string]pricing.Price, db *Database) (*Set, error) {
	if err := Validate(models); err != nil {
		return nil, err
	}
	s := &Set{Overrides: make(map[string]pricing.Price, len(models)), Database: saneDatabase(db)}
	for name, p := range models {
		s.Overrides[strings.ToLower(strings.TrimSpace(name))] = p
	}
	t := pricing.Default()
	if s.Database != nil {
		t = t.WithDatabase(s.Database.Prices)
	}
	s.Table = t.WithOverrides(s.Overrides)
	return s, nil
}

// saneDatabase is db without the prices that are not pricing.Price.Sane (db itself when all are).
func saneDatabase(db *Database) *Database {
	if db == nil {
		return nil
	}
	for _, p := range db.Prices {
		if !p.Sane() {
			clean := &Database{Prices: make(map[string]pricing.Price, len(db.Prices)), Date: db.Date}
			for k, p := range db.Prices {
				if p.Sane() {
					clean.Prices[k] = p
				}
			}
			return clean
		}
	}
	return db
}

// dbKeyPrefix starts the Key of a Set with a price database; a Key without it is overrides only.
const dbKeyPrefix = "litellm:"

// Key is the overrides (and the database, when there is one) in a canonical text form (JSON,
// names sorted): two Sets price alike when their keys are equal. The writer stores it to remember
// which prices its rows carry. Without a database it is the overrides' JSON, as before databases.
// The prices of a Set from Build are finite numbers: their JSON cannot fail.
func (s *Set) Key() string {
	if s.Database != nil {
		b, _ := json.Marshal(struct {
			Overrides map[string]pricing.Price `json:"overrides"`
			Database  *Database                `json:"database"`
		}{s.Overrides, s.Database})
		return dbKeyPrefix + string(b)
	}
	if len(s.Overrides) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(s.Overrides) // a map of plain structs: cannot fail; keys come out sorted
	return string(b)
}

// ParseKey reads a Key back into a Set. One bad price in it (not JSON of a price, or not valid)
// leaves that model out, named in skipped, and the rest is read: the error is for a key that is
// not a Key at all.
func ParseKey(key string) (set *Set, skipped []string, err error) {
	var overrides map[string]json.RawMessage
	var db *struct {
		Prices map[string]json.RawMessage `json:"models"`
		Date   string                     `json:"date"`
	}
	if rest, ok := strings.CutPrefix(key, dbKeyPrefix); ok {
		var v struct {
			Overrides map[string]json.RawMessage `json:"overrides"`
			Database  *struct {
				Prices map[string]json.RawMessage `json:"models"`
				Date   string                     `json:"date"`
			} `json:"database"`
		}
		if err := json.Unmarshal([]byte(rest), &v); err != nil {
			return nil, nil, fmt.Errorf("recorded prices: %w", err)
		}
		overrides, db = v.Overrides, v.Database
	} else if err := json.Unmarshal([]byte(key), &overrides); err != nil {
		return nil, nil, fmt.Errorf("price overrides %q: %w", key, err)
	}
	read := func(what string, raw map[string]json.RawMessage, ok func(string, pricing.Price) bool) map[string]pricing.Price {
		m := make(map[string]pricing.Price, len(raw))
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			var p pricing.Price
			if err := json.Unmarshal(raw[k], &p); err != nil || !ok(k, p) {
				skipped = append(skipped, what+" "+strconv.Quote(k))
				continue
			}
			m[k] = p
		}
		return m
	}
	models := read("override", overrides, func(k string, p pricing.Price) bool {
		return strings.TrimSpace(k) != "" && p.Valid()
	})
	var d *Database
	if db != nil {
		d = &Database{Date: db.Date, Prices: read("database", db.Prices, func(_ string, p pricing.Price) bool { return p.Sane() })}
	}
	set, err = BuildWith(models, d)
	return set, skipped, err
}

// layered is every price a Set sets over the built-in table: the database's, then the overrides.
func (s *Set) layered() map[string]pricing.Price {
	if s.Database == nil {
		return s.Overrides
	}
	m := make(map[string]pricing.Price, len(s.Database.Prices)+len(s.Overrides))
	maps.Copy(m, s.Database.Prices)
	maps.Copy(m, s.Overrides)
	return m
}

// Changed lists the model names whose price over the built-in table (an override or a database
// price) differs between a and b, or that only one sets.
func Changed(a, b *Set) []string {
	la, lb := a.layered(), b.layered()
	var out []string
	for k, p := range la {
		if q, ok := lb[k]; !ok || q != p {
			out = append(out, k)
		}
	}
	for k := range lb {
		if _, ok := la[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// DatabaseDir holds home's price database.
func DatabaseDir(home string) string { return filepath.Join(home, "prices") }

// DatabasePath is where `observerctl prices update` keeps the LiteLLM price database.
func DatabasePath(home string) string { return filepath.Join(DatabaseDir(home), "litellm.json") }

// LoadDatabase reads home's price database: nil and no error when there is none.
func LoadDatabase(home string) (*Database, error) {
	path := DatabasePath(home)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	db, err := pricing.ReadLiteLLM(path)
	if err != nil {
		return nil, err
	}
	date := db.Updated
	if date == "" {
		date = fi.ModTime().UTC().Format(time.RFC3339)
	}
	return &Database{Prices: db.Prices, Date: date}, nil
}

// Follower keeps the Set of one observer home's config.toml and price database.
type Follower struct {
	home   string
	logger *slog.Logger
	// Interval is the time between two looks at the files; zero means the package's Interval.
	Interval time.Duration

	cur atomic.Pointer[Set]

	mu     sync.Mutex // serialises Check
	stat   fileStat   // of the config.toml the current Set, or the last failure, was read from
	dbStat fileStat   // of the price database likewise
}

type fileStat struct {
	mod  time.Time
	size int64
	ok   bool // the file exists
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}
	}
	return fileStat{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

// Follow loads home's configuration and price database and returns a Follower holding its prices.
// A bad override is an error: a process should not start on prices it cannot use. A price
// database that does not load is left out, with a warning (the built-in table prices its models).
// logger may be nil.
func Follow(home string, logger *slog.Logger) (*Follower, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Follower{home: home, logger: logger}
	f.stat = statOf(config.Path(home))
	f.dbStat = statOf(DatabasePath(home))
	db := f.loadDatabase(nil)
	set, err := load(home, db)
	if err != nil && config.Supervised() {
		// Restarted by the supervisor while config.toml is broken: the prices of the configuration
		// that last loaded, as the component's other settings.
		if cfg, warning, lerr := config.LoadOrLastGood(home); lerr == nil {
			if good, berr := BuildWith(cfg.Pricing.Models, db); berr == nil {
				logger.Warn("config.toml not applied; pricing with the configuration that last loaded", "err", warning)
				set, err = good, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	f.cur.Store(set)
	return f, nil
}

// loadDatabase reads the price database; one that does not load leaves keep in force.
func (f *Follower) loadDatabase(keep *Database) *Database {
	db, err := LoadDatabase(f.home)
	if err != nil {
		f.logger.Warn("price database not applied", "path", DatabasePath(f.home), "err", err)
		return keep
	}
	return db
}

// FollowOrDefault is Follow for a process that must run on a bad config.toml (the dashboard,
// whose Settings tab is where the user fixes it): it starts on the built-in prices (and the price
// database), logs why, and follows the files from then on.
func FollowOrDefault(home string, logger *slog.Logger) *Follower {
	f, err := Follow(home, logger)
	if err == nil {
		return f
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger.Warn("config.toml not applied; using the built-in prices until it is fixed", "err", err)
	f = &Follower{home: home, logger: logger}
	f.dbStat = statOf(DatabasePath(home))
	set, _ := BuildWith(nil, f.loadDatabase(nil))
	f.cur.Store(set)
	return f
}

// Static returns a Follower that always holds set (a one-shot command, a test).
func Static(set *Set) *Follower {
	f := &Follower{logger: slog.New(slog.DiscardHandler)}
	f.cur.Store(set)
	return f
}

// Load builds the Set of home now: its config.toml's overrides over its price database, if any,
// over the built-in table (for one-shot commands).
func Load(home string) (*Set, error) {
	db, err := LoadDatabase(home)
	if err != nil {
		return nil, fmt.Errorf("price database: %w", err)
	}
	return load(home, db)
}

func load(home string, db *Database) (*Set, error) {
	cfg, err := config.Read(home) // prices only read: the home is created by what starts observer
	if err != nil {
		return nil, err
	}
	set, err := BuildWith(cfg.Pricing.Models, db)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", config.Path(home), err)
	}
	return set, nil
}

// Current returns the Set in force.
func (f *Follower) Current() *Set { return f.cur.Load() }

// Table returns the price table in force.
func (f *Follower) Table() *pricing.Table { return f.cur.Load().Table }

// Cost prices one request at current prices with the table in force (proxy.Coster).
func (f *Follower) Cost(model string, tok event.Tokens) (float64, bool) {
	return f.Table().Cost(model, tok)
}

// Quote prices one request with the table in force and says whether the price is only
// approximate (pricing.Table.Quote).
func (f *Follower) Quote(model string, tok event.Tokens, at time.Time) (float64, bool, bool) {
	return f.Table().Quote(model, tok, at)
}

// Run looks at config.toml every Interval until ctx ends, reloading it when it changed.
func (f *Follower) Run(ctx context.Context) {
	if f.home == "" {
		return
	}
	every := f.Interval
	if every <= 0 {
		every = Interval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.Check()
		}
	}
}

// Check reloads config.toml and the price database now if the modification time or size of either
// changed since the last look, and reports whether the Set in force changed.
func (f *Follower) Check() bool {
	if f.home == "" {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path, dbPath := config.Path(f.home), DatabasePath(f.home)
	st, dbSt := statOf(path), statOf(dbPath)
	if st == f.stat && dbSt == f.dbStat {
		return false
	}
	// An editor or a script that writes the file in place truncates it first, and an empty file
	// is a valid configuration (no overrides): read only a file that has stayed the same for
	// settle, else look again at the next poll. A missing config.toml (an editor that moves the
	// old one aside before writing the new) keeps the prices in force until it is back; a missing
	// price database means there is none (`observerctl prices update` replaces it atomically).
	if !st.ok {
		return false
	}
	newest := st.mod
	if dbSt.mod.After(newest) {
		newest = dbSt.mod
	}
	if age := time.Since(newest); age < settle {
		time.Sleep(min(settle-age, settle))
		if statOf(path) != st || statOf(dbPath) != dbSt {
			return false
		}
	}
	old := f.cur.Load()
	db := old.Database
	if dbSt != f.dbStat {
		f.dbStat = dbSt
		db = f.loadDatabase(old.Database)
	}
	f.stat = st
	set, err := load(f.home, db)
	if err != nil {
		f.logger.Warn("config.toml not applied; the prices in force stay", "path", path, "err", err)
		if db == old.Database {
			return false
		}
		// The database changed: apply it under the overrides in force.
		if set, err = BuildWith(old.Overrides, db); err != nil {
			return false
		}
	}
	if old.Key() == set.Key() {
		return false
	}
	f.cur.Store(set)
	changed := Changed(old, set)
	names := strings.Join(changed, ", ")
	if len(changed) > 20 {
		names = strings.Join(changed[:20], ", ") + fmt.Sprintf(" and %d more", len(changed)-20)
	}
	dbDate := ""
	if set.Database != nil {
		dbDate = set.Database.Date
	}
	f.logger.Info("price overrides changed", "path", path, "overrides", len(set.Overrides),
		"database", dbDate, "models", names)
	return true
}
