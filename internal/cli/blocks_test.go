package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/blocks"
)

// costHome's turns make two blocks: one 48 hours ago ($1.50) and the active one, of a Codex turn
// an hour ago and a proxy turn 30 minutes ago ($0.75, over 30 minutes: $1.50 an hour).
func TestBlocks_JSONAndTable(t *testing.T) {
	home := costHome(t)
	run := func(args ...string) blocks.Report {
		t.Helper()
		code, out, errOut := runCtl(t, append([]string{"--home", home, "blocks", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("blocks %v: exit %d: %s", args, code, errOut)
		}
		var rep blocks.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("blocks %v: %v\n%s", args, err, out)
		}
		return rep
	}
	rep := run()
	if len(rep.Blocks) != 3 || !rep.Blocks[1].Idle || rep.Blocks[0].Turns != 1 || rep.Blocks[0].Active {
		t.Fatalf("last 7 days: %+v", rep.Blocks)
	}
	act := rep.Blocks[2]
	if !act.Active || act.Turns != 2 || math.Abs(act.CostUSD-0.75) > 1e-9 || act.Burn == nil || math.Abs(act.Burn.CostPerHourUSD-1.5) > 1e-6 ||
		act.Projected == nil || act.Remaining < 180 || act.Remaining > 240 || strings.Join(act.Models, ",") != "claude-sonnet-4-5,gpt-5" {
		t.Errorf("active block %+v", act)
	}
	if got := run("--active"); len(got.Blocks) != 1 || !got.Blocks[0].Start.Equal(act.Start) || got.Blocks[0].Turns != 2 {
		t.Errorf("--active: %+v", got.Blocks)
	}
	if got := run("--since", "1h"); len(got.Blocks) != 1 || !got.Blocks[0].Active {
		t.Errorf("--since 1h: %+v", got.Blocks)
	}
	if got := run("--since", "all", "--until", "24h"); len(got.Blocks) != 1 || got.Blocks[0].Active || got.Blocks[0].CostUSD != 1.5 {
		t.Errorf("--until 24h: %+v", got.Blocks)
	}
	code, out, _ := runCtl(t, "--home", home, "blocks")
	for _, want := range []string{"START", "ACTIVE", "finished", "idle ", "active block: ", "left", "$1.50/h", "gpt-5"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("table lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	code, out, _ = runCtl(t, "--home", home, "blocks", "--since", "3h", "--until", "2h")
	if code != 0 || !strings.Contains(out, "no model turns in this range") {
		t.Errorf("empty range: exit %d\n%s", code, out)
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
