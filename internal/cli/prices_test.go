package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code, _, _ := runCtl(t, "--home", home, "prices", "update", "--from", "https://example.com/x.json"); code != ExitUsage {
		t.Errorf("a URL: exit %d, want %d", code, ExitUsage)
	}
	if code, _, _ := runCtl(t, "--home", home, "prices", "update"); code != ExitUsage {
		t.Errorf("no --from: exit %d, want %d", code, ExitUsage)
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
	if code != 0 || !strings.Contains(out, "2229 models") {
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
