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
	"slices"
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

// Set is one price table and the overrides it was built from.
type Set struct {
	// Overrides are the models config.toml prices itself, keyed by their lower-case name.
	Overrides map[string]pricing.Price
	// Table is pricing.Default() with Overrides applied.
	Table *pricing.Table
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
	if err := Validate(models); err != nil {
		return nil, err
	}
	s := &Set{Overrides: make(map[string]pricing.Price, len(models))}
	for name, p := range models {
		s.Overrides[strings.ToLower(strings.TrimSpace(name))] = p
	}
	s.Table = pricing.Default().WithOverrides(s.Overrides)
	return s, nil
}

// Key is the overrides in a canonical text form (JSON, names sorted): two Sets price alike when
// their keys are equal. The writer stores it to remember which overrides its rows carry.
func (s *Set) Key() string {
	if len(s.Overrides) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(s.Overrides) // a map of plain structs: cannot fail; keys come out sorted
	return string(b)
}

// ParseKey reads a Key back into a Set.
func ParseKey(key string) (*Set, error) {
	var m map[string]pricing.Price
	if err := json.Unmarshal([]byte(key), &m); err != nil {
		return nil, fmt.Errorf("price overrides %q: %w", key, err)
	}
	return Build(m)
}

// Changed lists the override names whose price differs between a and b, or that only one has.
func Changed(a, b *Set) []string {
	var out []string
	for k, p := range a.Overrides {
		if q, ok := b.Overrides[k]; !ok || q != p {
			out = append(out, k)
		}
	}
	for k := range b.Overrides {
		if _, ok := a.Overrides[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Follower keeps the Set of one observer home's config.toml.
type Follower struct {
	home   string
	logger *slog.Logger
	// Interval is the time between two looks at the file; zero means the package's Interval.
	Interval time.Duration

	cur atomic.Pointer[Set]

	mu   sync.Mutex // serialises Check
	stat fileStat   // of the file the current Set, or the last failure, was read from
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

// Follow loads home's configuration and returns a Follower holding its prices. A bad override is
// an error: a process should not start on prices it cannot use. logger may be nil.
func Follow(home string, logger *slog.Logger) (*Follower, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Follower{home: home, logger: logger}
	f.stat = statOf(config.Path(home))
	set, err := load(home)
	if err != nil && config.Supervised() {
		// Restarted by the supervisor while config.toml is broken: the prices of the configuration
		// that last loaded, as the component's other settings.
		if cfg, warning, lerr := config.LoadOrLastGood(home); lerr == nil {
			if good, berr := Build(cfg.Pricing.Models); berr == nil {
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

// FollowOrDefault is Follow for a process that must run on a bad config.toml (the dashboard,
// whose Settings tab is where the user fixes it): it starts on the built-in prices, logs why, and
// follows the file from then on.
func FollowOrDefault(home string, logger *slog.Logger) *Follower {
	f, err := Follow(home, logger)
	if err == nil {
		return f
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger.Warn("config.toml not applied; using the built-in prices until it is fixed", "err", err)
	set, _ := Build(nil)
	f = &Follower{home: home, logger: logger}
	f.cur.Store(set)
	return f
}

// Static returns a Follower that always holds set (a one-shot command, a test).
func Static(set *Set) *Follower {
	f := &Follower{logger: slog.New(slog.DiscardHandler)}
	f.cur.Store(set)
	return f
}

func load(home string) (*Set, error) {
	cfg, err := config.Load(home)
	if err != nil {
		return nil, err
	}
	set, err := Build(cfg.Pricing.Models)
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

// Check reloads config.toml now if its modification time or size changed since the last look, and
// reports whether the Set in force changed.
func (f *Follower) Check() bool {
	if f.home == "" {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path := config.Path(f.home)
	st := statOf(path)
	if st == f.stat {
		return false
	}
	// An editor or a script that writes the file in place truncates it first, and an empty file
	// is a valid configuration (no overrides): read only a file that has stayed the same for
	// settle, else look again at the next poll. A missing file (an editor that moves the old one
	// aside before writing the new) keeps the prices in force until it is back.
	if !st.ok {
		return false
	}
	if age := time.Since(st.mod); age < settle {
		time.Sleep(min(settle-age, settle))
		if statOf(path) != st {
			return false
		}
	}
	f.stat = st
	set, err := load(f.home)
	if err != nil {
		f.logger.Warn("config.toml not applied; the prices in force stay", "path", path, "err", err)
		return false
	}
	old := f.cur.Load()
	if old.Key() == set.Key() {
		return false
	}
	f.cur.Store(set)
	f.logger.Info("price overrides changed", "path", path, "overrides", len(set.Overrides),
		"models", strings.Join(Changed(old, set), ", "))
	return true
}
