package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/realclient"
)

// ccFig is one day and model of a report in ccusage's terms: its token buckets, its total-tokens
// count and its dollars.
type ccFig struct {
	input, output, cacheRead, cacheWrite, total int64
	usd                                         float64
}

// otherObsRow is one row of `observerctl cost --json --group-by client,day,model`, with the
// reasoning tokens (a part of output_tokens).
type otherObsRow struct {
	obsRow
	Reasoning int64 `json:"reasoning_tokens"`
}

// modelPrice is a model's price in force, per million tokens (`observerctl prices show --json`).
type modelPrice struct {
	Known bool `json:"known"`
	Price struct {
		Input     float64 `json:"input"`
		Output    float64 `json:"output"`
		CacheRead float64 `json:"cache_read"`
	} `json:"price"`
}

// How ccusage 20.0.24 counts each client's records, in observer's buckets (Input net of cache,
// Output with the reasoning inside, CacheRead, CacheCreation, Reasoning the part of Output spent
// reasoning). Read from its output on these runs (every dollar figure below was recomputed by hand
// from the tokens and the prices), and for Pi and OpenCode from its source too (ryoppippi/ccusage,
// crates/ccusage/src/adapter/pi.rs and opencode.rs).

// ccAsObserver: ccusage's buckets are observer's, its totalTokens their sum (Pi: pi-ai's usage
// {input, output, cacheRead, cacheWrite} is normalized that way, reasoning inside output, and pi
// keeps no reasoning count).
func ccAsObserver(o otherObsRow, _ modelPrice) ccFig {
	return ccFig{o.Input, o.Output, o.CacheRead, o.CacheCreation, o.Input + o.Output + o.CacheRead + o.CacheCreation, o.CostUSD}
}

// ccReasoningApart: the client's records keep the reasoning beside the output (Gemini CLI's
// tokens.output is candidatesTokenCount, thoughts apart; OpenCode's and Kilo's tokens.output
// leaves tokens.reasoning out). ccusage's outputTokens is that output without the reasoning, while
// its totalTokens and its dollars count the reasoning as output: everything else is observer's.
func ccReasoningApart(o otherObsRow, p modelPrice) ccFig {
	f := ccAsObserver(o, p)
	f.output -= o.Reasoning
	return f
}

// ccQwenDoubleCounts is ccusage's Qwen report: it reads each assistant record's usageMetadata as
// if every figure were apart from the others, inputTokens = promptTokenCount, outputTokens =
// candidatesTokenCount, cacheReadTokens = cachedContentTokenCount, and prices the
// thoughtsTokenCount as output beside candidatesTokenCount. But Qwen Code's promptTokenCount holds
// the cached tokens (Gemini's rule, and prompt_tokens through OpenAI-compatible APIs), and through
// OpenAI-compatible APIs, its default, candidatesTokenCount is completion_tokens, which holds the
// reasoning tokens thoughtsTokenCount repeats (Qwen Code 0.24.4's converter,
// convertOpenAIResponseToLlm; the records' own totalTokenCount is promptTokenCount +
// candidatesTokenCount). So ccusage counts the cached tokens twice, once at the input price and
// once at the cache-read price, and the reasoning tokens twice at the output price: its dollars
// are observer's plus CacheRead × the input price plus Reasoning × the output price, its input
// observer's Input + CacheRead and its totalTokens observer's total + CacheRead + Reasoning.
// Observer is right: its figures are the fake API's own (prompt_tokens 4642 with 4321 cached,
// completion_tokens 54 with 7 reasoning per call).
func ccQwenDoubleCounts(o otherObsRow, p modelPrice) ccFig {
	f := ccAsObserver(o, p)
	f.input += o.CacheRead
	f.total += o.CacheRead + o.Reasoning
	f.usd += (float64(o.CacheRead)*p.Price.Input + float64(o.Reasoning)*p.Price.Output) / 1e6
	return f
}

// ccOtherClient is one client ccusage reads besides Claude Code and Codex.
type ccOtherClient struct {
	name   string // the subtest and ccusage's subcommand
	client string // observer's client name (scan --client, cost rows)
	find   func(testing.TB) string
	model  string
	// run runs the client once in repo with home as its HOME, against the fake API at baseURL (its
	// root), and returns what it printed.
	run func(t *testing.T, bin, home, repo, baseURL, model string) string
	// expect is what ccusage reports for a day and model observer counts as o.
	expect func(o otherObsRow, p modelPrice) ccFig
	// noReasoning: the client's records keep no reasoning count (observer's Reasoning is 0).
	noReasoning bool
	modelPrefix string // ccusage's prefix to the model name
	// how ccusage prices the client's records, and the known difference with observer if any.
	how string
}

// writeConfig writes v as JSON to path, making its directory.
func writeConfig(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

var ccOtherClients = []ccOtherClient{
	{
		name: "gemini", client: "gemini-cli", find: realclient.FindGemini, model: "gemini-2.5-flash",
		run: func(t *testing.T, bin, home, repo, baseURL, model string) string {
			realclient.GeminiHome(t, home)
			return realclient.Run(t, repo, realclient.GeminiEnv(home, baseURL), bin, append(realclient.GeminiArgs("list the files"), "-m", model)...)
		},
		expect: ccReasoningApart,
		how:    "ccusage prices the records' tokens with its LiteLLM table; outputTokens leave the thoughts out, its dollars and totalTokens count them",
	},
	{
		name: "qwen", client: "qwen-code", find: realclient.FindQwen, model: realclient.FakeModel,
		run: func(t *testing.T, bin, home, repo, baseURL, model string) string {
			env := append(realclient.QwenEnv(home, baseURL+"/v1"), "OPENAI_MODEL="+model)
			return realclient.Run(t, repo, env, bin, realclient.QwenArgs("list the files")...)
		},
		expect: ccQwenDoubleCounts,
		how: "KNOWN DIFFERENCE: ccusage counts the cached tokens twice (promptTokenCount holds them) and the reasoning tokens twice " +
			"(candidatesTokenCount holds them through OpenAI-compatible APIs); see ccQwenDoubleCounts",
	},
	{
		// The custom provider of OpenCodeHome: OpenCode records cost 0, and ccusage prices the tokens.
		name: "opencode", client: "opencode", find: realclient.FindOpenCode, model: realclient.FakeModel,
		run: func(t *testing.T, bin, home, repo, baseURL, model string) string {
			if model != realclient.FakeModel {
				t.Fatalf("OpenCodeHome serves %s only", realclient.FakeModel)
			}
			realclient.OpenCodeHome(t, home, baseURL+"/v1")
			return realclient.Run(t, repo, realclient.OpenCodeEnv(home), bin, realclient.OpenCodeArgs("list the files")...)
		},
		expect: ccReasoningApart,
		how:    "ccusage prices the records' tokens with its LiteLLM table (OpenCode recorded cost 0: custom provider); outputTokens leave tokens.reasoning out, its dollars and totalTokens count it",
	},
	{
		// ccusage's Kilo report gives the cost Kilo recorded: with KiloHome's custom provider Kilo
		// records cost 0 and ccusage reports $0 (its OpenCode report prices the same records).
		// Kilo's built-in openai provider, pointed at the fake, prices each message from Kilo's own
		// models catalogue.
		name: "kilo", client: "kilo", find: realclient.FindKilo, model: realclient.FakeModel,
		run: func(t *testing.T, bin, home, repo, baseURL, model string) string {
			writeConfig(t, filepath.Join(home, ".config", "kilo", "kilo.json"), map[string]any{
				"autoupdate": false, "share": "disabled",
				"provider": map[string]any{"openai": map[string]any{"options": map[string]any{"baseURL": baseURL + "/v1", "apiKey": "sk-test"}}},
			})
			return realclient.Run(t, repo, realclient.OpenCodeEnv(home), bin, "run", "--auto", "list the files", "-m", "openai/"+model)
		},
		expect: ccReasoningApart,
		how:    "ccusage reports the cost Kilo recorded (its own catalogue's price for openai/" + realclient.FakeModel + "); outputTokens leave tokens.reasoning out, totalTokens count it",
	},
	{
		// ccusage's Pi report takes pi's recorded usage.cost.total, never prices (pi.rs): a custom
		// model without prices (PiHome's) records 0. pi's built-in openai provider, pointed at the
		// fake, prices each message from pi-ai's catalogue.
		name: "pi", client: "pi", find: realclient.FindPi, model: realclient.FakeModel,
		run: func(t *testing.T, bin, home, repo, baseURL, model string) string {
			writeConfig(t, filepath.Join(home, ".pi", "agent", "models.json"),
				map[string]any{"providers": map[string]any{"openai": map[string]any{"baseUrl": baseURL + "/v1"}}})
			env := append(realclient.PiEnv(home), "OPENAI_API_KEY=sk-test")
			return realclient.Run(t, repo, env, bin, "-p", "--provider", "openai", "--model", model, "list the files")
		},
		expect: ccAsObserver, noReasoning: true, modelPrefix: "[pi] ",
		how: "ccusage reports the cost pi recorded (pi-ai's catalogue price); pi's output holds the reasoning and keeps no count of it",
	},
}

// TestCcusage_OtherClients runs, one subtest each, the real Gemini CLI, Qwen Code, OpenCode, Kilo
// and Pi, offline, against the project's fake model API in a fresh HOME, for one tool round trip
// on a model both observer's price table and ccusage's price (gemini-2.5-flash for Gemini CLI, the
// fake OpenAI-compatible providers' gpt-5.2 for the others; the fake names in its answers the
// model asked for). ccusage (`ccusage NAME daily --json --offline`, UTC) and observer (`observerctl
// scan --client`, then `cost --json --group-by client,day,model`, UTC) then price that HOME, and
// per day and model:
//
//   - ccusage's dollars are within 0.1% of what it should report given observer's figures
//     (observer's own dollars, except for Qwen Code, where ccusage double counts: see
//     ccQwenDoubleCounts), and are not zero (a model ccusage does not price proves nothing);
//   - ccusage's input, output, cache-read and cache-write tokens are observer's in ccusage's terms
//     (see each client's expect), and its totalTokens per day the matching total;
//   - observer's tokens are the fake API's for the calls the client's records keep: the calls that
//     asked for a tool or carried its result. The client's side calls (OpenCode's and Kilo's title
//     request) are in no record, so neither side counts them.
//
// The table of every figure is logged.
func TestCcusage_OtherClients(t *testing.T) {
	bin := realclient.Find(t, "OBSERVER_CCUSAGE_BIN", "ccusage", "npm install -g "+CcusagePackage)
	for _, c := range ccOtherClients {
		t.Run(c.name, func(t *testing.T) { compareOtherClient(t, bin, c) })
	}
}

func compareOtherClient(t *testing.T, ccBin string, c ccOtherClient) {
	client := c.find(t)
	usage := fakeapi.Usage{Input: 321, Output: 54, CacheRead: 4321, Reasoning: 7}
	fake := fakeapi.New(fakeapi.Config{Usage: usage})
	up := httptest.NewServer(fake)
	defer up.Close()
	home, repo := realclient.Dirs(t)
	if out := c.run(t, client, home, repo, up.URL, c.model); !strings.Contains(out, fakeapi.TextAfterTool) {
		t.Fatalf("%s printed %q, not %q", c.name, out, fakeapi.TextAfterTool)
	}

	// The calls the client's records keep: the tool call and the answer to its result.
	calls := map[string]int64{} // per model
	var tools, results int
	var side []string
	for _, r := range fake.Requests() {
		if r.Method != "POST" || r.ResponseID == "" {
			continue
		}
		if r.Action != fakeapi.ActionToolCall && !r.ToolResult {
			side = append(side, r.Model+" "+r.Path)
			continue
		}
		calls[r.Model]++
		if r.Action == fakeapi.ActionToolCall {
			tools++
		}
		if r.ToolResult {
			results++
		}
	}
	if tools == 0 || results == 0 || len(calls) != 1 || calls[c.model] == 0 {
		t.Fatalf("the fake served %d tool calls and %d answers to a tool result, per model %v; want a round trip on %s: %v",
			tools, results, calls, c.model, fakeapi.Summary(fake.Requests()))
	}
	t.Logf("%s: %d calls on %s kept by the records; side calls in no record: %v", c.name, calls[c.model], c.model, side)

	var report struct {
		Daily []struct {
			Date string `json:"date"`
			ccTokens
			Total      int64         `json:"totalTokens"`
			Cost       float64       `json:"totalCost"`
			Breakdowns []ccBreakdown `json:"modelBreakdowns"`
		} `json:"daily"`
	}
	ccusage(t, ccBin, home, &report, c.name, "daily")

	// The environment variables that move a client's history away from HOME are cleared.
	s := newSuite(t, "HOME="+home, "TZ=UTC", "XDG_DATA_HOME=", "GEMINI_CLI_HOME=", "QWEN_HOME=", "QWEN_RUNTIME_DIR=",
		"PI_CODING_AGENT_DIR=", "PI_CODING_AGENT_SESSION_DIR=")
	if out, errOut, code := s.ctl(nil, "scan", "--client", c.client, "--json"); code != 0 {
		t.Fatalf("scan --client %s: exit %d\n%s\n%s", c.client, code, out, errOut)
	}
	var obs struct {
		Rows []otherObsRow `json:"rows"`
	}
	ctlJSON(t, s, &obs, "cost", "--json", "--group-by", "client,day,model")

	type key struct{ day, model string }
	type cmp struct {
		obs           otherObsRow
		cc, expected  ccFig
		hasObs, hasCC bool
	}
	rows := map[key]*cmp{}
	get := func(k key) *cmp {
		if rows[k] == nil {
			rows[k] = &cmp{}
		}
		return rows[k]
	}
	prices := map[string]modelPrice{}
	for _, r := range obs.Rows {
		if r.Client != c.client {
			t.Errorf("observer has a row of client %q: %+v", r.Client, r)
			continue
		}
		x := get(key{r.Day, r.Model})
		x.hasObs = true
		x.obs.Input += r.Input
		x.obs.Output += r.Output
		x.obs.CacheRead += r.CacheRead
		x.obs.CacheCreation += r.CacheCreation
		x.obs.Reasoning += r.Reasoning
		x.obs.Unpriced += r.Unpriced
		x.obs.CostUSD += r.CostUSD
		if _, ok := prices[r.Model]; !ok {
			var p modelPrice
			ctlJSON(t, s, &p, "prices", "show", r.Model, "--json")
			prices[r.Model] = p
		}
	}
	ccTotals := map[string]int64{} // per day
	for _, d := range report.Daily {
		ccTotals[d.Date] += d.Total
		for _, b := range d.Breakdowns {
			model, ok := strings.CutPrefix(b.Model, c.modelPrefix)
			if !ok {
				t.Errorf("ccusage model %q lacks the prefix %q", b.Model, c.modelPrefix)
			}
			x := get(key{d.Date, model})
			x.hasCC = true
			x.cc.input += b.Input
			x.cc.output += b.Output
			x.cc.cacheRead += b.CacheRead
			x.cc.cacheWrite += b.CacheWrite
			x.cc.usd += b.Cost
		}
	}

	keys := slices.SortedFunc(func(yield func(key) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	}, func(a, b key) int { return strings.Compare(a.day+a.model, b.day+b.model) })
	var tb strings.Builder
	fmt.Fprintf(&tb, "\n%s: %s\n%-10s %-18s %12s %12s %12s %8s  %-34s %-34s %-34s\n", c.name, c.how, "day", "model",
		"observer $", "ccusage $", "expected $", "ccu/obs", "observer in/out/cr/cw/reas", "ccusage in/out/cr/cw", "expected in/out/cr/cw/total")
	wantTotals := map[string]int64{}
	obsPerModel := map[string]otherObsRow{}
	for _, k := range keys {
		x := rows[k]
		o := x.obs
		x.expected = c.expect(o, prices[k.model])
		wantTotals[k.day] += x.expected.total
		m := obsPerModel[k.model]
		m.Input, m.Output, m.CacheRead, m.CacheCreation, m.Reasoning = m.Input+o.Input, m.Output+o.Output, m.CacheRead+o.CacheRead,
			m.CacheCreation+o.CacheCreation, m.Reasoning+o.Reasoning
		obsPerModel[k.model] = m
		ratio := math.NaN()
		if o.CostUSD > 0 {
			ratio = x.cc.usd / o.CostUSD
		}
		e := x.expected
		fmt.Fprintf(&tb, "%-10s %-18s %12.8f %12.8f %12.8f %8.4f  %-34s %-34s %-34s\n", k.day, k.model, o.CostUSD, x.cc.usd, e.usd, ratio,
			fmt.Sprintf("%d/%d/%d/%d/%d", o.Input, o.Output, o.CacheRead, o.CacheCreation, o.Reasoning),
			fmt.Sprintf("%d/%d/%d/%d", x.cc.input, x.cc.output, x.cc.cacheRead, x.cc.cacheWrite),
			fmt.Sprintf("%d/%d/%d/%d/%d", e.input, e.output, e.cacheRead, e.cacheWrite, e.total))
		switch {
		case !x.hasObs || !x.hasCC:
			t.Errorf("%v: only one side has it (observer %v, ccusage %v)", k, x.hasObs, x.hasCC)
			continue
		case o.Unpriced > 0 || o.CostUSD <= 0 || !prices[k.model].Known:
			t.Errorf("%v: observer does not price %s (%d unpriced turns, $%f)", k, k.model, o.Unpriced, o.CostUSD)
			continue
		case x.cc.usd <= 0:
			t.Errorf("%v: ccusage reports $0 for %s: it does not price it, and the comparison means nothing", k, k.model)
			continue
		}
		if math.Abs(x.cc.usd-e.usd) > ccusageTolerance*e.usd {
			t.Errorf("%v: ccusage $%.8f, expected $%.8f from observer's $%.8f (ratio %.4f)", k, x.cc.usd, e.usd, o.CostUSD, x.cc.usd/e.usd)
		}
		if got, want := [4]int64{x.cc.input, x.cc.output, x.cc.cacheRead, x.cc.cacheWrite}, [4]int64{e.input, e.output, e.cacheRead, e.cacheWrite}; got != want {
			t.Errorf("%v: ccusage tokens in/out/cache_read/cache_write %v, expected %v from observer's %d/%d/%d/%d (reasoning %d)",
				k, got, want, o.Input, o.Output, o.CacheRead, o.CacheCreation, o.Reasoning)
		}
	}
	for day, want := range wantTotals {
		if ccTotals[day] != want {
			t.Errorf("%s: ccusage totalTokens %d, expected %d from observer's figures", day, ccTotals[day], want)
		}
	}
	t.Log(tb.String())

	// Observer's tokens are the fake API's for the calls kept in the records.
	for model, n := range calls {
		reasoning := n * usage.Reasoning
		if c.noReasoning {
			reasoning = 0
		}
		got := obsPerModel[model]
		if g, w := [5]int64{got.Input, got.Output, got.CacheRead, got.CacheCreation, got.Reasoning},
			[5]int64{n * usage.Input, n * usage.Output, n * usage.CacheRead, 0, reasoning}; g != w {
			t.Errorf("%s: observer counts in/out/cache_read/cache_write/reasoning %v, the fake API returned %v for %d calls", model, g, w, n)
		}
	}
	for model := range obsPerModel {
		if calls[model] == 0 {
			t.Errorf("observer counts model %s, which the fake API never named in a kept call", model)
		}
	}
}
