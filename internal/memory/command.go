package memory

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// A project's test command is the command its sessions run to test the whole project, not the run
// of one file or one test an agent makes while working on it: `npm test -- --run src/x.test.ts -t
// "Compaction Config"` and `go test -run TestX ./internal/memory/` teach `npm test` and `go test
// ./...`, and count as runs of it (the narrower runs are its evidence). TestCommand takes from
// the command line what selects some tests:
//
//   - npm, pnpm, yarn and bun scripts: "--" and what follows it (the arguments handed to the
//     test runner), and the script's own arguments that are not flags (files);
//   - go test: package paths (then "./...", the whole module, is the command) and -run, -skip,
//     -bench, -fuzz;
//   - pytest: paths and node ids, -k, -m, --lf, --ff, --sw;
//   - jest, vitest, mocha: paths and patterns (vitest's run and watch stay), -t,
//     --testNamePattern, --testPathPattern, -g, --grep, --run;
//   - cargo test and nextest: test name filters, "--" and what follows, --test, --bench,
//     --example, --bin;
//   - rspec, phpunit: paths, -e, --example, --filter; mvn -Dtest=; gradle --tests; dotnet test
//     --filter; ctest -R, -E.
//
// Flags that change how the tests run (-race, -v, --coverage) stay: they are part of how the
// project tests. A command's output filters (`| tail -20`, `| grep FAIL`) and redirections
// (`2>&1`, `> log`) go too; what precedes the runner in a compound command (`cd web &&`) stays.
func TestCommand(cmd string) string {
	segs := splitSegments(shellWords(cmd))
	var out []string
	for i, seg := range segs {
		if i > 0 && seg.op == "|" && outputFilter(seg.words) {
			continue
		}
		words := dropRedirections(seg.words)
		if len(words) == 0 {
			continue
		}
		if i > 0 && len(out) > 0 {
			out = append(out, seg.op)
		}
		out = append(out, narrowed(words)...)
	}
	return strings.Join(out, " ")
}

// segment is a simple command of a command line and the operator before it ("" for the first).
type segment struct {
	op    string
	words []string
}

var operators = []string{"&&", "||", ";", "|"}

// splitSegments cuts a command line's words at the operators between commands.
func splitSegments(words []string) []segment {
	segs := []segment{{}}
	for _, w := range words {
		if slices.Contains(operators, w) {
			segs = append(segs, segment{op: w})
			continue
		}
		if op, ok := trailingOperator(w); ok { // "./...;" or "x&&"
			segs[len(segs)-1].words = append(segs[len(segs)-1].words, strings.TrimSuffix(w, op))
			segs = append(segs, segment{op: op})
			continue
		}
		segs[len(segs)-1].words = append(segs[len(segs)-1].words, w)
	}
	return segs
}

func trailingOperator(w string) (string, bool) {
	if strings.HasPrefix(w, "'") || strings.HasPrefix(w, `"`) {
		return "", false
	}
	for _, op := range operators {
		if len(w) > len(op) && strings.HasSuffix(w, op) {
			return op, true
		}
	}
	return "", false
}

// outputFilter reports whether a piped command only filters what the test printed.
func outputFilter(words []string) bool {
	if len(words) == 0 {
		return false
	}
	switch path.Base(words[0]) {
	case "tail", "head", "grep", "egrep", "rg", "tee", "less", "more", "cat", "sort", "uniq", "wc", "cut", "awk", "sed", "jq", "column", "tr":
		return true
	}
	return false
}

var redirectRe = regexp.MustCompile(`^[0-9]*(>>?|<)(&[0-9-])?$|^&>>?$`)
var redirectToRe = regexp.MustCompile(`^([0-9]*>>?|&>>?|<)(&[0-9-]|[^&].*)$`)

// dropRedirections removes redirections (2>&1, >/dev/null, > log).
func dropRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case redirectToRe.MatchString(w) && !strings.HasPrefix(w, "-"):
		case redirectRe.MatchString(w):
			if !strings.Contains(w, "&") || strings.HasPrefix(w, "&") {
				i++ // "> log", "&> log": its target too
			}
		default:
			out = append(out, w)
		}
	}
	return out
}

// runnerSpec says what of a test runner's arguments selects some tests.
type runnerSpec struct {
	dashDash    bool              // "--" and what follows it go
	drop        func(string) bool // an argument that is not a flag and selects tests (a file, a package)
	keepWords   []string          // words right after the runner that stay (vitest run)
	valueFlags  []string          // flags that take a value and select tests: they go with it
	boolFlags   []string          // flags without a value that select tests
	prefixFlags []string          // flags written with their value that select tests (-Dtest=X)
	argFlags    []string          // flags that take a value and stay, with it (-tags x, -p 4)
	whole       string            // added when a path went and the command did not name this ("./...")
}

// pathLike reports whether a word names files or packages (or a test in one): it holds a slash
// or "::", is ".", or ends in a source file's extension.
func pathLike(w string) bool {
	w = strings.Trim(w, `'"`)
	if w == "." || strings.Contains(w, "/") || strings.Contains(w, "::") {
		return true
	}
	switch path.Ext(w) {
	case ".go", ".py", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte", ".rb", ".php", ".rs", ".java", ".kt", ".cs", ".feature":
		return true
	}
	return false
}

func always(string) bool { return true }

var (
	scriptSpec = runnerSpec{dashDash: true, drop: pathLike, valueFlags: []string{"-t", "--testNamePattern", "--testPathPattern"},
		argFlags: []string{"-w", "--workspace", "--filter", "-F", "--prefix", "-C", "--dir", "--cwd"}}
	goSpec = runnerSpec{drop: pathLike, valueFlags: []string{"-run", "-skip", "-bench", "-fuzz"}, whole: "./...",
		argFlags: []string{"-tags", "-timeout", "-count", "-p", "-parallel", "-cpu", "-coverprofile", "-covermode", "-coverpkg", "-o",
			"-exec", "-ldflags", "-gcflags", "-asmflags", "-benchtime", "-fuzztime", "-shuffle", "-vet", "-mod", "-C", "-outputdir",
			"-blockprofile", "-cpuprofile", "-memprofile", "-mutexprofile", "-trace", "-modfile", "-overlay", "-pgo"}}
	pytestSpec = runnerSpec{drop: pathLike, valueFlags: []string{"-k", "-m"}, boolFlags: []string{"--lf", "--last-failed", "--ff", "--failed-first", "--sw", "--stepwise"},
		argFlags: []string{"-n", "-p", "-c", "-o", "-W", "--tb", "--maxfail", "--cov", "--cov-report", "--rootdir", "--durations", "--junitxml", "--basetemp", "--dist"}}
	jsSpec = runnerSpec{drop: pathLike, keepWords: []string{"run", "watch"}, valueFlags: []string{"-t", "--testNamePattern", "--testPathPattern", "-g", "--grep"},
		boolFlags: []string{"--run"}, argFlags: []string{"-c", "--config", "-w", "--maxWorkers", "--shard", "--reporter", "--reporters", "--project",
			"--projects", "--testTimeout", "--env", "--environment", "--pool", "--root", "--dir", "-r", "--require", "--timeout"}}
	cargoSpec = runnerSpec{dashDash: true, drop: always, keepWords: []string{"run"}, valueFlags: []string{"--test", "--bench", "--example", "--bin", "-E"},
		argFlags: []string{"-p", "--package", "--features", "-F", "-j", "--jobs", "--target", "--profile", "--manifest-path", "--target-dir",
			"--color", "-Z", "--exclude"}}
	otherSpec = runnerSpec{drop: pathLike, valueFlags: []string{"-e", "--example", "--filter", "--tests", "-R", "-E"}, prefixFlags: []string{"-Dtest=", "-Dit.test="}}
)

// narrowed returns a simple command's words without what selects some tests, when it runs a test
// runner; else the words as they are.
func narrowed(words []string) []string {
	i := 0
	for i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-") {
		i++ // VAR=value before the program
	}
	if i >= len(words) {
		return words
	}
	prog := path.Base(words[i])
	rest := words[i+1:]
	headEnd := func(n int) int { return i + 1 + n } // the runner's words before its arguments
	switch prog {
	case "npm", "pnpm", "yarn", "bun":
		// The test script: "test", "test:unit", or "run test..." (flags before it stay).
		for j := 0; j < len(rest); j++ {
			w := rest[j]
			if strings.HasPrefix(w, "-") {
				if name, _, inline := strings.Cut(w, "="); !inline && slices.Contains(scriptSpec.argFlags, name) {
					j++ // --prefix web, --filter pkg
				}
				continue
			}
			if w == "run" || w == "run-script" {
				if j+1 < len(rest) && strings.HasPrefix(rest[j+1], "test") {
					return apply(words, headEnd(j+2), scriptSpec)
				}
				return words
			}
			if strings.HasPrefix(w, "test") {
				return apply(words, headEnd(j+1), scriptSpec)
			}
			if w == "exec" || w == "x" || w == "dlx" {
				return append(words[:headEnd(j+1):headEnd(j+1)], narrowed(rest[j+1:])...)
			}
			return words
		}
	case "npx", "bunx", "pnpx":
		return append(words[:i+1:i+1], narrowed(rest)...)
	case "go":
		if len(rest) > 0 && rest[0] == "test" {
			return apply(words, headEnd(1), goSpec)
		}
	case "cargo":
		if len(rest) > 0 && rest[0] == "test" {
			return apply(words, headEnd(1), cargoSpec)
		}
		if len(rest) > 0 && rest[0] == "nextest" {
			return apply(words, headEnd(1), cargoSpec)
		}
	case "pytest", "py.test":
		return apply(words, headEnd(0), pytestSpec)
	case "python", "python3":
		for j := 0; j+1 < len(rest); j++ {
			if rest[j] == "-m" && (rest[j+1] == "pytest" || rest[j+1] == "py.test") {
				return apply(words, headEnd(j+2), pytestSpec)
			}
		}
	case "bundle", "uv", "poetry", "pipenv", "hatch", "pdm", "rye":
		if len(rest) > 0 && (rest[0] == "exec" || rest[0] == "run") {
			return append(words[:headEnd(1):headEnd(1)], narrowed(rest[1:])...)
		}
	case "jest", "vitest", "mocha":
		return apply(words, headEnd(0), jsSpec)
	case "rspec", "phpunit", "ctest":
		return apply(words, headEnd(0), otherSpec)
	case "mvn", "mvnw", "gradle", "gradlew", "dotnet":
		if slices.Contains(rest, "test") {
			return apply(words, headEnd(0), runnerSpec{valueFlags: otherSpec.valueFlags, prefixFlags: otherSpec.prefixFlags, drop: pathLike})
		}
	}
	return words
}

// apply drops, from the arguments after words[:head], what spec says selects some tests.
func apply(words []string, head int, spec runnerSpec) []string {
	out := slices.Clone(words[:head])
	droppedPath, hasWhole := false, false
	args := words[head:]
	for j := 0; j < len(args); j++ {
		w := args[j]
		name, _, inline := strings.Cut(w, "=")
		switch {
		case w == "--":
			if spec.dashDash {
				j = len(args)
				continue
			}
			out = append(out, w)
		case slices.Contains(spec.valueFlags, name):
			if !inline {
				j++ // its value
			}
		case slices.Contains(spec.boolFlags, w), slices.ContainsFunc(spec.prefixFlags, func(p string) bool { return strings.HasPrefix(w, p) }):
		case slices.Contains(spec.argFlags, name):
			out = append(out, w)
			if !inline && j+1 < len(args) {
				j++
				out = append(out, args[j])
			}
		case strings.HasPrefix(w, "-"):
			out = append(out, w)
		case len(out) == head && slices.Contains(spec.keepWords, w):
			out = append(out, w)
		case spec.whole != "" && w == spec.whole:
			hasWhole = true
			out = append(out, w)
		case spec.drop != nil && spec.drop(w):
			droppedPath = true
		default:
			out = append(out, w)
		}
	}
	if droppedPath && spec.whole != "" && !hasWhole {
		out = append(out, spec.whole)
	}
	return out
}

// shellWords splits a command line into words as a shell would (white space outside quotes),
// each word keeping its quotes, so that the words joined with spaces give the command back.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' || r == '\t' || r == '\n':
			if b.Len() > 0 {
				words = append(words, b.String())
				b.Reset()
			}
			continue
		}
		b.WriteRune(r)
	}
	if b.Len() > 0 {
		words = append(words, b.String())
	}
	return words
}
