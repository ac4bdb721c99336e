package dash

// Settings (/api/settings): view and edit config.toml.
//
// The file is the config.toml beside the store (config.Path of the store's directory, which is
// the observer home: the store is <home>/observer.db). GET returns its path and content, and the
// price overrides: config.toml's [pricing.models."<model>"] tables (or OBSERVER_PRICING_MODELS,
// which replaces them, in the dashboard's environment), each with the built-in price it replaces,
// plus any model the dashboard's own table prices differently from pkg/pricing's built-in one.
//
// POST (at most maxConfigBytes) takes either {"content": "..."}, the whole file, or
// {"override": {"model": "m", "price": {...}}} to set one model's price override, or
// {"override": {"model": "m", "remove": true}} to remove it. Since it is not a GET, it passes the
// CSRF check of security.go first (403 without the page's token). An override edit changes only
// the lines of that model's [pricing.models."m"] table (a new one goes at the end of the file);
// an override written in another form (an inline table) is refused with a note to edit the text.
// Either way the new text is validated with pkg/config's own loader (config.Load) on a copy in a
// temporary directory, and its price overrides with internal/prices (a bad price names the
// model), so it is refused exactly as the components would refuse it; an invalid file is a 400
// with that message and leaves config.toml untouched. A valid file replaces config.toml
// atomically (a temporary file in the same directory, synced, then renamed) with mode 0600, after
// the previous content is copied to config.toml.bak (0600). The proxy, the watcher and the
// writer follow the price overrides while they run (within seconds, and the writer reprices the
// stored turns of the models whose price changed); other settings apply when the components
// restart, and the answer says so.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/pricing"
)

const maxConfigBytes = 256 << 10

// settingsMu serialises saves, so two tabs saving at once leave one whole file and its backup.
var settingsMu sync.Mutex

// Settings is the answer of GET /api/settings.
type Settings struct {
	Path    string       `json:"path"`
	Exists  bool         `json:"exists"`
	Content string       `json:"content"`
	Mode    string       `json:"mode,omitempty"`
	Backup  string       `json:"backup"`
	Pricing PricingState `json:"pricing"`
}

// PricingState is the price overrides and the built-in table.
type PricingState struct {
	Configurable bool         `json:"configurable"` // whether config.toml can hold overrides
	Note         string       `json:"note"`
	Error        string       `json:"error,omitempty"` // why config.toml's overrides could not be read
	Overrides    []ModelPrice `json:"overrides"`
	Builtin      []ModelPrice `json:"builtin"`
	// BuiltinDate is the day the built-in table was last checked against its sources.
	BuiltinDate string `json:"builtin_date"`
	// Database is the LiteLLM price database in force; nil when there is none.
	Database *PriceDatabase `json:"database"`
	// Unpriced are the models the store has turns of without a price: no price now, or turns
	// stored at $0 that the writer has yet to reprice.
	Unpriced []UnpricedModel `json:"unpriced"`
}

// PriceDatabase is the imported LiteLLM file in force.
type PriceDatabase struct {
	Path   string `json:"path"`
	Date   string `json:"date"`
	Models int    `json:"models"`
}

// UnpricedModel is a model seen without a price.
type UnpricedModel struct {
	Model         string `json:"model"`
	Turns         int64  `json:"turns"`
	UnpricedTurns int64  `json:"unpriced_turns"`
	// PricedNow is true when a price has arrived and the stored turns wait for the writer.
	PricedNow bool `json:"priced_now"`
}

// ModelPrice is one price table entry, USD per million tokens.
type ModelPrice struct {
	Model string `json:"model"`
	pricing.Price
	// Source is where an override comes from: "config.toml", "OBSERVER_PRICING_MODELS", or
	// "dashboard" (a table the dashboard was started with).
	Source string `json:"source,omitempty"`
	// Replaces is the built-in price an override replaces; absent for a model the built-in table
	// does not price.
	Replaces *pricing.Price `json:"replaces,omitempty"`
}

func (s *Server) configPath() string {
	return config.Path(filepath.Dir(s.opts.StorePath))
}

func (s *Server) settingsAPI(ctx context.Context, q *reqParams) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	path := s.configPath()
	st := &Settings{Path: path, Backup: path + ".bak", Pricing: s.pricingState()}
	if err := s.unpriced(ctx, &st.Pricing); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	default:
		st.Exists, st.Content = true, string(data)
		if fi, err := os.Stat(path); err == nil {
			st.Mode = fmt.Sprintf("%04o", fi.Mode().Perm())
		}
	}
	return st, nil
}

func (s *Server) pricingState() PricingState {
	def := pricing.Default()
	ps := PricingState{Configurable: true, Overrides: []ModelPrice{}, Builtin: []ModelPrice{}, BuiltinDate: pricing.TableDate,
		Unpriced: []UnpricedModel{},
		Note: `Overrides are config.toml's [pricing.models."<model>"] tables, USD per million tokens (OBSERVER_PRICING_MODELS replaces them). ` +
			"The proxy, the watcher and the writer follow them while they run: a saved change prices new turns within seconds, " +
			"and the writer reprices the stored turns of the models whose price changed."}
	replaces := func(m string) *pricing.Price {
		if p, _, ok := def.Lookup(m); ok {
			return &p
		}
		return nil
	}
	seen := map[string]bool{}
	models, source, err := configOverrides(s.configPath())
	if err != nil {
		ps.Error = err.Error()
	}
	for _, m := range slices.Sorted(maps.Keys(models)) {
		seen[strings.ToLower(m)] = true
		ps.Overrides = append(ps.Overrides, ModelPrice{Model: m, Price: models[m], Source: source, Replaces: replaces(m)})
	}
	if s.opts.PriceSet != nil {
		if db := s.opts.PriceSet().Database; db != nil {
			ps.Database = &PriceDatabase{Path: prices.DatabasePath(filepath.Dir(s.opts.StorePath)), Date: db.Date, Models: len(db.Prices)}
		}
	} else {
		// A table the dashboard was started with (tests, embedding): its own prices are overrides.
		for _, m := range s.table().Models() {
			p, _, _ := s.table().Lookup(m)
			if d, key, ok := def.Lookup(m); (!ok || key != m || d != p) && !seen[m] {
				ps.Overrides = append(ps.Overrides, ModelPrice{Model: m, Price: p, Source: "dashboard", Replaces: replaces(m)})
			}
		}
	}
	for _, m := range def.Models() {
		p, _, _ := def.Lookup(m)
		ps.Builtin = append(ps.Builtin, ModelPrice{Model: m, Price: p})
	}
	slices.SortFunc(ps.Builtin, func(a, b ModelPrice) int { return strings.Compare(a.Model, b.Model) })
	return ps
}

// unpriced fills ps.Unpriced from the store (nothing before there is one).
func (s *Server) unpriced(ctx context.Context, ps *PricingState) error {
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return err
	}
	rep, err := query.Cost(ctx, db, query.CostQuery{GroupBy: []string{"model"}})
	if err != nil {
		return err
	}
	t := s.table()
	for _, r := range rep.Rows {
		_, _, known := t.Lookup(r.Model)
		if r.Model == "" || (known && r.UnpricedTurns == 0) {
			continue
		}
		ps.Unpriced = append(ps.Unpriced, UnpricedModel{Model: r.Model, Turns: r.Turns, UnpricedTurns: r.UnpricedTurns, PricedNow: known})
	}
	return nil
}

// configOverrides reads the price overrides of the config file at path as the components would:
// the file's [pricing] models, replaced by OBSERVER_PRICING_MODELS when it is set. source names
// where they came from. A file that does not parse gives its error and no overrides.
func configOverrides(path string) (models map[string]pricing.Price, source string, err error) {
	cfg := config.Default()
	source = "config.toml"
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, source, err
	default:
		if err := toml.Unmarshal(data, &cfg); err != nil {
			return nil, source, fmt.Errorf("config %s: %v", path, err)
		}
	}
	env := config.EnvName("pricing", "models")
	if _, ok := os.LookupEnv(env); ok {
		source = env
		if err := config.ApplyEnv(&cfg, func(k string) (string, bool) {
			if k != env {
				return "", false
			}
			return os.LookupEnv(k)
		}); err != nil {
			return nil, source, err
		}
	}
	return cfg.Pricing.Models, source, prices.Validate(cfg.Pricing.Models)
}

// saveSettings answers POST /api/settings.
func (s *Server) saveSettings(ctx context.Context, q *reqParams) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	var body struct {
		Content  *string          `json:"content"`
		Override *overrideRequest `json:"override"`
	}
	dec := json.NewDecoder(io.LimitReader(q.r.Body, maxConfigBytes*2+1024))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || (body.Content == nil) == (body.Override == nil) {
		return nil, &apiError{Status: http.StatusBadRequest, Param: "content",
			Msg: `want a JSON body {"content": "<config.toml text>"} or {"override": {"model": "<model>", "price": {...}}} (or "remove": true)`}
	}
	path := s.configPath()
	settingsMu.Lock()
	defer settingsMu.Unlock()
	param := "content"
	var content string
	if body.Content != nil {
		content = *body.Content
	} else {
		param = "override"
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if content, err = body.Override.apply(string(old)); err != nil {
			return nil, badParam("override", "%v", err)
		}
	}
	if len(content) > maxConfigBytes {
		return nil, badParam(param, "longer than %d bytes", maxConfigBytes)
	}
	if err := validateConfig(path, content); err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Param: param, Msg: err.Error()}
	}
	if body.Override != nil {
		if err := body.Override.check(content); err != nil {
			return nil, badParam("override", "%v", err)
		}
	}
	backup, err := writeConfig(path, content)
	if err != nil {
		return nil, err
	}
	return map[string]any{"saved": true, "path": path, "backup": backup,
		"message": "Saved. Price overrides apply within seconds (the proxy, the watcher and the writer follow them); " +
			"other settings apply when the components restart (observerctl down, then observerctl up)."}, nil
}

// overrideRequest sets or removes one model's price override.
type overrideRequest struct {
	Model  string         `json:"model"`
	Price  *pricing.Price `json:"price"`
	Remove bool           `json:"remove"`
}

// apply returns content with the request's change made to the model's [pricing.models."<model>"]
// table(s): replaced by the new price (a new table at the end when there is none), or removed.
func (o *overrideRequest) apply(content string) (string, error) {
	name := strings.TrimSpace(o.Model)
	switch {
	case name == "":
		return "", errors.New("model: a model name is needed")
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return "", errors.New("model: the name holds control characters")
	case o.Remove == (o.Price != nil):
		return "", errors.New(`give either "price" or "remove": true`)
	case o.Price != nil:
		if err := prices.Validate(map[string]pricing.Price{name: *o.Price}); err != nil {
			return "", err
		}
	}
	data := []byte(content)
	spans, err := modelTables(data, name)
	if err != nil {
		return "", fmt.Errorf("config.toml does not parse (fix it in the text first): %v", err)
	}
	var block []byte
	if o.Price != nil {
		vals, err := toml.Marshal(*o.Price)
		if err != nil {
			return "", err
		}
		block = append([]byte("[pricing.models."+strconv.Quote(name)+"]\n"), vals...)
	}
	var out bytes.Buffer
	at := 0
	for i, sp := range spans {
		out.Write(data[at:sp[0]])
		if i == 0 {
			out.Write(block)
		}
		at = sp[1]
	}
	out.Write(data[at:])
	if len(spans) == 0 && block != nil {
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.Write(block)
	}
	return out.String(), nil
}

// check verifies that content, once loaded, gives the model the requested price or none: an
// override written as an inline table or with dotted keys is not one apply can edit.
func (o *overrideRequest) check(content string) error {
	cfg := config.Default()
	if err := toml.Unmarshal([]byte(content), &cfg); err != nil {
		return err
	}
	name := strings.TrimSpace(o.Model)
	for m, p := range cfg.Pricing.Models {
		if !strings.EqualFold(strings.TrimSpace(m), name) {
			continue
		}
		if o.Remove || p != *o.Price {
			return fmt.Errorf("config.toml prices %q in a form other than a [pricing.models.%q] table: edit the text instead", name, name)
		}
	}
	return nil
}

// modelTables finds the [pricing.models."<model>"] tables of data whose model matches name (case
// does not matter, as for the price table): for each, the byte span from its header's line to the
// end of its last key's line.
func modelTables(data []byte, name string) ([][2]int, error) {
	var p unstable.Parser
	p.Reset(data)
	var spans [][2]int
	in := false // inside a matching table
	lineStart := func(pos int) int { return bytes.LastIndexByte(data[:pos], '\n') + 1 }
	lineEnd := func(pos int) int {
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			return pos + i + 1
		}
		return len(data)
	}
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			var key []string
			first, last := -1, 0
			for it := n.Key(); it.Next(); {
				k := it.Node()
				key = append(key, string(k.Data))
				if first < 0 {
					first = int(k.Raw.Offset)
				}
				last = int(k.Raw.Offset + k.Raw.Length)
			}
			in = n.Kind == unstable.Table && len(key) == 3 && key[0] == "pricing" && key[1] == "models" &&
				strings.EqualFold(strings.TrimSpace(key[2]), name)
			if in {
				spans = append(spans, [2]int{lineStart(first), lineEnd(last)})
			}
		case unstable.KeyValue:
			if in {
				spans[len(spans)-1][1] = lineEnd(int(n.Raw.Offset + n.Raw.Length))
			}
		}
	}
	return spans, p.Error()
}

// validateConfig checks content as the components would load it, as the text of path, writing
// nothing.
func validateConfig(path, content string) error {
	cfg, err := config.Parse(filepath.Dir(path), []byte(content))
	if err == nil {
		err = prices.Validate(cfg.Pricing.Models)
	}
	return err
}

// writeConfig keeps the old file as path.bak and replaces path atomically; it returns the backup's
// path ("" when there was no file).
func writeConfig(path, content string) (string, error) {
	dir := filepath.Dir(path)
	if err := config.EnsureDir(dir); err != nil {
		return "", err
	}
	backup := ""
	if old, err := os.ReadFile(path); err == nil {
		backup = path + ".bak"
		if err := atomicfile.Write(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := atomicfile.Write(path, []byte(content), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return backup, nil
}
