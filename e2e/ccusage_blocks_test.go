package e2e

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/realclient"
)

// obsBlock is one block of `observerctl blocks --json`.
type obsBlock struct {
	Client   string    `json:"client"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	LastTurn time.Time `json:"last_turn"`
	Idle     bool      `json:"idle"`
	Turns    int64     `json:"turns"`
	CostUSD  float64   `json:"cost_usd"`
	Tokens   struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheRead     int64 `json:"cache_read_tokens"`
		CacheCreation int64 `json:"cache_creation_tokens"`
	} `json:"tokens"`
}

// TestCcusage_Blocks: ccusage's `blocks` report reads Claude Code's transcripts only, so
// observer's claude-code blocks (`observerctl blocks --client claude-code --since all`) must be
// its blocks on the corpus: the same starts and ends, turns (ccusage's entries), four token
// buckets and dollars (within ccusageTolerance). A block's last turn may differ by seconds:
// ccusage takes the last transcript line of a message written over several lines, observer the
// turn's own time; it must be within a minute. The corpus's Codex turns make blocks of their own,
// which the report of every client has beside Claude Code's, unchanged.
func TestCcusage_Blocks(t *testing.T) {
	bin := realclient.Find(t, "OBSERVER_CCUSAGE_BIN", "ccusage", "npm install -g "+CcusagePackage)
	clientHome := corpusHome(t)
	var cc struct {
		Blocks []struct {
			Start     time.Time `json:"startTime"`
			End       time.Time `json:"endTime"`
			ActualEnd time.Time `json:"actualEndTime"`
			Gap       bool      `json:"isGap"`
			Entries   int64     `json:"entries"`
			Cost      float64   `json:"costUSD"`
			Tokens    struct {
				Input      int64 `json:"inputTokens"`
				Output     int64 `json:"outputTokens"`
				CacheRead  int64 `json:"cacheReadInputTokens"`
				CacheWrite int64 `json:"cacheCreationInputTokens"`
			} `json:"tokenCounts"`
		} `json:"blocks"`
	}
	ccusage(t, bin, clientHome, &cc, "blocks")

	s := newSuite(t, "HOME="+clientHome, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "TZ=UTC")
	if out, errOut, code := s.ctl(nil, "scan", "--json"); code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errOut)
	}
	blocks := func(args ...string) []obsBlock {
		t.Helper()
		out, errOut, code := s.ctl(nil, append([]string{"blocks", "--since", "all", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("blocks %v: exit %d %s", args, code, errOut)
		}
		var rep struct {
			Blocks []obsBlock `json:"blocks"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("blocks %v: %v\n%s", args, err, out)
		}
		return rep.Blocks
	}
	claude := blocks("--client", "claude-code")
	var got []obsBlock
	for _, b := range claude {
		if b.Client != "claude-code" {
			t.Errorf("--client claude-code gave a %s block", b.Client)
		}
		if !b.Idle {
			got = append(got, b)
		}
	}
	var n int
	for _, w := range cc.Blocks {
		if w.Gap {
			continue
		}
		if n == len(got) {
			t.Errorf("ccusage has a block at %v observer lacks", w.Start)
			continue
		}
		g := got[n]
		n++
		t.Logf("%v..%v  turns %d/%d  tokens %d/%d  $%.4f/$%.4f  last %v/%v", g.Start, g.End, g.Turns, w.Entries,
			g.Tokens.Input+g.Tokens.Output+g.Tokens.CacheRead+g.Tokens.CacheCreation,
			w.Tokens.Input+w.Tokens.Output+w.Tokens.CacheRead+w.Tokens.CacheWrite, g.CostUSD, w.Cost, g.LastTurn, w.ActualEnd)
		if !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Turns != w.Entries ||
			g.Tokens.Input != w.Tokens.Input || g.Tokens.Output != w.Tokens.Output || g.Tokens.CacheRead != w.Tokens.CacheRead ||
			g.Tokens.CacheCreation != w.Tokens.CacheWrite || math.Abs(g.CostUSD-w.Cost) > ccusageTolerance*max(w.Cost, 0.01) ||
			g.LastTurn.After(w.ActualEnd) || w.ActualEnd.Sub(g.LastTurn) > time.Minute {
			t.Errorf("block %d: observer %+v\nccusage %+v", n-1, g, w)
		}
	}
	if n < len(got) {
		t.Errorf("observer has %d claude-code blocks, ccusage %d", len(got), n)
	}
	if n < 3 {
		t.Fatalf("only %d blocks compared: the corpus or a report came out empty", n)
	}
	// Every client's report: Claude Code's chain as above, and Codex's of its own.
	var codex int
	var mine []obsBlock
	for _, b := range blocks() {
		switch b.Client {
		case "claude-code":
			mine = append(mine, b)
		case "codex":
			codex++
		}
	}
	if len(mine) != len(claude) || codex == 0 {
		t.Errorf("every client's report: %d claude-code blocks (want %d), %d codex", len(mine), len(claude), codex)
	}
	for i := range min(len(mine), len(claude)) {
		if mine[i] != claude[i] {
			t.Errorf("claude-code block %d differs in every client's report: %+v\n%+v", i, mine[i], claude[i])
		}
	}
}
