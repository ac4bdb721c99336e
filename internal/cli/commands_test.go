package cli

import (
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
