package memory

import (
	"database/sql"
	"testing"

	"github.com/observerhq/observer/internal/matchtest"
)

// TestTestCommand: a run of one file or one test teaches the project's test command without its
// selection; flags that change how tests run stay, and so does what precedes the runner.
func TestTestCommand(t *testing.T) {
	for in, want := range map[string]string{
		`npm test -- --run src/core/compaction/x.test.ts -t "Compaction Config"`: "npm test",
		`npm test`:                                   "npm test",
		`npm run test -- src/a.test.ts`:              "npm run test",
		`npm run test:unit -- -t 'parses it'`:        "npm run test:unit",
		`pnpm --filter web test -- src/a.test.ts`:    "pnpm --filter web test",
		`yarn test src/components/Button.test.tsx`:   "yarn test",
		`yarn test --coverage`:                       "yarn test --coverage",
		`cd web && npm test -- --run src/a.test.ts`:  "cd web && npm test",
		`npx vitest run src/a.test.ts -t "a b"`:      "npx vitest run",
		`npx vitest --run src/a.test.ts`:             "npx vitest",
		`npx jest src/a.test.js --testNamePattern=x`: "npx jest",
		`npx jest --config jest.config.js src/a.js`:  "npx jest --config jest.config.js",
		`go test ./...`:                              "go test ./...",
		`go test -race ./...`:                        "go test -race ./...",
		`go test -run TestX ./internal/memory/`:      "go test ./...",
		`go test -tags sqlite_fts5 -race -run 'TestA|TestB' ./internal/memory/ ./pkg/x/`: "go test -tags sqlite_fts5 -race ./...",
		`go test -run TestX`: "go test",
		`go test -count=1 -timeout 10m ./pkg/store/ 2>&1 | tail -30`:      "go test -count=1 -timeout 10m ./...",
		`go test ./... 2>&1 | grep -E "FAIL|ok"`:                          "go test ./...",
		`pytest tests/test_api.py::test_login -k "login and not slow" -x`: "pytest -x",
		`python -m pytest tests/ -n 4 --lf`:                               "python -m pytest -n 4",
		`uv run pytest tests/test_a.py`:                                   "uv run pytest",
		`cargo test parser::tests::roundtrip -- --nocapture`:              "cargo test",
		`cargo test -p core --features serde my_test`:                     "cargo test -p core --features serde",
		`cargo nextest run -E 'test(foo)'`:                                "cargo nextest run",
		`bundle exec rspec spec/models/user_spec.rb -e "validates"`:       "bundle exec rspec",
		`vendor/bin/phpunit --filter testLogin tests/Unit/AuthTest.php`:   "vendor/bin/phpunit",
		`mvn test -Dtest=UserServiceTest`:                                 "mvn test",
		`./gradlew test --tests "com.x.UserTest"`:                         "./gradlew test",
		`dotnet test --filter FullyQualifiedName~Users`:                   "dotnet test",
		`make test`:                  "make test",
		`CI=true npm test -- a.ts`:   "CI=true npm test",
		`go build ./cmd/observerctl`: "go build ./cmd/observerctl",
	} {
		if got := TestCommand(in); got != want {
			t.Errorf("TestCommand(%s)\n = %s\nwant %s", in, got, want)
		}
	}
}

// Narrower runs count for the project's test command: one observation, `npm test`, supported by
// each session where a run of it (whole or narrowed) worked, with those runs as its evidence.
func TestDerive_TestCommandFromNarrowRuns(t *testing.T) {
	ok := sql.NullBool{Valid: true, Bool: true}
	failed := sql.NullBool{Valid: true}
	run := func(session, id, cmd string, ts int64, res sql.NullBool) sessAct {
		return sessAct{client: "claude-code", session: session, id: id, typ: "run_command", target: cmd, ts: ts, success: res}
	}
	narrow := `npm test -- --run src/core/compaction/config.test.ts -t "Compaction Config"`
	acts := []sessAct{
		run("s1", "a1", narrow, 1, failed),
		run("s1", "a2", narrow, 2, ok),
		run("s2", "b1", `npm test -- --run src/core/other.test.ts`, 3, ok),
		run("s3", "c1", "go build ./...", 4, ok),
	}
	byKey := func(acts []sessAct) map[string]*obs {
		m := map[string]*obs{}
		for _, o := range Derive(acts) {
			if o.kind == KindTestCommand {
				m[o.key] = o
			}
		}
		return m
	}
	got := byKey(acts)
	o := got["npm test"]
	if len(got) != 1 || o == nil {
		t.Fatalf("test commands %v, want only `npm test`", got)
	}
	if o.support != 2 || o.contra != 0 || len(o.evidence) != 2 || o.evidence[0].EventID != "a2" || o.evidence[1].EventID != "b1" {
		t.Errorf("npm test: support %d, against %d, evidence %+v; want 2, 0, [a2 b1]", o.support, o.contra, o.evidence)
	}
	if want := "tests run with `npm test` (seen only narrowed to some tests, as `npm test -- --run src/core/other.test.ts`)"; o.text != want {
		t.Errorf("text %q, want %q", o.text, want)
	}

	// Once the command itself runs, it is stated plainly; a session where every run failed
	// contradicts it.
	acts = append(acts, run("s4", "d1", "npm test", 5, ok), run("s5", "e1", narrow, 6, failed))
	o = byKey(acts)["npm test"]
	if o.support != 3 || o.contra != 1 || o.text != "tests run with `npm test`" {
		t.Errorf("npm test: support %d, against %d, text %q; want 3, 1, plain", o.support, o.contra, o.text)
	}
}

// buildCommands holds every alternative of buildRe, and near misses.
var buildCommands = []string{
	"go build", "go vet", "make", "make all", "make build", "npm build", "npm run build", "yarn build", "pnpm run build",
	"bun build", "cargo build", "cargo check", "tsc", "tsc -p .", "mvn package", "mvn compile", "mvn install",
	"gradle build", "gradle assemble", "dotnet build", "cmake --build", "ninja", "bazel build",
	"make Build", "makefile", "go run", "tscx", "ninjas", "mvn test", "gradle clean", "", "ls", "rebuild",
}

// buildsCode answers as buildRe does, on each alternative, in the places it may stand.
func TestBuildsCode_SameAsTheExpression(t *testing.T) {
	matchtest.Same(t, buildsCode, buildRe, buildCommands)
}

func FuzzBuildsCode(f *testing.F) { matchtest.Fuzz(f, buildsCode, buildRe, buildCommands) }
