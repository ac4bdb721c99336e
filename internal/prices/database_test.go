package prices_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/event"
)

// writeDatabase replaces home's price database and moves its modification time forward.
func writeDatabase(tb testing.TB, home, content string, age time.Duration) {
	tb.Helper()
	path := prices.DatabasePath(home)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	ts := time.Now().Add(-age)
	os.Chtimes(path, ts, ts)
}

func litellm(model string, in, out float64) string {
	return `{"last_updated": "2026-07-24", "` + model + `": {"litellm_provider": "x", "mode": "chat",
		"input_cost_per_token": ` + ftoa(in/1e6) + `, "output_cost_per_token": ` + ftoa(out/1e6) + `}}`
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestFollower_Database(t *testing.T) {
	home := t.TempDir()
	writeConfig(t, home, override("over-model", 1, 1))
	f, err := prices.Follow(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	mtok := event.Tokens{Input: 1_000_000, Output: 1_000_000}
	if _, ok := f.Cost("db-model", mtok); ok {
		t.Fatal("db-model priced before any database")
	}
	before := f.Current()
	writeDatabase(t, home, litellm("db-model", 1, 2), 2*time.Second)
	if !f.Check() {
		t.Fatal("Check missed the new database")
	}
	if usd, ok := f.Cost("db-model", mtok); !ok || usd != 3 {
		t.Fatalf("db-model $%v %v, want $3", usd, ok)
	}
	if db := f.Current().Database; db == nil || db.Date != "2026-07-24" {
		t.Errorf("database %+v", db)
	}
	if ch := prices.Changed(before, f.Current()); len(ch) != 1 || ch[0] != "db-model" {
		t.Errorf("changed %v", ch)
	}
	// The key round-trips, so the writer can tell what its stored rows carry.
	if s, _, err := prices.ParseKey(f.Current().Key()); err != nil || s.Key() != f.Current().Key() {
		t.Errorf("ParseKey: %v", err)
	}
	// An override wins over the database.
	writeConfig(t, home, override("over-model", 1, 1)+override("db-model", 5, 5))
	if !f.Check() {
		t.Fatal("Check missed the override")
	}
	if usd, _ := f.Cost("db-model", mtok); usd != 10 {
		t.Errorf("override over database: $%v, want $10", usd)
	}
	// A database that does not load leaves the one in force.
	writeDatabase(t, home, "{broken", 2*time.Second+time.Millisecond)
	f.Check()
	if f.Current().Database == nil {
		t.Error("a broken database file dropped the database in force")
	}
	// Removing it goes back to the built-in table.
	writeConfig(t, home, override("over-model", 1, 1))
	os.Remove(prices.DatabasePath(home))
	f.Check()
	if _, ok := f.Cost("db-model", mtok); ok {
		t.Error("db-model still priced after the database was removed")
	}
}
