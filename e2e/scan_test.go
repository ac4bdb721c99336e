package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corpusHome lays the shared corpus out the way the clients keep it on disk, in a fresh HOME.
func corpusHome(tb testing.TB) string {
	tb.Helper()
	script := filepath.Join("..", "..", "shared", "scripts", "gen_history.py")
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "corpus")); err != nil {
		tb.Skip("../shared/corpus is absent")
	}
	home := tb.TempDir()
	out, err := exec.Command("python3", script, "small", home).CombinedOutput()
	if err != nil {
		tb.Fatalf("gen_history.py small: %v\n%s", err, out)
	}
	return home
}

type costJSON struct {
	Rows  []map[string]any `json:"rows"`
	Total struct {
		Input      int64   `json:"input_tokens"`
		Output     int64   `json:"output_tokens"`
		CacheRead  int64   `json:"cache_read_tokens"`
		CacheWrite int64   `json:"cache_creation_tokens"`
		Cache1h    int64   `json:"cache_creation_1h_tokens"`
		Reasoning  int64   `json:"reasoning_tokens"`
		CostUSD    float64 `json:"cost_usd"`
		Turns      int64   `json:"turns"`
	} `json:"total"`
}

// TestScan_CorpusOnceAndCostsAgree ingests the corpus with `observerctl scan` (nothing running:
// scan hosts its own writer), checks a second scan changes nothing, and that
// `observerctl cost --json` gives the same totals whatever the grouping.
func TestScan_CorpusOnceAndCostsAgree(t *testing.T) {
	clientHome := corpusHome(t)
	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	out, errOut, code := s.ctl(nil, "scan", "--json")
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errOut)
	}
	var sum struct {
		Files     int   `json:"files"`
		Read      int   `json:"files_read"`
		Lines     int64 `json:"lines"`
		Events    int64 `json:"events"`
		Malformed int64 `json:"malformed"`
	}
	json.Unmarshal([]byte(out), &sum)
	if sum.Read == 0 || sum.Events == 0 {
		t.Fatalf("scan read nothing: %s", out)
	}
	t.Logf("first scan: %s", strings.TrimSpace(out))
	counts := func() [3]int {
		return [3]int{s.count("SELECT count(*) FROM token_usage"), s.count("SELECT count(*) FROM actions"),
			s.count("SELECT count(*) FROM sessions")}
	}
	before := counts()
	out, _, code = s.ctl(nil, "scan", "--json")
	json.Unmarshal([]byte(out), &sum)
	if code != 0 || sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan read something: exit %d %s", code, out)
	}
	if after := counts(); after != before {
		t.Fatalf("second scan changed the store: %v -> %v", before, after)
	}

	var totals []costJSON
	for _, g := range []string{"", "session", "day", "model", "project", "client", "client,model"} {
		args := []string{"cost", "--json"}
		if g != "" {
			args = append(args, "--group-by", g)
		}
		out, errOut, code := s.ctl(nil, args...)
		if code != 0 {
			t.Fatalf("cost %v: exit %d %s", args, code, errOut)
		}
		var c costJSON
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("cost %v: %v\n%s", args, err, out)
		}
		totals = append(totals, c)
	}
	for i, c := range totals[1:] {
		// Dollars are summed in another order per grouping: equal to the micro-dollar.
		if math.Abs(c.Total.CostUSD-totals[0].Total.CostUSD) < 1e-6 {
			c.Total.CostUSD = totals[0].Total.CostUSD
		}
		if c.Total != totals[0].Total {
			t.Errorf("grouping %d: total %+v differs from the ungrouped %+v", i+1, c.Total, totals[0].Total)
		}
	}
	if totals[0].Total.Turns == 0 || totals[0].Total.Output == 0 {
		t.Fatalf("no tokens counted: %+v", totals[0].Total)
	}
	// One row per message: no message id appears twice among the transcript rows.
	if n := s.count("SELECT count(*) FROM (SELECT message_id FROM token_usage WHERE message_id != '' GROUP BY client, message_id HAVING count(*) > 1)"); n != 0 {
		t.Fatalf("%d messages counted more than once", n)
	}
	t.Logf("corpus totals: %+v", totals[0].Total)
}

// TestScan_WhileSuiteUp: with the suite running, its observer-watch owns the transcripts' reading
// positions, and scan, backfill and scan --dry-run still work: the watcher reads for them and
// streams back its progress and summary, and the store ends with the history once.
func TestScan_WhileSuiteUp(t *testing.T) {
	clientHome := corpusHome(t)
	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	type summary struct {
		Files  int   `json:"files"`
		Read   int   `json:"files_read"`
		Lines  int64 `json:"lines"`
		Events int64 `json:"events"`
	}
	run := func(args ...string) (summary, string) {
		t.Helper()
		out, errOut, code := s.ctl(nil, args...)
		var sum summary
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return sum, errOut
	}
	dry, _ := run("scan", "--dry-run", "--json")
	if dry.Files == 0 || dry.Events == 0 {
		t.Fatalf("dry run with the suite down: %+v", dry)
	}
	s.start()
	// The watcher ingests the history on its own; scan asks it for a pass and gets its summary.
	sum, errOut := run("scan", "--json")
	if sum.Files != dry.Files || !strings.Contains(errOut, "observer-watch reads the history") {
		t.Errorf("scan while up: %+v (dry run saw %d files), stderr %q", sum, dry.Files, errOut)
	}
	codex, _ := run("scan", "--client", "codex", "--json")
	if codex.Files == 0 || codex.Files >= sum.Files {
		t.Errorf("scan --client codex while up: %d of %d files", codex.Files, sum.Files)
	}
	if again, _ := run("scan", "--dry-run", "--json"); again.Files != dry.Files {
		t.Errorf("dry run while up: %+v", again)
	}
	if _, errOut, code := s.ctl(nil, "backfill", "--json"); code != 0 {
		t.Errorf("backfill while up: exit %d %s", code, errOut)
	}
	// Everything once: the same rows as a scan into a store of its own.
	solo := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	if _, errOut, code := solo.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("solo scan: %s", errOut)
	}
	want := solo.count("SELECT count(*) FROM token_usage")
	s.waitCount(30*time.Second, want, "SELECT count(*) FROM token_usage")
	if a, b := s.count("SELECT count(*) FROM actions"), solo.count("SELECT count(*) FROM actions"); a != b {
		t.Errorf("actions: %d with the suite, %d by a scan alone", a, b)
	}
}
