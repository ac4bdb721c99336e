package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/metrics"
)

func TestMetrics_TextAndJSON(t *testing.T) {
	home := costHome(t)
	code, out, errOut := runCtl(t, "--home", home, "metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// costHome: a Codex turn of $0.50; a Claude Code transcript turn of $1.50 and a proxy turn of
	// $0.25, 100 + 5 input tokens.
	for _, want := range []string{
		"# HELP observer_cost_usd_total ", "# TYPE observer_cost_usd_total counter\n",
		`observer_cost_usd_total{client="codex",model="gpt-5"} 0.5` + "\n",
		`observer_cost_usd_total{client="claude-code",model="claude-sonnet-4-5"} 1.75` + "\n",
		`observer_tokens_total{client="claude-code",model="claude-sonnet-4-5",bucket="input"} 105` + "\n",
		`observer_turns_total{client="claude-code",model="claude-sonnet-4-5"} 2` + "\n",
		`observer_sessions_total{client="codex"} 1` + "\n",
		"# TYPE observer_store_size_bytes gauge\n", "observer_quarantined_messages 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCtl(t, "--home", home, "metrics", "--json")
	var fams []metrics.Family
	if err := json.Unmarshal([]byte(out), &fams); code != 0 || err != nil || len(fams) < 9 || fams[0].Name != "observer_actions_total" {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "metrics"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "metrics", "--bogus"}, ExitUsage, "bogus"},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}
