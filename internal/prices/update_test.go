package prices_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/pricing"
)

// dbServer serves body (or status when not 200) and counts the requests.
func dbServer(t *testing.T, status int, body *atomic.Value) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if status != http.StatusOK {
			http.Error(w, "no", status)
			return
		}
		w.Write([]byte(body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestImport_RefusesWithNothingChanged(t *testing.T) {
	home := t.TempDir()
	good := litellm("db-model", 1, 2)
	if _, err := prices.Import(home, []byte(good), false, nil); err != nil {
		t.Fatal(err)
	}
	installed, err := os.ReadFile(prices.DatabasePath(home))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"truncated":   good[:len(good)/2],
		"empty":       "",
		"not litellm": `{"a": 1}`,
		"x10":         litellm("db-model", 11, 2),
		"to zero":     litellm("db-model", 0, 0),
	} {
		_, err := prices.Import(home, []byte(body), false, nil)
		if !errors.Is(err, prices.ErrRefused) {
			t.Errorf("%s: err %v, want refused", name, err)
		}
		if got, _ := os.ReadFile(prices.DatabasePath(home)); string(got) != string(installed) {
			t.Fatalf("%s: the database in force changed", name)
		}
	}
	rep, err := prices.Import(home, []byte(litellm("db-model", 11, 2)), true, nil)
	if err != nil || !rep.Forced || len(rep.Suspect) != 1 || rep.Changed != 1 {
		t.Errorf("forced: %+v %v", rep, err)
	}
	if rep, err := prices.Import(home, []byte(litellm("db-model", 11, 2)), false, nil); err != nil || !rep.Identical {
		t.Errorf("the same bytes again: %+v %v", rep, err)
	}
}

func TestFetch_Errors(t *testing.T) {
	var body atomic.Value
	body.Store("")
	srv, _ := dbServer(t, http.StatusServiceUnavailable, &body)
	if _, err := prices.Fetch(context.Background(), nil, srv.URL); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v", err)
	}
	srv.Close()
	if _, err := prices.Fetch(context.Background(), nil, srv.URL); err == nil {
		t.Error("a closed server: no error")
	}
}

// The auto-updater fetches a missing or stale copy, leaves a fresh one alone, keeps the copy in
// force when the fetch fails or the file is refused, and tries again after Retry.
func TestAutoUpdater(t *testing.T) {
	home := t.TempDir()
	var body atomic.Value
	body.Store(litellm("auto-model", 1, 2))
	srv, hits := dbServer(t, http.StatusOK, &body)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u := &prices.AutoUpdater{Home: home, URL: srv.URL, Every: time.Hour, Retry: 50 * time.Millisecond}
	done := make(chan struct{})
	go func() { u.Run(ctx); close(done) }()
	waitFor(t, func() bool { _, err := os.Stat(prices.DatabasePath(home)); return err == nil })
	time.Sleep(200 * time.Millisecond)
	if n := hits.Load(); n != 1 {
		t.Errorf("fetches with a fresh copy: %d, want 1", n)
	}
	cancel()
	<-done

	// A stale copy and a bad answer: refused, retried, the old copy kept.
	writeDatabase(t, home, litellm("auto-model", 1, 2), 2*time.Hour)
	body.Store(litellm("auto-model", 100, 2))
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	hits.Store(0)
	go u.Run(ctx)
	waitFor(t, func() bool { return hits.Load() >= 3 })
	cancel()
	db, err := prices.LoadDatabase(home)
	if err != nil || db.Prices["auto-model"].Input != 1 {
		t.Errorf("after refused updates: %+v %v", db, err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// litellmCache is litellm with cache read and write prices.
func litellmCache(model string, in, out, read, write float64) string {
	return `{"` + model + `": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": ` + ftoa(in/1e6) +
		`, "output_cost_per_token": ` + ftoa(out/1e6) + `, "cache_read_input_token_cost": ` + ftoa(read/1e6) +
		`, "cache_creation_input_token_cost": ` + ftoa(write/1e6) + `}}`
}

// The 10x guard measures from the built-in price (or the first imported one), not only from the
// price in force: imports at 9.9x each are refused by the second.
func TestImport_GuardDoesNotRatchet(t *testing.T) {
	builtin, ok := pricing.Default().Exact("claude-sonnet-4-5")
	if !ok {
		t.Skip("no claude-sonnet-4-5 in the built-in table")
	}
	for _, tc := range []struct {
		model string
		start pricing.Price
	}{{"claude-sonnet-4-5", builtin}, {"db-only-model", pricing.Price{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite5m: 1.25}}} {
		t.Run(tc.model, func(t *testing.T) {
			home := t.TempDir()
			p := tc.start
			if tc.model == "db-only-model" {
				if _, err := prices.Import(home, []byte(litellmCache(tc.model, p.Input, p.Output, p.CacheRead, p.CacheWrite5m)), false, nil); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i <= 2; i++ {
				p.Input, p.Output, p.CacheRead, p.CacheWrite5m = p.Input*9.9, p.Output*9.9, p.CacheRead*9.9, p.CacheWrite5m*9.9
				_, err := prices.Import(home, []byte(litellmCache(tc.model, p.Input, p.Output, p.CacheRead, p.CacheWrite5m)), false, nil)
				if i == 1 && err != nil {
					t.Fatalf("import 1 at 9.9x: %v", err)
				}
				if i == 2 {
					if !errors.Is(err, prices.ErrRefused) || !strings.Contains(err.Error(), tc.model) || !strings.Contains(err.Error(), "input $") ||
						!strings.Contains(err.Error(), "baseline") {
						t.Fatalf("import %d at 9.9x of the last: %v, want refused naming the model, field and baseline", i, err)
					}
				}
			}
			// Forced, the price becomes the baseline: the same file again passes.
			if _, err := prices.Import(home, []byte(litellmCache(tc.model, p.Input, p.Output, p.CacheRead, p.CacheWrite5m)), true, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := prices.Import(home, []byte(litellmCache(tc.model, p.Input*1.1, p.Output, p.CacheRead, p.CacheWrite5m)), false, nil); err != nil {
				t.Errorf("after a forced import, a small move: %v", err)
			}
		})
	}
}

func TestImport_GuardChecksCachePrices(t *testing.T) {
	home := t.TempDir()
	if _, err := prices.Import(home, []byte(litellmCache("db-model", 1, 2, 0.1, 1.25)), false, nil); err != nil {
		t.Fatal(err)
	}
	_, err := prices.Import(home, []byte(litellmCache("db-model", 1, 2, 5, 1.25)), false, nil)
	if !errors.Is(err, prices.ErrRefused) || !strings.Contains(err.Error(), "cache_read $0.1") {
		t.Errorf("cache read 50x: %v", err)
	}
	_, err = prices.Import(home, []byte(litellmCache("db-model", 1, 2, 0.1, 0.1)), false, nil)
	if !errors.Is(err, prices.ErrRefused) || !strings.Contains(err.Error(), "cache_write_5m $1.25") {
		t.Errorf("cache write down 12.5x: %v", err)
	}
}

// The real LiteLLM file imports into a fresh home without --force, and installs as its kept
// models only.
func TestImport_SharedCopy(t *testing.T) {
	f, err := os.Open("/work/shared/pricing/model_prices_and_context_window.json")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	home := t.TempDir()
	rep, err := prices.ImportFrom(home, f, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Absurd) == 0 || rep.Models < 2000 {
		t.Errorf("%d models, absurd %v", rep.Models, rep.Absurd)
	}
	fi, _ := os.Stat(prices.DatabasePath(home))
	st, _ := f.Stat()
	if fi.Size() >= st.Size() {
		t.Errorf("installed %d bytes of a %d-byte file", fi.Size(), st.Size())
	}
	db, err := prices.LoadDatabase(home)
	if err != nil || len(db.Prices) != rep.Models {
		t.Errorf("installed database: %d models, %v", len(db.Prices), err)
	}
}

// oversized is a valid LiteLLM file one byte over the size limit.
func oversized() io.Reader {
	head := `{"m": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6, "pad": "`
	tail := `"}}`
	pad := prices.MaxDatabaseBytes + 1 - len(head) - len(tail)
	return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatA{}, int64(pad)), strings.NewReader(tail))
}

type repeatA struct{}

func (repeatA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// A file or an answer longer than the size limit is refused while it is read; /dev/zero fails at
// once.
func TestImport_SizeLimit(t *testing.T) {
	home := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(w, oversized()) }))
	defer srv.Close()
	r, err := prices.Open(context.Background(), nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = prices.ImportFrom(home, r, true, nil)
	r.Close()
	if !errors.Is(err, prices.ErrRefused) || !errors.Is(err, pricing.ErrTooLarge) || !strings.Contains(err.Error(), "64 MB") {
		t.Errorf("an answer over the limit: %v", err)
	}
	r, err = prices.Open(context.Background(), nil, "/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	if _, err := prices.ImportFrom(home, r, true, nil); !errors.Is(err, prices.ErrRefused) {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := os.Stat(prices.DatabasePath(home)); err == nil {
		t.Errorf("a database was installed")
	}
}

// A chat model priced above the ceiling is left out and reported, whatever --force says; the rest
// of the file is imported.
func TestImport_AbsurdPrice(t *testing.T) {
	home := t.TempDir()
	rep, err := prices.Import(home, []byte(`{"huge": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e303, "output_cost_per_token": 1e-6},
		"fine": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}`), true, nil)
	if err != nil || len(rep.Absurd) != 1 || !strings.Contains(rep.Absurd[0], "huge") || rep.Models != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	set, err := prices.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Table.Exact("huge"); ok {
		t.Errorf("the absurd model is priced")
	}
	if !strings.HasPrefix(set.Key(), "litellm:{") {
		t.Errorf("key %.40q", set.Key())
	}
}
