package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/realclient"
)

// CcusagePackage is the ccusage release the comparison was written against; .ci/run installs it.
// (20.0.26 ships no linux binary.) Codex reports come from the same package (`ccusage codex`):
// the separate @ccusage/codex package stops at 19.0.0.
const CcusagePackage = "ccusage@20.0.24"

// knownDiff lists the models whose prices ccusage and observer set apart on purpose, with the
// ratio ccusage/observer the difference makes. There are none today: observer applies Bedrock's
// regional premium (jp., eu., us., apac., au.) as ccusage does, and prices the Azure deployment
// aide-gpt-5 as gpt-5 (approximately) as ccusage does.
var knownDiff = map[string]struct {
	ratio float64
	why   string
}{}

// ccusageTolerance is how far apart a row's dollars may be: rounding only.
const ccusageTolerance = 0.001

// ccusage runs `ccusage args... --json --offline` on the client home, in UTC.
func ccusage(tb testing.TB, bin, clientHome string, v any, args ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--json", "--offline", "-z", "UTC")...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + clientHome, "TZ=UTC", "NO_COLOR=1",
		"CLAUDE_CONFIG_DIR=" + filepath.Join(clientHome, ".claude"), "CODEX_HOME=" + filepath.Join(clientHome, ".codex")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("ccusage %v: %v\n%s", args, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		tb.Fatalf("ccusage %v: %v\n%s", args, err, out.String())
	}
}

// ccTokens are a ccusage row's token counts.
type ccTokens struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	CacheRead  int64 `json:"cacheReadTokens"`
	CacheWrite int64 `json:"cacheCreationTokens"`
}

func (t ccTokens) sum() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// ccBreakdown is one model of a ccusage Claude row.
type ccBreakdown struct {
	Model string `json:"modelName"`
	ccTokens
	Cost float64 `json:"cost"`
}

// obsRow is one row of `observerctl cost --json --group-by client,day,model`.
type obsRow struct {
	Client        string  `json:"client"`
	Day           string  `json:"day"`
	Model         string  `json:"model"`
	Input         int64   `json:"input_tokens"`
	Output        int64   `json:"output_tokens"`
	CacheRead     int64   `json:"cache_read_tokens"`
	CacheCreation int64   `json:"cache_creation_tokens"`
	Unpriced      int64   `json:"unpriced_turns"`
	CostUSD       float64 `json:"cost_usd"`
	Reliability   string  `json:"reliability"`
}

// cmpKey is a client, a day and a model ("*": all the day's models).
type cmpKey struct{ client, day, model string }

type cmpRow struct {
	observer, ccusage, ccDaily float64
	obsTokens, ccTokens        int64
	unpriced                   bool   // observer has no price for a model of the row
	skip                       string // why the row is not compared
	compared                   bool   // both price the row: its dollars and tokens were checked
}

// TestCcusage_CostsAgree lays the corpus out as ~/.claude and ~/.codex, prices it with ccusage
// (offline) and with observer (`observerctl scan`, then `cost --json --group-by client,day,model`),
// all in UTC, and compares dollars and tokens per day and model wherever both price the model:
// within 0.1%, or by the ratio a known pricing difference gives, and with the same token count.
// Claude Code is compared with ccusage's session report: its daily report de-duplicates a message
// by message id and request id, and counts it once per content-block line in transcripts whose
// lines carry no requestId (2.1x in all on this corpus; shown beside for the record). Codex is
// compared with ccusage's codex daily report, per day (it does not split a day's dollars by
// model). The table of every figure is logged.
//
// It runs twice: on observer's built-in table alone, and after `observerctl prices update --from`
// the shared copy of LiteLLM's database (the file ccusage's own prices come from).
func TestCcusage_CostsAgree(t *testing.T) {
	bin := realclient.Find(t, "OBSERVER_CCUSAGE_BIN", "ccusage", "npm install -g "+CcusagePackage)
	clientHome := corpusHome(t)
	check := func(t *testing.T, rows map[cmpKey]*cmpRow) {
		var compared int
		for _, c := range rows {
			if c.compared {
				compared++
			}
		}
		if compared < 10 {
			t.Fatalf("only %d rows compared: the corpus or one of the reports came out empty", compared)
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, compareWithCcusage(t, bin, clientHome, nil)) })
	t.Run("litellm-database", func(t *testing.T) {
		file, err := filepath.Abs(filepath.Join("..", "..", "shared", "pricing", "model_prices_and_context_window.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(file); err != nil {
			t.Skipf("SKIP: the shared copy of LiteLLM's database is absent: %v", err)
		}
		check(t, compareWithCcusage(t, bin, clientHome, func(s *suite) {
			if out, errOut, code := s.ctl(nil, "prices", "update", "--from", file); code != 0 {
				t.Fatalf("prices update: exit %d\n%s%s", code, out, errOut)
			}
		}))
	})
}

// compareWithCcusage prices the transcripts under clientHome (~/.claude, ~/.codex) with ccusage
// (offline) and with observer (`observerctl scan` into a fresh store, then `cost --json --group-by
// client,day,model`), all in UTC, and compares them as TestCcusage_CostsAgree describes: a row
// both price must agree within 0.1% (or by its knownDiff ratio) and on its token count, a row
// only one side has is an error. It logs the table of every figure and returns the rows.
// setup, when not nil, runs on the suite before the scan.
func compareWithCcusage(t *testing.T, bin, clientHome string, setup func(*suite)) map[cmpKey]*cmpRow {
	t.Helper()
	var claudeSessions struct {
		Sessions []struct {
			FirstActivity string        `json:"firstActivity"`
			LastActivity  string        `json:"lastActivity"`
			Breakdowns    []ccBreakdown `json:"modelBreakdowns"`
		} `json:"sessions"`
	}
	ccusage(t, bin, clientHome, &claudeSessions, "claude", "session", "--breakdown")
	var claudeDaily struct {
		Daily []struct {
			Date       string        `json:"date"`
			Breakdowns []ccBreakdown `json:"modelBreakdowns"`
		} `json:"daily"`
	}
	ccusage(t, bin, clientHome, &claudeDaily, "claude", "daily", "--breakdown")
	var codexDaily struct {
		Daily []struct {
			Date string `json:"date"`
			ccTokens
			Cost float64 `json:"costUSD"`
		} `json:"daily"`
	}
	ccusage(t, bin, clientHome, &codexDaily, "codex", "daily")

	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "TZ=UTC")
	if setup != nil {
		setup(s)
	}
	if out, errOut, code := s.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := s.ctl(nil, "cost", "--json", "--group-by", "client,day,model")
	if code != 0 {
		t.Fatalf("cost: exit %d %s", code, errOut)
	}
	var obs struct {
		Rows []obsRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &obs); err != nil {
		t.Fatalf("cost: %v\n%s", err, out)
	}

	rows := map[cmpKey]*cmpRow{}
	get := func(k cmpKey) *cmpRow {
		if rows[k] == nil {
			rows[k] = &cmpRow{}
		}
		return rows[k]
	}
	for _, r := range obs.Rows {
		model := r.Model
		if r.Client == "codex" {
			model = "*" // ccusage's codex report prices whole days
		}
		c := get(cmpKey{r.Client, r.Day, model})
		c.observer += r.CostUSD
		c.obsTokens += r.Input + r.Output + r.CacheRead + r.CacheCreation
		c.unpriced = c.unpriced || r.Unpriced > 0
		if r.Model == "aide-gpt-5" {
			t.Logf("%s %s aide-gpt-5: $%.6f, reliability %s", r.Client, r.Day, r.CostUSD, r.Reliability)
		}
		if r.Model == "aide-gpt-5" && (r.Reliability != "approximate" || r.Unpriced > 0) {
			t.Errorf("%s %s: aide-gpt-5 (priced as gpt-5 by the family fallback) reliability %q, %d unpriced; want approximate, 0",
				r.Client, r.Day, r.Reliability, r.Unpriced)
		}
	}
	for _, ss := range claudeSessions.Sessions {
		day := ss.LastActivity[:min(10, len(ss.LastActivity))]
		for _, b := range ss.Breakdowns {
			c := get(cmpKey{"claude-code", day, b.Model})
			c.ccusage += b.Cost
			c.ccTokens += b.sum()
			if !strings.HasPrefix(ss.FirstActivity, day) {
				c.skip = "a session spans days (not compared)"
			}
		}
	}
	for _, d := range claudeDaily.Daily {
		for _, b := range d.Breakdowns {
			get(cmpKey{"claude-code", d.Date, b.Model}).ccDaily += b.Cost
		}
	}
	for _, d := range codexDaily.Daily {
		c := get(cmpKey{"codex", d.Date, "*"})
		c.ccusage += d.Cost
		c.ccDaily += d.Cost
		c.ccTokens += d.sum()
	}

	keys := slices.SortedFunc(func(yield func(cmpKey) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	}, func(a, b cmpKey) int { return strings.Compare(a.client+a.day+a.model, b.client+b.day+b.model) })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-11s %-10s %-54s %12s %12s %8s %12s %12s %12s  %s\n", "client", "day", "model", "observer $",
		"ccusage $", "diff", "ccu daily $", "obs tokens", "ccu tokens", "note")
	var compared int
	var obsTotal, ccTotal float64
	for _, k := range keys {
		c := rows[k]
		diff := "n/a"
		if c.observer > 0 {
			diff = fmt.Sprintf("%+.2f%%", 100*(c.ccusage/c.observer-1))
		}
		note := c.skip
		switch {
		case note != "":
		case c.unpriced:
			note = "observer has no price for a model of this row"
			t.Errorf("%v: observer has no price for a model of this row (ccusage $%.6f)", k, c.ccusage)
		case c.ccusage == 0 && c.observer == 0:
			note = "no dollars on either side"
		case c.ccusage == 0 || c.observer == 0:
			note = "only one side has this row"
			t.Errorf("%v: observer $%.6f, ccusage $%.6f: one of them misses it", k, c.observer, c.ccusage)
		default:
			want := 1.0
			if kd, ok := knownDiff[k.model]; ok {
				want, note = kd.ratio, kd.why
			}
			if math.Abs(c.ccusage/c.observer-want) > ccusageTolerance*want {
				t.Errorf("%v: observer $%.6f, ccusage $%.6f (ratio %.4f, want %.2f within 0.1%%)", k, c.observer, c.ccusage, c.ccusage/c.observer, want)
			}
			if c.obsTokens != c.ccTokens {
				t.Errorf("%v: observer counts %d tokens, ccusage %d", k, c.obsTokens, c.ccTokens)
			}
			c.compared = true
			compared++
			obsTotal += c.observer
			ccTotal += c.ccusage
		}
		fmt.Fprintf(&b, "%-11s %-10s %-54s %12.6f %12.6f %8s %12.6f %12d %12d  %s\n", k.client, k.day, k.model,
			c.observer, c.ccusage, diff, c.ccDaily, c.obsTokens, c.ccTokens, note)
	}
	fmt.Fprintf(&b, "compared %d rows: observer $%.6f, ccusage $%.6f (%+.3f%%)\n", compared, obsTotal, ccTotal, 100*(ccTotal/obsTotal-1))
	t.Log(b.String())
	return rows
}
