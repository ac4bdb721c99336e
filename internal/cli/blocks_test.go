package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// blocksHome's turns interleave Claude Code and Codex (B is the current UTC hour): Claude Code
// has a block 30 hours back ($1.50) and an active one from B-3h (turns at B-3h+5m, B-2h and 2
// minutes ago: $0.75); Codex a block 50 hours back ($0.40) and an active one from B-1h (turns at
// B-1h+10m, 2 hours into Claude Code's block, and a minute ago: $1.00).
func blocksHome(t *testing.T) (home string, b time.Time) {
	t.Helper()
	home = t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	b = now.Truncate(time.Hour)
	use := func(id, client, model string, at time.Time, usd float64) event.Event {
		e := event.New(event.KindTokenUsage, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = id, client, client+"-s", "/work/"+client, at
		e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 100, Output: 10}, Model: model, MessageID: id, CostUSD: usd,
			Reliability: event.ReliabilityApproximate}
		return e
	}
	evs := []event.Event{
		use("c0", "claude-code", "claude-sonnet-4-5", b.Add(-30*time.Hour+10*time.Minute), 1.5),
		use("c1", "claude-code", "claude-sonnet-4-5", b.Add(-3*time.Hour+5*time.Minute), 0.25),
		use("c2", "claude-code", "claude-sonnet-4-5", b.Add(-2*time.Hour), 0.25),
		use("c3", "claude-code", "claude-sonnet-4-5", now.Add(-2*time.Minute), 0.25),
		use("x0", "codex", "gpt-5", b.Add(-50*time.Hour+20*time.Minute), 0.4),
		use("x1", "codex", "gpt-5", b.Add(-time.Hour+10*time.Minute), 0.5),
		use("x2", "codex", "gpt-5", now.Add(-time.Minute), 0.5),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return home, b
}

// TestBlocks_PerClient: each client's chain of blocks, --client, --active per client, the table.
func TestBlocks_PerClient(t *testing.T) {
	home, b := blocksHome(t)
	run := func(args ...string) query.BlocksReport {
		t.Helper()
		code, out, errOut := runCtl(t, append([]string{"--home", home, "blocks", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("blocks %v: exit %d: %s", args, code, errOut)
		}
		var rep query.BlocksReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("blocks %v: %v\n%s", args, err, out)
		}
		return rep
	}
	// desc is a report's blocks as client:start-offset-from-B/turns/dollars (idle: client:idle).
	desc := func(rep query.BlocksReport) string {
		var parts []string
		for _, bl := range rep.Blocks {
			if bl.Idle {
				parts = append(parts, bl.Client+":idle")
				continue
			}
			act := ""
			if bl.Active {
				act = "*"
			}
			parts = append(parts, fmt.Sprintf("%s:%v/%d/%.2f%s", bl.Client, bl.Start.Sub(b), bl.Turns, bl.CostUSD, act))
		}
		return strings.Join(parts, " ")
	}
	const (
		claudeOld    = "claude-code:-30h0m0s/1/1.50"
		claudeActive = "claude-code:-3h0m0s/3/0.75*"
		codexOld     = "codex:-50h0m0s/1/0.40"
		codexActive  = "codex:-1h0m0s/2/1.00*"
	)
	for _, c := range []struct {
		args   []string
		client string
		want   string
	}{
		{nil, "", strings.Join([]string{claudeOld, "claude-code:idle", claudeActive, codexOld, "codex:idle", codexActive}, " ")},
		{[]string{"--client", "codex"}, "codex", strings.Join([]string{codexOld, "codex:idle", codexActive}, " ")},
		{[]string{"--client", "claude"}, "claude-code", strings.Join([]string{claudeOld, "claude-code:idle", claudeActive}, " ")},
		{[]string{"--active"}, "", claudeActive + " " + codexActive},
		{[]string{"--active", "--client", "codex"}, "codex", codexActive},
		{[]string{"--active", "--client", "claude-code"}, "claude-code", claudeActive},
		{[]string{"--since", "1h"}, "", claudeActive + " " + codexActive},
		{[]string{"--since", "all", "--until", "24h"}, "", claudeOld + " " + codexOld},
		{[]string{"--client", "cursor"}, "cursor", ""}, // known, no turns: no blocks
	} {
		if rep := run(c.args...); desc(rep) != c.want || rep.Client != c.client {
			t.Errorf("blocks %v: client %q, %s\nwant client %q, %s", c.args, rep.Client, desc(rep), c.client, c.want)
		}
	}
	// Claude Code's active block: its burn rate over its own turns only, the Codex one left out.
	act := run("--active", "--client", "claude-code").Blocks[0]
	span := act.LastTurn.Sub(act.FirstTurn).Hours()
	if strings.Join(act.Models, ",") != "claude-sonnet-4-5" || act.Burn == nil || math.Abs(act.Burn.CostPerHourUSD-0.75/span) > 1e-6 ||
		act.Projected == nil || act.Remaining < 60 || act.Remaining > 120 || act.Tokens.Total != 330 {
		t.Errorf("claude-code's active block %+v", act)
	}
	code, out, _ := runCtl(t, "--home", home, "blocks")
	for _, want := range []string{"CLIENT", "START", "ACTIVE", "finished", "idle ", "active block of claude-code: ", "active block of codex: ",
		"left", "gpt-5"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("table lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if i, j := strings.Index(out, "\nclaude-code "), strings.Index(out, "\ncodex "); i < 0 || j < i {
		t.Errorf("rows not client by client:\n%s", out)
	}
	code, out, _ = runCtl(t, "--home", home, "blocks", "--client", "cursor")
	if code != 0 || !strings.Contains(out, "no model turns of cursor in this range") {
		t.Errorf("--client cursor: exit %d\n%s", code, out)
	}
	code, out, _ = runCtl(t, "--home", home, "blocks", "--since", "20h", "--until", "10h")
	if code != 0 || !strings.Contains(out, "no model turns in this range") {
		t.Errorf("empty range: exit %d\n%s", code, out)
	}
	code, out, _ = runCtl(t, "--home", home, "blocks", "--active", "--client", "codex")
	if code != 0 || strings.Contains(out, "claude-code") || !strings.Contains(out, "active block of codex: ") {
		t.Errorf("--active --client codex: exit %d\n%s", code, out)
	}
}

func TestBlocks_Errors(t *testing.T) {
	home := costHome(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--home", t.TempDir(), "blocks"}, ExitUnavailable, "no store"},
		{[]string{"--home", home, "blocks", "--since", "yesterday"}, ExitUsage, "--since"},
		{[]string{"--home", home, "blocks", "--until", "-3h"}, ExitUsage, "--until"},
		{[]string{"--home", home, "blocks", "--since", "1d", "--until", "2d"}, ExitUsage, "must be after"},
		{[]string{"--home", home, "blocks", "--bogus"}, ExitUsage, "bogus"},
		{[]string{"--home", home, "blocks", "--client", "nobody"}, ExitUsage, `no client "nobody": the store has turns of claude-code, codex`},
		{[]string{"--home", home, "blocks", "--active", "--client", "nobody"}, ExitUsage, "known clients: aider, amp, "},
	} {
		code, _, errOut := runCtl(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d (%q), want %d mentioning %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// TestNewCommands_Help: each command documents its exit codes in --help.
func TestNewCommands_Help(t *testing.T) {
	for _, cmd := range []string{"blocks", "budget", "statusline", "metrics"} {
		code, out, _ := runCtl(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "USAGE:") || !strings.Contains(out, "DESCRIPTION:") || !strings.Contains(out, "Exit codes: 0") {
			t.Errorf("%s --help: exit %d\n%s", cmd, code, out)
		}
	}
}
