package analysis

import "testing"

// testCommands holds every alternative of testCommandRe, and near misses.
var testCommands = []string{
	"go test", "pytest", "py.test", "npm test", "npm run test", "yarn test", "pnpm run test", "bun test",
	"cargo test", "cargo nextest", "jest", "vitest", "mocha", "rspec", "make test", "make check", "tox",
	"phpunit", "mvn test", "gradle test", "dotnet test", "ctest",
	"go testing", "gotest", "npm run tests", "make", "cargo build", "git status", "echo jest", "toxic",
	"", "ls -la", "rspec_helper", "CHECK", "mvn", "./check.sh",
}

// runsTests answers as testCommandRe does, on each alternative, in the places it may stand.
func TestRunsTests_SameAsTheExpression(t *testing.T) {
	n := 0
	for _, c := range testCommands {
		for _, cmd := range []string{c, c + " ./...", c + "s", "cd x && " + c, "/usr/bin/" + c, "x" + c, "a;" + c + "\nb"} {
			want := testCommandRe.MatchString(cmd)
			if got := runsTests(cmd); got != want {
				t.Errorf("runsTests(%q) = %v, the expression says %v", cmd, got, want)
			}
			if want {
				n++
			}
		}
	}
	if n < len(testCommands) {
		t.Fatalf("only %d of the commands run tests: the cases do not reach the expression", n)
	}
}

func FuzzRunsTests(f *testing.F) {
	for _, c := range testCommands {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if got, want := runsTests(cmd), testCommandRe.MatchString(cmd); got != want {
			t.Errorf("runsTests(%q) = %v, the expression says %v", cmd, got, want)
		}
	})
}
