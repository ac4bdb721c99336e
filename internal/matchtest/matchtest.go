// Package matchtest holds a command matcher that looks for words before it runs its regular
// expression (analysis' test commands, memory's build commands) to the expression alone.
package matchtest

import (
	"regexp"
	"testing"
)

// places are the ways a command stands in a command line: alone, with arguments, run on from
// another word, after another command, by path, in the middle of a script.
var places = []func(string) string{
	func(c string) string { return c },
	func(c string) string { return c + " ./..." },
	func(c string) string { return c + "s" },
	func(c string) string { return "cd x && " + c },
	func(c string) string { return "/usr/bin/" + c },
	func(c string) string { return "x" + c },
	func(c string) string { return "a;" + c + "\nb" },
}

// Same fails t where match and re disagree on a command of cmds in any of its places, and when
// re matches fewer of them than there are commands (the cases would not reach the expression).
func Same(t *testing.T, match func(string) bool, re *regexp.Regexp, cmds []string) {
	t.Helper()
	n := 0
	for _, c := range cmds {
		for _, place := range places {
			cmd := place(c)
			want := re.MatchString(cmd)
			if got := match(cmd); got != want {
				t.Errorf("%q: the matcher says %v, the expression %v", cmd, got, want)
			}
			if want {
				n++
			}
		}
	}
	if n < len(cmds) {
		t.Fatalf("the expression matches only %d of the commands in their places: the cases do not reach it", n)
	}
}

// Fuzz runs match against re on cmds and on what the fuzzer makes of them.
func Fuzz(f *testing.F, match func(string) bool, re *regexp.Regexp, cmds []string) {
	for _, c := range cmds {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if got, want := match(cmd), re.MatchString(cmd); got != want {
			t.Errorf("%q: the matcher says %v, the expression %v", cmd, got, want)
		}
	})
}
