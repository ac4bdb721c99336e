package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

func postSettings(t *testing.T, srv *testServer, body string, csrf bool) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/settings", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if csrf {
		req.Header.Set(csrfHeader, srv.csrf)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func jsonContent(s string) string {
	b, _ := json.Marshal(map[string]string{"content": s})
	return string(b)
}

// TestSettings: config.toml shown; a save needs the CSRF token, is refused with the loader's
// message when invalid (file untouched), and when valid replaces the file 0600 with a backup.
func TestSettings(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.toml")
	orig := "[dash]\naddr = \"127.0.0.1:8081\"\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	prices := pricing.Default().WithOverrides(map[string]pricing.Price{"my-local-model": {Input: 1, Output: 2}})
	srv := startServer(t, Options{StorePath: filepath.Join(home, "observer.db"), Prices: prices})

	var st Settings
	mustGet(t, srv.URL, "/api/settings", &st)
	if st.Path != cfgPath || !st.Exists || st.Content != orig || st.Mode != "0600" {
		t.Errorf("settings %+v", st)
	}
	if len(st.Pricing.Overrides) != 1 || st.Pricing.Overrides[0].Model != "my-local-model" || st.Pricing.Overrides[0].Output != 2 || len(st.Pricing.Builtin) == 0 {
		t.Errorf("pricing overrides %+v (%d built-in)", st.Pricing.Overrides, len(st.Pricing.Builtin))
	}
	if code := get(t, srv.URL, "/api/settings?x=1", nil); code != 400 {
		t.Errorf("unknown parameter: %d", code)
	}

	unchanged := func(what string) {
		t.Helper()
		if data, _ := os.ReadFile(cfgPath); string(data) != orig {
			t.Errorf("%s changed config.toml to %q", what, data)
		}
		if _, err := os.Stat(cfgPath + ".bak"); err == nil {
			t.Errorf("%s left a backup", what)
		}
	}
	valid := "[dash]\naddr = \"127.0.0.1:8099\"\n"
	if code, _ := postSettings(t, srv, jsonContent(valid), false); code != http.StatusForbidden {
		t.Errorf("without CSRF: %d, want 403", code)
	}
	unchanged("a save without CSRF")
	for _, c := range []struct{ name, body, want string }{
		{"invalid TOML", jsonContent("[dash\naddr = 1"), cfgPath},
		{"unknown key", jsonContent("[dash]\nnot_a_key = 1\n"), "unknown key"},
		{"wrong type", jsonContent("[dash]\naddr = 12\n"), cfgPath},
		{"not JSON", "addr = 1", "content"},
	} {
		code, out := postSettings(t, srv, c.body, true)
		msg, _ := out["error"].(string)
		if code != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q, want 400 mentioning %q", c.name, code, msg, c.want)
		}
		unchanged(c.name)
	}

	code, out := postSettings(t, srv, jsonContent(valid), true)
	if code != http.StatusOK || out["saved"] != true {
		t.Fatalf("valid save: %d %v", code, out)
	}
	data, _ := os.ReadFile(cfgPath)
	bak, _ := os.ReadFile(cfgPath + ".bak")
	if string(data) != valid || string(bak) != orig {
		t.Errorf("after save: config %q backup %q", data, bak)
	}
	for _, p := range []string{cfgPath, cfgPath + ".bak"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", p, fi.Mode(), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(home, ".config.toml*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	mustGet(t, srv.URL, "/api/settings", &st)
	if st.Content != valid {
		t.Errorf("GET after save: %q", st.Content)
	}
}

func overrideBody(model string, p *pricing.Price, remove bool) string {
	b, _ := json.Marshal(map[string]any{"override": overrideRequest{Model: model, Price: p, Remove: remove}})
	return string(b)
}

// TestSettings_PriceOverrides: GET lists config.toml's overrides with the built-in price each
// replaces; POST {"override": ...} sets or removes one model's [pricing.models."m"] table, leaving
// every other line as it was, with the CSRF token; a bad price, or an override written inline,
// is refused with the file untouched; and a prices.Follower on the same home applies the saved
// file without a restart.
func TestSettings_PriceOverrides(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.toml")
	head := "# my settings\n[dash]\naddr = \"127.0.0.1:8081\"\n\n"
	mine := "[pricing.models.\"My-Model\"]\ninput = 1.0\noutput = 2.0\n"
	tail := "\n# proxy below\n[proxy]\naddr = \"127.0.0.1:8820\"\n"
	orig := head + mine + tail
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Options{StorePath: filepath.Join(home, "observer.db")})
	follower, err := prices.Follow(home, nil)
	if err != nil {
		t.Fatal(err)
	}

	var st Settings
	mustGet(t, srv.URL, "/api/settings", &st)
	if !st.Pricing.Configurable || len(st.Pricing.Overrides) != 1 || st.Pricing.Overrides[0].Model != "My-Model" ||
		st.Pricing.Overrides[0].Output != 2 || st.Pricing.Overrides[0].Source != "config.toml" || st.Pricing.Overrides[0].Replaces != nil {
		t.Fatalf("overrides %+v", st.Pricing.Overrides)
	}
	read := func() string { b, _ := os.ReadFile(cfgPath); return string(b) }

	haiku := &pricing.Price{Input: 2, Output: 10, CacheRead: 0.2}
	if code, _ := postSettings(t, srv, overrideBody("claude-haiku-4-5", haiku, false), false); code != http.StatusForbidden {
		t.Errorf("override without CSRF: %d, want 403", code)
	}
	for _, c := range []struct{ name, body, want string }{
		{"bad price", overrideBody("claude-haiku-4-5", &pricing.Price{Input: -2}, false), "claude-haiku-4-5"},
		{"no model", overrideBody(" ", haiku, false), "model"},
		{"price and remove", overrideBody("x", haiku, true), "remove"},
		{"bad price in the text", jsonContent(head + "[pricing.models.\"neg\"]\ninput = -1.0\n"), "neg"},
	} {
		code, out := postSettings(t, srv, c.body, true)
		if msg, _ := out["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q, want 400 mentioning %q", c.name, code, msg, c.want)
		}
		if read() != orig {
			t.Fatalf("%s changed config.toml:\n%s", c.name, read())
		}
	}

	// A new model goes at the end; the rest of the file is kept byte for byte.
	if code, out := postSettings(t, srv, overrideBody("claude-haiku-4-5", haiku, false), true); code != 200 {
		t.Fatalf("set override: %d %v", code, out)
	}
	if got := read(); !strings.HasPrefix(got, orig) || !strings.Contains(got[len(orig):], `[pricing.models."claude-haiku-4-5"]`) {
		t.Fatalf("after adding an override:\n%s", got)
	}
	if !follower.Check() {
		t.Fatal("the follower did not see the saved file")
	}
	if usd, _ := follower.Cost("claude-haiku-4-5-20251001", event.Tokens{Input: 1e6, Output: 1e6, CacheRead: 1e6}); usd != 12.2 {
		t.Errorf("the follower prices Haiku at $%v per million of each, want $12.2", usd)
	}
	mustGet(t, srv.URL, "/api/settings", &st)
	if len(st.Pricing.Overrides) != 2 || st.Pricing.Overrides[1].Model != "claude-haiku-4-5" || st.Pricing.Overrides[1].Replaces == nil ||
		st.Pricing.Overrides[1].Replaces.Input != 1 {
		t.Errorf("overrides after adding Haiku: %+v", st.Pricing.Overrides)
	}

	// An existing model (any case) is replaced where it is.
	if code, out := postSettings(t, srv, overrideBody("my-model", &pricing.Price{Input: 5, Output: 6}, false), true); code != 200 {
		t.Fatalf("replace override: %d %v", code, out)
	}
	got := read()
	if !strings.HasPrefix(got, head+"[pricing.models.\"my-model\"]\ninput = 5.0\noutput = 6.0\n") || !strings.Contains(got, tail) ||
		strings.Contains(got, "My-Model") {
		t.Fatalf("after replacing My-Model:\n%s", got)
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pricing.Models["my-model"]; p.Input != 5 || p.Output != 6 || len(cfg.Pricing.Models) != 2 {
		t.Errorf("config.Load reads %+v", cfg.Pricing.Models)
	}

	if code, out := postSettings(t, srv, overrideBody("MY-MODEL", nil, true), true); code != 200 {
		t.Fatalf("remove override: %d %v", code, out)
	}
	if got := read(); strings.Contains(strings.ToLower(got), "my-model") || !strings.HasPrefix(got, head) || !strings.Contains(got, tail) {
		t.Fatalf("after removing my-model:\n%s", got)
	}

	// An override written as an inline table is not edited behind the user's back.
	inline := "[pricing]\nmodels = { \"inline-m\" = { input = 1.0 } }\n"
	if code, out := postSettings(t, srv, jsonContent(inline), true); code != 200 {
		t.Fatalf("save inline: %d %v", code, out)
	}
	if code, out := postSettings(t, srv, overrideBody("inline-m", nil, true), true); code != http.StatusBadRequest ||
		!strings.Contains(fmt.Sprint(out["error"]), "edit the text") {
		t.Errorf("removing an inline override: %d %v", code, out)
	}
	if read() != inline {
		t.Errorf("a refused edit changed the file:\n%s", read())
	}
}

// TestSettings_PriceSourceAndUnpriced: Settings names the price database in force with its date
// and the built-in table's date, and lists the models seen without a price: one no table knows,
// and one the database prices whose stored turn waits for the writer's repricing.
func TestSettings_PriceSourceAndUnpriced(t *testing.T) {
	home := t.TempDir()
	dbPath := filepath.Join(home, "observer.db")
	st, err := store.OpenWriter(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i, m := range []string{"mystery-model-9", "db-model", "claude-sonnet-4-5"} {
		e := event.New(event.KindTokenUsage, "test")
		e.ID, e.Client, e.SessionID, e.Time = fmt.Sprintf("u%d", i), "opencode", "o1", time.Now().Add(-time.Minute)
		rel := event.ReliabilityUnknown
		if m == "claude-sonnet-4-5" {
			rel = event.ReliabilityApproximate
		}
		e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1000, Output: 10}, Model: m, MessageID: e.ID, Reliability: rel}
		evs = append(evs, e)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	set, err := prices.BuildWith(nil, &prices.Database{Prices: map[string]pricing.Price{"db-model": {Input: 1, Output: 2}}, Date: "2026-11-30"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Options{StorePath: dbPath, PriceTable: func() *pricing.Table { return set.Table },
		PriceSet: func() *prices.Set { return set }})
	var got Settings
	mustGet(t, srv.URL, "/api/settings", &got)
	ps := got.Pricing
	if ps.BuiltinDate != pricing.TableDate || ps.Database == nil || ps.Database.Date != "2026-11-30" || ps.Database.Models != 1 ||
		ps.Database.Path != filepath.Join(home, "prices", "litellm.json") {
		t.Errorf("source: builtin %q, database %+v", ps.BuiltinDate, ps.Database)
	}
	if len(ps.Overrides) != 0 {
		t.Errorf("the database's prices shown as overrides: %+v", ps.Overrides)
	}
	want := []UnpricedModel{{Model: "db-model", Turns: 1, UnpricedTurns: 1, PricedNow: true}, {Model: "mystery-model-9", Turns: 1, UnpricedTurns: 1}}
	if fmt.Sprint(ps.Unpriced) != fmt.Sprint(want) {
		t.Errorf("unpriced %+v, want %+v", ps.Unpriced, want)
	}
	// No store yet: an empty list, not an error.
	srv = startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "observer.db")})
	mustGet(t, srv.URL, "/api/settings", &got)
	if got.Pricing.Unpriced == nil || len(got.Pricing.Unpriced) != 0 || got.Pricing.Database != nil {
		t.Errorf("no store: %+v", got.Pricing)
	}
}
