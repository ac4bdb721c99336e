package cli

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func TestBudget_StatusAndAlerts(t *testing.T) {
	home := costHome(t)
	code, out, _ := runCtl(t, "--home", home, "budget")
	if code != 0 || !strings.Contains(out, "no budget is set") || !strings.Contains(out, filepath.Join(home, "config.toml")) {
		t.Errorf("no budget: exit %d\n%s", code, out)
	}
	t.Setenv("OBSERVER_BUDGET_MONTHLY", "1000")
	t.Setenv("OBSERVER_BUDGET_PROJECTS", `{ "/work/b" = 0.5 }`)
	var rep budgetReport
	code, out, errOut := runCtl(t, "--home", home, "budget", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	now := time.Now()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.Local)
	all, codex := costSince(t, home, month, ""), costSince(t, home, month, "/work/b")
	if len(rep.Budgets) != 2 || rep.Budgets[0].Scope != "month" || math.Abs(rep.Budgets[0].SpentUSD-all) > 1e-9 ||
		rep.Budgets[1].Project != "/work/b" || math.Abs(rep.Budgets[1].SpentUSD-codex) > 1e-9 || len(rep.Alerts) != 0 {
		t.Fatalf("budgets %+v, alerts %+v; want month $%.2f, /work/b $%.2f", rep.Budgets, rep.Alerts, all, codex)
	}
	// The writer raises the alerts; the command lists them.
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	raised, err := budget.Raise(context.Background(), st, config.Budget{Projects: map[string]float64{"/work/b": 0.5}}, now, time.Local, nil)
	st.Close()
	if err != nil || len(raised) != 2 {
		t.Fatalf("raised %+v, %v", raised, err)
	}
	code, out, _ = runCtl(t, "--home", home, "budget")
	for _, want := range []string{"SCOPE", "month", "1000.00", "/work/b", "reached 100%", "alerts of the last 7 days:", "budget of /work/b reached 80%"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("table lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "budget"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "budget", "--bogus"}, ExitUsage, "bogus"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// TestBudget_ListsLimitAlertsWithoutBudget: the plan limit alerts ([limits] warn_at) are listed
// by `observerctl budget` although no budget is set.
func TestBudget_ListsLimitAlertsWithoutBudget(t *testing.T) {
	home := costHome(t)
	st, err := store.OpenWriter(context.Background(), filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	a := event.Alert{Time: time.Now().UTC(), Kind: event.AlertLimit, Scope: "anthropic 5h", Period: "2026-12-06T14:00:00Z",
		Threshold: 80, Message: "anthropic 5h limit at 85% (warning at 80%)"}
	_, err = st.InsertAlert(context.Background(), &a)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var rep budgetReport
	code, out, errOut := runCtl(t, "--home", home, "budget", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Budgets) != 0 || len(rep.Alerts) != 1 ||
		rep.Alerts[0].Kind != event.AlertLimit || rep.Alerts[0].Scope != "anthropic 5h" {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	code, out, _ = runCtl(t, "--home", home, "budget")
	if code != 0 || !strings.Contains(out, "no budget is set") || !strings.Contains(out, "anthropic 5h limit at 85%") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
