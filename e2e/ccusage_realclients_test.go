package e2e

import (
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// The sessions the real clients are run for, one model each: models both observer and ccusage's
// offline table price. The fake API names in its answer the model the client asked for, so the
// transcripts carry these.
var (
	realClaudeRuns = []string{"claude-opus-4-8", "claude-sonnet-4-5", "claude-opus-4-8"}
	realCodexRuns  = []string{"gpt-5.2-codex", "gpt-5.2-codex"}
)

// TestCcusage_RealClients runs the real Claude Code and Codex CLIs, offline, against the project's
// fake model API in one fresh HOME, so that they write their own transcripts (~/.claude/projects,
// ~/.codex/sessions): three Claude Code sessions on two models and two Codex sessions, each a
// tool round trip (two model calls). ccusage (offline, UTC) and observer then price that HOME as
// in TestCcusage_CostsAgree: within 0.1% and with the same token count wherever both price the
// model. Each client and model must come out
// compared, with as many tokens as the fake API returned for its calls, and ccusage's Claude daily
// report must agree with its session report (these transcripts carry a requestId on every line).
func TestCcusage_RealClients(t *testing.T) {
	bin := realclient.Find(t, "OBSERVER_CCUSAGE_BIN", "ccusage", "npm install -g "+CcusagePackage)
	claude, codex := realclient.FindClaude(t), realclient.FindCodex(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, CacheWrite5m: 222, CacheWrite1h: 111, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()

	home, repo := realclient.Dirs(t)
	for _, model := range realClaudeRuns {
		args := append(realclient.ClaudeArgs("list the files"), "--model", model)
		if out := realclient.Run(t, repo, realclient.ClaudeEnv(home, up.URL), claude, args...); !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("claude --model %s printed %q", model, out)
		}
	}
	for _, model := range realCodexRuns { // `codex exec` starts a new session each time
		args := realclient.CodexArgs(up.URL+"/v1", "list the files", false)
		args[slices.Index(args, "-m")+1] = model
		if out := realclient.Run(t, repo, realclient.CodexEnv(home), codex, args...); !strings.Contains(out, fakeapi.TextAfterTool) {
			t.Fatalf("codex -m %s printed %q", model, out)
		}
	}

	// The tokens the fake API returned, per client and model (codex: all models, as ccusage's
	// codex report prices whole days).
	wantTokens := map[[2]string]int64{}
	for _, r := range fake.Requests() {
		if r.Method != "POST" || r.ResponseID == "" {
			continue
		}
		switch r.Provider {
		case fakeapi.ProviderAnthropic:
			wantTokens[[2]string{"claude-code", r.Model}] += usage.Input + usage.Output + usage.CacheRead + usage.CacheWrite5m + usage.CacheWrite1h
		case fakeapi.ProviderOpenAI:
			wantTokens[[2]string{"codex", "*"}] += usage.Input + usage.Output + usage.CacheRead
		}
	}
	for _, m := range realClaudeRuns {
		if wantTokens[[2]string{"claude-code", m}] == 0 {
			t.Fatalf("the fake API answered no call for %s: %v", m, fakeapi.Summary(fake.Requests()))
		}
	}
	if wantTokens[[2]string{"codex", "*"}] == 0 {
		t.Fatalf("the fake API answered no codex call: %v", fakeapi.Summary(fake.Requests()))
	}

	rows := compareWithCcusage(t, bin, home, nil)
	got := map[[2]string]int64{}
	for k, c := range rows {
		if !c.compared {
			why := c.skip
			if why == "" {
				why = "not priced by both"
			}
			t.Errorf("%v not compared (%s): observer $%.6f, ccusage $%.6f", k, why, c.observer, c.ccusage)
			continue
		}
		got[[2]string{k.client, k.model}] += c.obsTokens
		// Real transcripts carry requestId on every line: ccusage's daily report, which
		// over-counts the corpus's lines without one, agrees with its session report here.
		if math.Abs(c.ccDaily-c.ccusage) > 0.005*c.ccusage {
			t.Errorf("%v: ccusage daily $%.6f, session $%.6f", k, c.ccDaily, c.ccusage)
		}
	}
	for k, want := range wantTokens {
		if got[k] != want {
			t.Errorf("%v: %d tokens compared, the fake API returned %d", k, got[k], want)
		}
	}
}
