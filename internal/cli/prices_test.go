package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

const litellmCopy = "/work/shared/pricing/model_prices_and_context_window.json"

func TestPricesUpdate_RefusesBadFiles(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	dbPath := filepath.Join(home, "prices", "litellm.json")
	for name, content := range map[string]string{
		"notjson": "{nope",
		"schema":  `{"a": {"price": 1}}`,
		"zero":    `{"claude-sonnet-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 0, "output_cost_per_token": 0}}`,
		"tenx":    `{"claude-sonnet-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 3e-4, "output_cost_per_token": 1.5e-5}}`,
	} {
		path := filepath.Join(dir, name+".json")
		write(t, path, content)
		code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", path)
		if code != ExitBadInput || !strings.Contains(errOut, "nothing changed") {
			t.Errorf("%s: exit %d, want %d: %s%s", name, code, ExitBadInput, out, errOut)
		}
		if _, err := os.Stat(dbPath); err == nil {
			t.Fatalf("%s: refused file was written", name)
		}
	}
	// --force takes the x10 one.
	code, _, errOut := runCtl(t, "--home", home, "prices", "update", "--force", "--from", filepath.Join(dir, "tenx.json"))
	if code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCtl(t, "--home", home, "prices", "update", "--from", "ftp://example.com/x.json"); code != ExitUsage {
		t.Errorf("an ftp URL: exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ := runCtl(t, "--home", home, "prices", "update", "--from", filepath.Join(dir, "absent.json")); code != ExitFailure {
		t.Errorf("a missing file: exit %d, want %d", code, ExitFailure)
	}
}

// --from takes a URL, and without --from the command fetches [pricing] url; an error answer or a
// refused body changes nothing.
func TestPricesUpdate_FromURL(t *testing.T) {
	home := t.TempDir()
	good := `{"last_updated": "2026-11-30", "url-model": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}`
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/good.json":
			io.WriteString(w, good)
		case "/html":
			io.WriteString(w, "<html>rate limited</html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dbPath := filepath.Join(home, "prices", "litellm.json")
	if code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", srv.URL+"/missing.json"); code != ExitFailure || !strings.Contains(errOut, "404") {
		t.Errorf("404: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", srv.URL+"/html"); code != ExitBadInput {
		t.Errorf("not JSON: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(dbPath); err == nil {
		t.Fatal("a failed fetch wrote the database")
	}
	code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--json", "--from", srv.URL+"/good.json")
	var rep prices.UpdateReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Models != 1 || rep.Added != 1 || rep.Date != "2026-11-30" {
		t.Fatalf("update from URL: exit %d: %s%s", code, out, errOut)
	}
	// Without --from: [pricing] url, here through its environment override.
	os.Remove(dbPath)
	t.Setenv("OBSERVER_PRICING_URL", srv.URL+"/good.json")
	before := hits.Load()
	if code, out, errOut := runCtl(t, "--home", home, "prices", "update"); code != 0 || !strings.Contains(out, "imported") {
		t.Fatalf("update from [pricing] url: exit %d: %s%s", code, out, errOut)
	}
	if hits.Load() != before+1 {
		t.Errorf("fetches: %d, want 1", hits.Load()-before)
	}
	if code, out, _ := runCtl(t, "--home", home, "prices", "update"); code != 0 || !strings.Contains(out, "nothing changed") {
		t.Errorf("the same file again: exit %d: %s", code, out)
	}
	if code, _, _ := runCtl(t, "--home", home, "prices", "show", "url-model"); code != 0 {
		t.Errorf("url-model has no price after the update")
	}
}

// prices list names every model the store has turns of with its price source; --unpriced keeps
// those without a price, and a price added by the database takes a model off that list.
func TestPricesList(t *testing.T) {
	home := costHome(t)
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := event.New(event.KindTokenUsage, "test")
	e.ID, e.Client, e.SessionID, e.Time = "u9", "opencode", "o1", time.Now().Add(-time.Minute)
	e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1000, Output: 10}, Model: "mystery-model-9", MessageID: "u9",
		Reliability: event.ReliabilityUnknown}
	if _, err := st.WriteBatch(context.Background(), []event.Event{e}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	list := func(args ...string) []priceListRow {
		t.Helper()
		code, out, errOut := runCtl(t, append([]string{"--home", home, "prices", "list", "--json"}, args...)...)
		var rows []priceListRow
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
			t.Fatalf("list %v: exit %d: %s%s", args, code, out, errOut)
		}
		return rows
	}
	all := list()
	models := map[string]priceListRow{}
	for _, r := range all {
		models[r.Model] = r
	}
	if len(all) != 3 || all[0].Model != "mystery-model-9" || all[0].Known || all[0].UnpricedTurns != 1 {
		t.Fatalf("list: %+v", all)
	}
	if r := models["claude-sonnet-4-5"]; r.Source != "builtin" || r.Turns != 2 || r.Key != "claude-sonnet-4-5" {
		t.Errorf("claude-sonnet-4-5: %+v", r)
	}
	if un := list("--unpriced"); len(un) != 1 || un[0].Model != "mystery-model-9" {
		t.Errorf("--unpriced: %+v", un)
	}
	code, out, _ := runCtl(t, "--home", home, "prices", "list")
	if code != 0 || !strings.Contains(out, "mystery-model-9") || !strings.Contains(out, "unknown") || !strings.Contains(out, "builtin") {
		t.Errorf("table: %s", out)
	}
	// A price for it: no longer unknown (its stored turn waits for the writer's repricing).
	write(t, filepath.Join(home, "config.toml"), "[pricing.models.\"mystery-model-9\"]\ninput = 1.0\noutput = 2.0\n")
	if un := list("--unpriced"); len(un) != 1 || !un[0].Known || un[0].Source != "override" || un[0].UnpricedTurns != 1 {
		t.Errorf("--unpriced after an override: %+v", un)
	}
	if code, _, _ := runCtl(t, "--home", t.TempDir(), "prices", "list"); code != ExitUnavailable {
		t.Errorf("no store: exit %d, want %d", code, ExitUnavailable)
	}
}

func TestPricesUpdateThenShow(t *testing.T) {
	if _, err := os.Stat(litellmCopy); err != nil {
		t.Skip("no shared LiteLLM copy")
	}
	home := t.TempDir()
	show := func(model string) (int, priceShow) {
		t.Helper()
		code, out, errOut := runCtl(t, "--home", home, "prices", "show", "--json", model)
		var rep priceShow
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("show %s: %v: %s%s", model, err, out, errOut)
		}
		return code, rep
	}
	if code, rep := show("gpt-4"); code != ExitFailure || rep.Known || rep.Source != "unknown" {
		t.Errorf("before update: gpt-4 %d %+v", code, rep)
	}
	if _, rep := show("claude-sonnet-4-5"); rep.Source != "builtin" {
		t.Errorf("before update: %+v", rep)
	}
	if code, _, errOut := runCtl(t, "--home", home, "prices", "diff"); code != ExitUnavailable {
		t.Errorf("diff without a database: exit %d %s", code, errOut)
	}
	code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", litellmCopy)
	if code != 0 || !strings.Contains(out, "2218 models") || !strings.Contains(errOut, "left out: \"wandb/") {
		t.Fatalf("update: exit %d: %s%s", code, out, errOut)
	}
	fi, err := os.Stat(filepath.Join(home, "prices", "litellm.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("database file: %v %v", fi, err)
	}
	if code, rep := show("gpt-4"); code != 0 || rep.Source != "database" || rep.Key != "gpt-4" || rep.DatabaseDate == "" || rep.Price.Input != 30 {
		t.Errorf("after update: gpt-4 %d %+v", code, rep)
	}
	if _, rep := show("aide-gpt-5"); !rep.Approximate || rep.Key != "gpt-5" {
		t.Errorf("fallback: %+v", rep)
	}
	if _, rep := show("claude-haiku-5-5"); rep.Source != "builtin" {
		t.Errorf("a model only built in: %+v", rep)
	}
	write(t, filepath.Join(home, "config.toml"), "[pricing.models.\"gpt-4\"]\ninput = 1.0\noutput = 2.0\n")
	if _, rep := show("gpt-4"); rep.Source != "override" || rep.Price.Input != 1 {
		t.Errorf("override: %+v", rep)
	}
	code, out, _ = runCtl(t, "--home", home, "prices", "diff", "--json")
	var d pricesDiffReport
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Differ) == 0 || d.DatabaseOnly == 0 {
		t.Errorf("diff: %d %s", code, out)
	}
}

// A subcommand's flags may follow its arguments, as a top-level command's may.
func TestFlagsAfterSubcommandArguments(t *testing.T) {
	t.Setenv("OBSERVER_HOME", t.TempDir())
	code, out, errOut := runCtl(t, "prices", "show", "claude-sonnet-4-5", "--json")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Fatalf("prices show MODEL --json: exit %d, %q, %q", code, out, errOut)
	}
}

// TestAutoUpdatePrices_OnByDefault: the writer's start with the default configuration (the URL
// pointed at a loopback copy of "LiteLLM's" file) logs that it fetches the public price file and
// how to turn that off, and fetches it once; with auto_update = false it logs that it is off and
// fetches nothing.
func TestAutoUpdatePrices_OnByDefault(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{"auto-model": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}`)
	}))
	defer srv.Close()
	for _, on := range []bool{true, false} {
		home := t.TempDir()
		cfg := config.Default()
		cfg.Home, cfg.Pricing.URL = home, srv.URL+"/model_prices.json"
		cfg.Pricing.AutoUpdate = cfg.Pricing.AutoUpdate && on
		logs := &lockedBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		before := hits.Load()
		autoUpdatePrices(ctx, &env{cfg: cfg, logger: slog.New(slog.NewTextHandler(logs, nil))})
		want := "price database auto-update is off"
		if on {
			want = "price database auto-update is on"
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), "price database updated") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := os.Stat(prices.DatabasePath(home)); err != nil {
				t.Errorf("default configuration: no price database fetched (%v)\n%s", err, logs.String())
			}
		}
		cancel()
		if got := hits.Load() - before; got != map[bool]int64{true: 1, false: 0}[on] {
			t.Errorf("auto_update %v: %d fetches", on, got)
		}
		if l := logs.String(); !strings.Contains(l, want) || !strings.Contains(l, "auto_update = false") {
			t.Errorf("auto_update %v: the start log does not say %q and how to turn it off:\n%s", on, want, l)
		}
	}
}

// Model names and dates from a price file reach the terminal escaped: an escape sequence in them
// is printed as text, never sent raw.
func TestPrices_EscapesControlCharacters(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(t.TempDir(), "evil.json")
	write(t, path, `{"last_updated": "2026-07-24\u001b[2J", "evil\u001b]0;owned\u0007-model\u009b31m": {"litellm_provider": "x", "mode": "chat",
		"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
		"claude-sonnet-4-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 3.3e-6, "output_cost_per_token": 1.5e-5,
		"cache_read_input_token_cost": 3.3e-7}}`)
	if code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", path); code != 0 {
		t.Fatalf("update: exit %d: %s%s", code, out, errOut)
	}
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\u009b") }
	code, out, errOut := runCtl(t, "--home", home, "prices", "show", "evil\x1b]0;owned\x07-model\u009b31m")
	if code != 0 || raw(out+errOut) || !strings.Contains(out, `evil\x1b]0;owned\x07-model\u009b31m`) {
		t.Errorf("show: exit %d: %q %q", code, out, errOut)
	}
	code, out, errOut = runCtl(t, "--home", home, "prices", "show", "nope\x1b[31m")
	if code != ExitFailure || raw(out+errOut) {
		t.Errorf("show unknown: exit %d: %q %q", code, out, errOut)
	}
	code, out, errOut = runCtl(t, "--home", home, "prices", "diff")
	if code != 0 || raw(out+errOut) || !strings.Contains(out, `2026-07-24\x1b[2J`) || !strings.Contains(out, "claude-sonnet-4-5") {
		t.Errorf("diff: exit %d: %q %q", code, out, errOut)
	}
	if got := printable("tab\there\u009bé\xff"); got != `tab\x09here\u009bé\xff` {
		t.Errorf("printable = %q", got)
	}
}

// --from /dev/zero fails on the first bytes, without reading on; a file over the size limit is
// refused naming it.
func TestPricesUpdate_Hostile(t *testing.T) {
	home := t.TempDir()
	if _, err := os.Stat("/dev/zero"); err == nil {
		code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--from", "/dev/zero")
		if code != ExitBadInput || !strings.Contains(errOut, "nothing changed") {
			t.Errorf("/dev/zero: exit %d: %s%s", code, out, errOut)
		}
	}
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	head, tail := `{"m": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6, "pad": "`, `"}}`
	f.WriteString(head)
	pad := bytes.Repeat([]byte("a"), 1<<20)
	for n := prices.MaxDatabaseBytes + 1 - len(head) - len(tail); n > 0; n -= len(pad) {
		f.Write(pad[:min(n, len(pad))])
	}
	f.WriteString(tail)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCtl(t, "--home", home, "prices", "update", "--force", "--from", path)
	if code != ExitBadInput || !strings.Contains(errOut, "larger than 64 MB") {
		t.Errorf("a file over the limit: exit %d: %s%s", code, out, errOut)
	}
}
