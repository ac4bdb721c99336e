package dash

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/config"
)

// TestFollowPlans: the dashboard's plans follow config.toml, and a file that does not load keeps
// the plans last read.
func TestFollowPlans(t *testing.T) {
	home := t.TempDir()
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(config.Path(home), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[plans]\nanthropic = { name = \"pro\", usd_month = 20 }\n")
	cfg, err := config.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	plans := followPlans(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if p := plans(); p["anthropic"].USDMonth != 20 || len(p) != 1 {
		t.Fatalf("plans at start: %v", p)
	}
	write("[plans]\nanthropic = { name = \"max-20x\", usd_month = 200 }\nopenai = { name = \"plus\", usd_month = 20 }\n")
	time.Sleep(2100 * time.Millisecond) // followPlans looks at the file at most every 2 s
	if p := plans(); p["anthropic"].USDMonth != 200 || p["openai"].Name != "plus" {
		t.Fatalf("plans after the edit: %v", p)
	}
	write("[plans]\nanthropic = { name = \"max-20x\", usd_month = -1 }\n")
	time.Sleep(2100 * time.Millisecond)
	if p := plans(); p["anthropic"].USDMonth != 200 || len(p) != 2 {
		t.Fatalf("plans after a bad edit: %v, want the last good ones", p)
	}
}
