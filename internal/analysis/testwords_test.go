package analysis

import (
	"testing"

	"github.com/observerhq/observer/internal/matchtest"
)

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
	matchtest.Same(t, runsTests, testCommandRe, testCommands)
}

func FuzzRunsTests(f *testing.F) { matchtest.Fuzz(f, runsTests, testCommandRe, testCommands) }
