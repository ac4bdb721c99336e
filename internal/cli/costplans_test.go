package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/query"
)

// TestCost_Plans: with [plans], each month's providers carry their plan and its value; without,
// the same dollars with "no plan" and how to set one; --group-by does not go with --plans.
func TestCost_Plans(t *testing.T) {
	home := costHome(t)
	code, out, errOut := runCtl(t, "--home", home, "cost", "--plans")
	if code != 0 {
		t.Fatalf("cost --plans: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"MONTH", "anthropic", "openai", "no plan", "No plan is set", "[plans]", `anthropic = { name = "max-20x", usd_month = 200 }`} {
		if !strings.Contains(out, want) {
			t.Errorf("cost --plans without [plans] does not say %q:\n%s", want, out)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[plans]\nanthropic = { name = \"pro\", usd_month = 0.5 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCtl(t, "--home", home, "cost", "--plans")
	if code != 0 {
		t.Fatalf("cost --plans: exit %d: %s", code, errOut)
	}
	// The Claude turns cost $1.75 in all; unless the two days ago fell in the previous month, one
	// month holds them: 3.5x.
	if !strings.Contains(out, "pro") || !strings.Contains(out, "0.50") || strings.Contains(out, "No plan is set") {
		t.Errorf("cost --plans with [plans]:\n%s", out)
	}
	if !strings.Contains(out, "3.5x") && !(strings.Contains(out, "3.0x") && strings.Contains(out, "0.50x")) {
		t.Errorf("cost --plans: no value of 3.5x (or 3.0x and 0.50x across a month's end):\n%s", out)
	}
	if !strings.Contains(out, "no plan") {
		t.Errorf("cost --plans: openai has no plan:\n%s", out)
	}
	code, out, errOut = runCtl(t, "--home", home, "cost", "--plans", "--json")
	if code != 0 {
		t.Fatalf("cost --plans --json: exit %d: %s", code, errOut)
	}
	var rep query.PlanReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("cost --plans --json: %v\n%s", err, out)
	}
	var anthropic float64
	for _, r := range rep.Rows {
		if r.Provider == "anthropic" {
			anthropic += r.APIUSD
			if r.Plan != "pro" || r.PlanUSD != 0.5 || r.Ratio != r.APIUSD/0.5 {
				t.Errorf("anthropic row %+v", r)
			}
		} else if r.Plan != "" || r.Ratio != 0 {
			t.Errorf("%s has no plan: %+v", r.Provider, r)
		}
	}
	if d := anthropic - 1.75; d > 1e-9 || d < -1e-9 || rep.Turns != 3 || rep.TotalUSD-2.25 > 1e-9 || rep.Plans["anthropic"].Name != "pro" {
		t.Errorf("cost --plans --json: anthropic $%v, total $%v over %d turns, plans %v", anthropic, rep.TotalUSD, rep.Turns, rep.Plans)
	}
	if code, _, errOut = runCtl(t, "--home", home, "cost", "--plans", "--group-by", "day"); code != ExitUsage || !strings.Contains(errOut, "--plans") {
		t.Errorf("cost --plans --group-by day: exit %d: %s", code, errOut)
	}
}
