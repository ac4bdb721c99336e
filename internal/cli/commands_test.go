package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryCommand_HelpAndBadFlag: every command (and subcommand) answers --help with its usage
// and exit codes, and refuses an unknown flag with exit 64 and a pointer to --help, without doing
// anything else.
func TestEveryCommand_HelpAndBadFlag(t *testing.T) {
	home := t.TempDir()
	app := newApp(nil, nil, nil)
	var walk func(path []string, cmds []*cli.Command)
	seen := 0
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			args := append(append([]string{}, path...), c.Name)
			seen++
			code, out, errOut := runCtl(t, append([]string{"--home", home}, append(args, "--help")...)...)
			if code != 0 || !strings.Contains(out, "USAGE") || !strings.Contains(out, c.Usage) {
				t.Errorf("%v --help: exit %d, stdout lacks USAGE or its usage line:\n%s%s", args, code, out, errOut)
			}
			if len(c.Subcommands) == 0 && !strings.Contains(out, "Exit code") {
				t.Errorf("%v --help does not give its exit codes", args)
			}
			code, _, errOut = runCtl(t, append([]string{"--home", home}, append(args, "--no-such-flag")...)...)
			if code != ExitUsage || !strings.Contains(errOut, "no-such-flag") {
				t.Errorf("%v --no-such-flag: exit %d, want %d naming the flag: %s", args, code, ExitUsage, errOut)
			}
			walk(args, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	if seen < 30 {
		t.Errorf("walked %d commands, want every command of observerctl", seen)
	}
}

// A command that only reads creates nothing: neither the home directory nor config.toml (a user
// trying `observerctl cost` before ever starting observer finds no ~/.observer afterwards).
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	for _, args := range [][]string{{"cost"}, {"export"}, {"discover"}, {"patterns"}, {"score"}, {"blocks"}, {"metrics"},
		{"doctor"}, {"statusline"}, {"status"}, {"logs", "writer"}, {"prices", "show", "gpt-5"}, {"prices", "list"}, {"prices", "diff"}} {
		home := filepath.Join(t.TempDir(), "obs")
		runCtl(t, append([]string{"--home", home}, args...)...)
		if _, err := os.Stat(home); err == nil {
			t.Errorf("%v created %s", args, home)
		}
	}
	// A command that changes the home still writes the commented defaults.
	home := filepath.Join(t.TempDir(), "obs")
	db := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(db, []byte(`{"m-1": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6}}`), 0o600)
	if code, _, errOut := runCtl(t, "--home", home, "prices", "update", "--from", db); code != 0 {
		t.Fatalf("prices update: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "config.toml")); err != nil {
		t.Errorf("prices update wrote no config.toml: %v", err)
	}
}
