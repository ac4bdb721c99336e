package dash

// Settings (/api/settings): view and edit config.toml.
//
// The file is the config.toml beside the store (config.Path of the store's directory, which is
// the observer home: the store is <home>/observer.db). GET returns its path and content, and the
// price overrides in effect: the models whose price in the dashboard's table differs from, or is
// missing in, pkg/pricing's built-in table. pkg/config has no pricing section in this version,
// so overrides cannot come from config.toml yet; the page says so and lists the built-in prices.
//
// POST takes {"content": "..."} (at most maxConfigBytes) and, since it is not a GET, passes the
// CSRF check of security.go first (403 without the page's token). It validates the text with
// pkg/config's own loader (config.Load) on a copy in a temporary directory, so unknown keys and
// bad values are refused exactly as the components would refuse them at start; an invalid file is
// a 400 with the loader's message and leaves config.toml untouched. A valid file replaces
// config.toml atomically (a temporary file in the same directory, synced, then renamed) with mode
// 0600, after the previous content is copied to config.toml.bak (0600). Components read the file
// when they start: the answer says to restart them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/observerhq/observer/internal/atomicfile"
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

// PricingState is the price table the dashboard uses.
type PricingState struct {
	Configurable bool         `json:"configurable"` // whether config.toml can hold overrides
	Note         string       `json:"note"`
	Overrides    []ModelPrice `json:"overrides"`
	Builtin      []ModelPrice `json:"builtin"`
}

// ModelPrice is one price table entry, USD per million tokens.
type ModelPrice struct {
	Model string `json:"model"`
	pricing.Price
}

func (s *Server) configPath() string {
	return config.Path(filepath.Dir(s.opts.StorePath))
}

func (s *Server) settingsAPI(ctx context.Context, q *query) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	path := s.configPath()
	st := &Settings{Path: path, Backup: path + ".bak", Pricing: s.pricingState()}
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
	ps := PricingState{Overrides: []ModelPrice{}, Builtin: []ModelPrice{},
		Note: "config.toml has no pricing section in this version (pkg/config does not read price overrides yet): " +
			"dollars use pkg/pricing's built-in list prices, plus any overrides listed here that the program was given."}
	for _, m := range s.opts.Prices.Models() {
		p, _, _ := s.opts.Prices.Lookup(m)
		if d, key, ok := def.Lookup(m); !ok || key != m || d != p {
			ps.Overrides = append(ps.Overrides, ModelPrice{m, p})
		}
	}
	for _, m := range def.Models() {
		p, _, _ := def.Lookup(m)
		ps.Builtin = append(ps.Builtin, ModelPrice{m, p})
	}
	slices.SortFunc(ps.Builtin, func(a, b ModelPrice) int { return strings.Compare(a.Model, b.Model) })
	return ps
}

// saveSettings answers POST /api/settings.
func (s *Server) saveSettings(ctx context.Context, q *query) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	var body struct {
		Content *string `json:"content"`
	}
	dec := json.NewDecoder(io.LimitReader(q.r.Body, maxConfigBytes*2+1024))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Content == nil {
		return nil, &apiError{Status: http.StatusBadRequest, Param: "content", Msg: `want a JSON body {"content": "<config.toml text>"}`}
	}
	content := *body.Content
	if len(content) > maxConfigBytes {
		return nil, badParam("content", "longer than %d bytes", maxConfigBytes)
	}
	path := s.configPath()
	if err := validateConfig(path, content); err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Param: "content", Msg: err.Error()}
	}
	settingsMu.Lock()
	defer settingsMu.Unlock()
	backup, err := writeConfig(path, content)
	if err != nil {
		return nil, err
	}
	return map[string]any{"saved": true, "path": path, "backup": backup,
		"message": "Saved. The components read config.toml when they start: restart them (observerctl down, then observerctl up) to apply it."}, nil
}

// validateConfig loads content with config.Load from a temporary home; the loader's message names
// the real path.
func validateConfig(path, content string) error {
	tmp, err := os.MkdirTemp("", "observer-config-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(config.Path(tmp), []byte(content), 0o600); err != nil {
		return err
	}
	if _, err := config.Load(tmp); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), config.Path(tmp), path))
	}
	return nil
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
