package deps_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const (
	module = "github.com/observerhq/observer"
	// tags are the build's tags (Makefile TAGS): the rules hold for what is built.
	tags = "sqlite_fts5"
)

// surfaces are the binaries that only read the store and talk to the bus as clients.
var surfaces = []string{"cmd/observer-dash", "cmd/observer-mcp"}

// readModel lists the packages of the read model, the one package the CLI, the dashboard and the
// MCP server read the store through (STYLE.md, issue 30). The rules below hold it (no writer side,
// no bus host, never store.OpenWriter; database/sql allowed).
var readModel = []string{"internal/query"}

// writerSide are the packages that store events, or hold code only the writer runs: the writer,
// the transcript ingestion that feeds it, the budget alerts it raises, and the analysis and
// session memory it computes and stores.
var writerSide = []string{"internal/writer", "internal/ingest", "internal/budget", "internal/analysis", "internal/memory"}

// capture are the transcript readers (observer-watch, observerctl scan).
var capture = []string{"internal/readers", "pkg/transcript/..."}

// busHost is what hosts the bus: the NATS server, package busserver, the supervisor.
var busHost = []string{"github.com/nats-io/nats-server/...", "pkg/busserver", "internal/supervisor"}

// exception is one violation of a rule that is allowed today: from imports (or depends on) to.
type exception struct{ from, to, why string }

// TestPkgNeverImportsInternal: pkg/... is the contract every binary shares; internal/... is what is
// not. A package under pkg importing one under internal would make the contract depend on it.
func TestPkgNeverImportsInternal(t *testing.T) {
	g := load(t)
	checkImports(t, g, func(p string) bool { return strings.HasPrefix(p, "pkg/") }, matcher("internal/..."), nil)
}

// TestOnlyStoreSideImportsSQL: only the store, the read model and the writer side speak SQL; every
// other package reads through the read model (STYLE.md: the HTTP and CLI layers never write SQL).
// The transcript readers import database/sql too: they open the clients' own databases
// (OpenCode, Cursor, Goose, ...), never observer's.
func TestOnlyStoreSideImportsSQL(t *testing.T) {
	g := load(t)
	allowed := matcher(slices.Concat([]string{"pkg/store"}, readModel, writerSide, []string{"pkg/transcript/..."})...)
	checkImports(t, g, func(p string) bool { return !allowed(p) }, matcher("database/sql"), nil)
}

// sqlText finds SQL in Go source: a string that starts a statement (keywords in capitals, as this
// code base writes them), or a call that runs one.
var sqlText = regexp.MustCompile(`(?:^|[^\\])["\x60]\s*(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|PRAGMA\s+\w+|WITH\s+RECURSIVE\s)|\.(QueryContext|QueryRowContext|ExecContext|PrepareContext)\(`)

// TestNoSQLOutsideTheStoreSide: a package may run SQL on observer's store without importing
// database/sql (st.DB.QueryRowContext on a *store.Store's handle): the source of every package
// outside the store, the read model, the writer side and the transcript readers holds no SQL
// statement and no call that runs one.
func TestNoSQLOutsideTheStoreSide(t *testing.T) {
	g := load(t)
	allowed := matcher(slices.Concat([]string{"pkg/store"}, readModel, writerSide, []string{"pkg/transcript/..."})...)
	exceptions := map[string]string{}
	for _, p := range sortedKeys(g.pkgs) {
		if !g.ours(p) || allowed(p) {
			continue
		}
		hits := g.grep(t, p, sqlText)
		_, excepted := exceptions[p]
		switch {
		case len(hits) > 0 && !excepted:
			t.Errorf("%s runs SQL on the store itself; read through the read model (internal/query) or the store's API:\n\t%s", p, strings.Join(hits, "\n\t"))
		case len(hits) == 0 && excepted:
			t.Errorf("%s holds no SQL any more: remove its exception (%s) from this test", p, exceptions[p])
		}
	}
}

// writeText finds a write in Go source: a statement that changes the store (keywords in
// capitals, as this code base writes them; CREATE covers temporary tables and indexes too), or a
// call that runs or prepares one.
var writeText = regexp.MustCompile(`(?:^|[^\\])["\x60]\s*(INSERT\s+(OR\s+\w+\s+)?INTO\s|REPLACE\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+\w+|DROP\s+\w+|ALTER\s+TABLE\s)|\.(ExecContext|PrepareContext|Exec|Prepare)\(`)

// TestWriterSideWritesThroughTheStore: the writer side computes what the writer stores (the
// analysis, the session memory, the alerts) and hands it to pkg/store's functions in the writer's
// transaction (issue 30); it holds no write statement and runs none itself, so that every write to
// the store is in pkg/store. Its reads of the raw rows it computes from may stay.
func TestWriterSideWritesThroughTheStore(t *testing.T) {
	g := load(t)
	// exceptions allow a package's writes for now: package → why (none left).
	exceptions := map[string]string{}
	for _, p := range writerSide {
		if g.pkgs[p] == nil {
			continue // TestRulesNameExistingPackages reports it
		}
		hits := g.grep(t, p, writeText)
		_, excepted := exceptions[p]
		switch {
		case len(hits) > 0 && !excepted:
			t.Errorf("%s writes to the store itself; hand the rows to a pkg/store function that takes the writer's transaction:\n\t%s", p, strings.Join(hits, "\n\t"))
		case len(hits) == 0 && excepted:
			t.Errorf("%s writes only through the store now: remove its exception (%s) from this test", p, exceptions[p])
		}
	}
	for p := range exceptions {
		if !slices.Contains(writerSide, p) {
			t.Errorf("exception for %s, which is not on the writer side: remove it", p)
		}
	}
}

// TestSurfacesDoNotHostTheBus: observer-dash, observer-mcp and the read model talk to the bus, if
// at all, through package bus's client; they never link what hosts it.
func TestSurfacesDoNotHostTheBus(t *testing.T) {
	g := load(t)
	checkDeps(t, g, slices.Concat(surfaces, readModel), matcher(busHost...), nil)
}

// TestSurfacesDoNotWrite: observer-dash, observer-mcp and the read model read the store; they never
// depend on the writer side or the transcript readers, which belong to the writer and the watcher.
func TestSurfacesDoNotWrite(t *testing.T) {
	g := load(t)
	checkDeps(t, g, slices.Concat(surfaces, readModel), matcher(slices.Concat(writerSide, capture)...), nil)
}

// TestReadModelNeverWrites: the store is opened for writing by store.OpenWriter alone (it takes the
// writer's lock); OpenReader opens it read-only. Nothing observer-dash, observer-mcp or the read
// model links calls OpenWriter, so none of them can write.
func TestReadModelNeverWrites(t *testing.T) {
	g := load(t)
	roots := slices.Concat(surfaces, readModel)
	var found []string
	for _, root := range roots {
		parents := g.walk(t, root)
		for _, p := range sortedKeys(parents) {
			if p == "pkg/store" || !g.ours(p) {
				continue
			}
			for _, at := range g.calls(t, p, "pkg/store", "OpenWriter") {
				found = append(found, fmt.Sprintf("%s must not open the store for writing: it links %s, which calls store.OpenWriter at %s: %s", root, p, at, chain(parents, p)))
			}
		}
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestRulesNameExistingPackages keeps the rules from passing on packages that moved: every
// package they name exists.
func TestRulesNameExistingPackages(t *testing.T) {
	g := load(t)
	for _, p := range slices.Concat(surfaces, readModel, writerSide, []string{"internal/readers", "pkg/busserver", "internal/supervisor", "pkg/store"}) {
		if g.pkgs[p] == nil {
			t.Errorf("%s, named by a rule, is not a package of %s: update the rules in this file", p, module)
		}
	}
}

// checkImports fails for each package that from matches and that imports, itself, a package that
// to matches, unless exceptions allow it; and for each exception that no longer occurs.
func checkImports(t *testing.T, g *graph, from, to func(string) bool, exceptions []exception) {
	t.Helper()
	var found [][3]string // from, to, chain
	for _, p := range sortedKeys(g.pkgs) {
		if !g.ours(p) || !from(p) {
			continue
		}
		for _, imp := range g.pkgs[p].Imports {
			if to(g.short(imp)) {
				found = append(found, [3]string{p, g.short(imp), p + " → " + g.short(imp)})
			}
		}
	}
	report(t, "import", found, exceptions)
}

// checkDeps fails for each root that depends, directly or not, on a package that forbidden
// matches, naming the import chain, unless exceptions allow it; and for each exception that no
// longer occurs.
func checkDeps(t *testing.T, g *graph, roots []string, forbidden func(string) bool, exceptions []exception) {
	t.Helper()
	var found [][3]string
	for _, root := range roots {
		parents := g.walk(t, root)
		for _, p := range sortedKeys(parents) {
			if p != root && forbidden(p) {
				found = append(found, [3]string{root, p, chain(parents, p)})
			}
		}
	}
	report(t, "depend on", found, exceptions)
}

// report fails for each of found (from, to, chain) that no exception allows, saying that from must
// not verb to, and for each exception that allowed none.
func report(t *testing.T, verb string, found [][3]string, exceptions []exception) {
	t.Helper()
	used := make([]bool, len(exceptions))
	for _, f := range found {
		i := slices.IndexFunc(exceptions, func(e exception) bool { return e.from == f[0] && e.to == f[1] })
		if i >= 0 {
			used[i] = true
			continue
		}
		t.Errorf("%s must not %s %s: %s", f[0], verb, f[1], f[2])
	}
	for i, e := range exceptions {
		if !used[i] {
			t.Errorf("%s does not %s %s any more: remove that exception (%s) from this rule's list, so the rule holds from now on", e.from, verb, e.to, e.why)
		}
	}
}

// matcher matches the packages named by patterns (module paths short, as "pkg/store"; a trailing
// "/..." matches the package and those below it).
func matcher(patterns ...string) func(string) bool {
	return func(p string) bool {
		for _, pat := range patterns {
			if base, ok := strings.CutSuffix(pat, "/..."); ok {
				if p == base || strings.HasPrefix(p, base+"/") {
					return true
				}
			} else if p == pat {
				return true
			}
		}
		return false
	}
}

// chain is the import chain from the walk's root to p: "cmd/observer-dash → internal/dash → p".
func chain(parents map[string]string, p string) string {
	var c []string
	for ; p != ""; p = parents[p] {
		c = append(c, p)
	}
	slices.Reverse(c)
	return strings.Join(c, " → ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pkg is one package as `go list -json` describes it.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string // without the tests' imports: what the binaries link
}

// graph is the module's packages and all they depend on, keyed by short path (the module's own
// without the module prefix, as "internal/dash"; others in full).
type graph struct{ pkgs map[string]*pkg }

var (
	loadOnce sync.Once
	loaded   *graph
	loadErr  error
)

// load lists the module's packages and their dependencies once per test binary.
func load(tb testing.TB) *graph {
	tb.Helper()
	goCmd := cmp.Or(os.Getenv("GO"), "go")
	if _, err := exec.LookPath(goCmd); err != nil {
		tb.Skipf("no go command to list the packages with ($GO or go on PATH): %v", err)
	}
	loadOnce.Do(func() { loaded, loadErr = list(goCmd) })
	if loadErr != nil {
		tb.Fatal(loadErr)
	}
	return loaded
}

func list(goCmd string) (*graph, error) {
	cmd := exec.Command(goCmd, "list", "-deps", "-tags", tags, "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
	}
	g := &graph{pkgs: map[string]*pkg{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		g.pkgs[g.short(p.ImportPath)] = &p
	}
	return g, nil
}

// short drops the module prefix from the module's own packages.
func (g *graph) short(path string) string {
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest
	}
	return path
}

// ours reports whether p (short) is one of the module's packages.
func (g *graph) ours(p string) bool {
	return g.pkgs[p] != nil && (g.pkgs[p].ImportPath == module || strings.HasPrefix(g.pkgs[p].ImportPath, module+"/"))
}

// walk returns every package root depends on, root included, each with the package that imports
// it on a shortest chain from root ("" for root).
func (g *graph) walk(tb testing.TB, root string) map[string]string {
	tb.Helper()
	if g.pkgs[root] == nil {
		tb.Fatalf("%s, named by a rule, is not a package of %s: update the rules in this file", root, module)
	}
	parents := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range g.pkgs[p].Imports {
			imp = g.short(imp)
			if _, seen := parents[imp]; !seen && g.pkgs[imp] != nil {
				parents[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return parents
}

// grep returns the lines of package p's code (not its tests, not its comments) that re matches,
// as "p/file.go:line: text".
func (g *graph) grep(tb testing.TB, p string, re *regexp.Regexp) []string {
	tb.Helper()
	var hits []string
	for _, f := range slices.Concat(g.pkgs[p].GoFiles, g.pkgs[p].CgoFiles) {
		data, err := os.ReadFile(filepath.Join(g.pkgs[p].Dir, f))
		if err != nil {
			tb.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if trimmed := strings.TrimSpace(line); !strings.HasPrefix(trimmed, "//") && re.MatchString(line) {
				hits = append(hits, fmt.Sprintf("%s/%s:%d: %s", p, f, i+1, trimmed))
			}
		}
	}
	return hits
}

// calls returns where package p's code (not its tests) names the function fn of package target
// (both short), as "file.go:line".
func (g *graph) calls(tb testing.TB, p, target, fn string) []string {
	tb.Helper()
	want := module + "/" + target
	var at []string
	fset := token.NewFileSet()
	for _, name := range slices.Concat(g.pkgs[p].GoFiles, g.pkgs[p].CgoFiles) {
		path := filepath.Join(g.pkgs[p].Dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		local := ""
		for _, is := range f.Imports {
			if ip, _ := strconv.Unquote(is.Path.Value); ip == want {
				local = filepath.Base(target)
				if is.Name != nil {
					local = is.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == fn {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
					pos := fset.Position(sel.Pos())
					at = append(at, fmt.Sprintf("%s/%s:%d", p, name, pos.Line))
				}
			}
			return true
		})
	}
	return at
}
