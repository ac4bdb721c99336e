package prices_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
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
		if got, _ := os.ReadFile(prices.DatabasePath(home)); string(got) != good {
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
