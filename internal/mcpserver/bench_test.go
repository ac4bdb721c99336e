package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// The benchmark store: a million actions over two thousand sessions of fifty projects, ninety days.
const (
	benchActions  = 1_000_000
	benchSessions = 2000
	benchProjects = 50
	benchDays     = 90
	benchFiles    = 400 // per project
	benchVersion  = "v1"
)

type benchProject struct {
	path  string
	files []string
	cmds  []string
}

var benchNames = []string{"api", "billing", "web", "cli", "infra", "auth", "search", "mobile", "ml", "docs"}

// benchStoreDir is where the benchmark store is built once and reused: $OBSERVER_MCP_BENCH_DIR,
// or a directory under the system's temporary directory.
func benchStoreDir() string {
	if d := os.Getenv("OBSERVER_MCP_BENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "observer-mcp-bench-"+benchVersion)
}

// genBenchStore builds the benchmark store in dir through the writer's own WriteBatch (one
// transaction per 20,000 events), then the full-text index, and writes the projects' files to
// disk for check_file_freshness to hash. A finished store (its "done" marker) is reused.
func genBenchStore(tb testing.TB, dir string) (string, []benchProject) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	projects := benchProjectsIn(dir, rng)
	path := filepath.Join(dir, "observer.db")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return path, projects
	}
	start := time.Now()
	os.RemoveAll(dir)
	for _, p := range projects {
		for _, f := range p.files {
			full := filepath.Join(p.path, f)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(fileContent(f)), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Join(p.path, ".git"), 0o755)
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	st.DB.Exec("PRAGMA synchronous = OFF") // a benchmark fixture: durability does not matter

	g := &benchGen{rng: rng, projects: projects, end: time.Now().Truncate(time.Second)}
	g.vocab = benchVocab(rng)
	g.zipf = rand.NewZipf(rng, 1.1, 2, uint64(len(g.vocab)-1))
	var batch []event.Event
	flush := func() {
		if _, err := st.WriteBatch(ctx, batch, nil); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range benchSessions {
		n := benchActions / benchSessions
		batch = g.session(i, n, batch)
		if len(batch) >= 20000 {
			flush()
		}
	}
	flush()
	loaded := time.Since(start)
	for {
		n, err := st.IndexOutputs(ctx, 100000)
		if err != nil {
			tb.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if _, err := st.DB.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("benchmark store: %d actions loaded in %v, indexed in %v, at %s", benchActions, loaded.Round(time.Second),
		(time.Since(start) - loaded).Round(time.Second), path)
	return path, projects
}

// benchProjectsIn lays out the fifty projects: their paths under dir, files and usual commands.
func benchProjectsIn(dir string, rng *rand.Rand) []benchProject {
	var out []benchProject
	for i := range benchProjects {
		name := fmt.Sprintf("%s-%02d", benchNames[i%len(benchNames)], i)
		p := benchProject{path: filepath.Join(dir, "projects", name)}
		ext, test := []string{".go", ".ts", ".py"}[i%3], []string{"go test ./...", "npm test", "pytest -q"}[i%3]
		for j := range benchFiles {
			p.files = append(p.files, fmt.Sprintf("%s/%s/file_%03d%s", []string{"src", "pkg", "internal", "lib"}[j%4],
				benchNames[(j/4)%len(benchNames)], j, ext))
		}
		p.cmds = []string{test, test + " -run TestStore", "git status", "git diff", "ls -la", "make build", "make lint",
			"git log --oneline -10", "rg -n TODO", "cat README.md"}
		for j := range 30 {
			p.cmds = append(p.cmds, fmt.Sprintf("rg -n 'func %s' %s", benchNames[j%len(benchNames)], p.files[rng.IntN(len(p.files))]))
		}
		out = append(out, p)
	}
	return out
}

func fileContent(path string) string { return "// " + path + "\n" + strings.Repeat("x := 1\n", 200) }

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// benchVocab is 3,000 made-up words; outputs draw from it with a Zipf law, so a few words are in
// most outputs and most words in few, as in real tool output.
func benchVocab(rng *rand.Rand) []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qu", "ix", "or", "an", "el", "um"}
	seen := map[string]bool{}
	out := []string{"error", "ok", "FAIL", "PASS", "func", "return", "import", "test", "build", "warning"}
	for len(out) < 3000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

type benchGen struct {
	rng      *rand.Rand
	projects []benchProject
	vocab    []string
	zipf     *rand.Zipf
	end      time.Time
	msg      int
}

func (g *benchGen) output() string {
	n := 8 + g.rng.IntN(30)
	words := make([]string, n)
	for i := range words {
		words[i] = g.vocab[g.zipf.Uint64()]
	}
	return strings.Join(words, " ")
}

// session appends one session's events: its actions every few seconds from a start spread over
// the ninety days, a token_usage row every third action (a quarter of sessions seen by the proxy
// too), session states and compactions.
func (g *benchGen) session(i, n int, evs []event.Event) []event.Event {
	rng := g.rng
	p := &g.projects[int(float64(benchProjects)*rng.Float64()*rng.Float64())] // a few projects busier
	client, sid := "claude-code", fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()>>16)
	if rng.IntN(10) < 3 {
		client = "codex"
		sid = fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()>>16)
	}
	span := time.Duration(benchDays) * 24 * time.Hour
	// Sessions are generated in time order, as a writer would receive them.
	t := g.end.Add(-span).Add(time.Duration(float64(span-6*time.Hour) * float64(i) / benchSessions))
	live := g.end.Sub(t) < 14*24*time.Hour // followed by the watcher: content hashes
	proxied := rng.IntN(4) == 0
	base := event.Event{Client: client, SessionID: sid, Project: p.path, V: event.SchemaVersion}
	add := func(kind event.Kind, key string) *event.Event {
		ev := base
		ev.Kind, ev.ID, ev.Time, ev.Source = kind, event.ID("bench", sid, key), t, "bench"
		evs = append(evs, ev)
		return &evs[len(evs)-1]
	}
	add(event.KindSession, "start").Session = &event.Session{State: event.SessionStarted, Cwd: p.path}
	epoch := 0
	for j := range n {
		t = t.Add(time.Duration(2+rng.IntN(20)) * time.Second)
		ev := add(event.KindAction, strconv.Itoa(j))
		a := &event.Action{Tool: "T", DurationMs: int64(rng.IntN(3000))}
		ok := rng.IntN(100) >= 7
		a.Success = &ok
		switch r := rng.IntN(100); {
		case r < 30:
			a.Type, a.Target = event.ActionReadFile, p.files[int(float64(benchFiles)*rng.Float64()*rng.Float64())]
			a.Output = g.output()
			if live && ok {
				a.ContentHash = sha(fileContent(a.Target))
				if rng.IntN(4) == 0 {
					a.ContentHash = sha(a.Target + strconv.Itoa(j)) // changed since
				}
			}
		case r < 40:
			a.Type, a.Target = event.ActionEditFile, p.files[int(float64(benchFiles)*rng.Float64()*rng.Float64())]
			if live && ok {
				a.ContentHash = sha(a.Target + strconv.Itoa(j))
			}
		case r < 43:
			a.Type, a.Target = event.ActionWriteFile, p.files[rng.IntN(benchFiles)]
		case r < 73:
			a.Type, a.Target = event.ActionRunCommand, p.cmds[int(float64(len(p.cmds))*rng.Float64()*rng.Float64())]
			a.Output = g.output()
		case r < 81:
			a.Type, a.Target = event.ActionSearchText, g.vocab[g.zipf.Uint64()]
			a.Output = g.output()
		case r < 86:
			a.Type, a.Target = event.ActionSearchFiles, "**/*"+filepath.Ext(p.files[0])
		case r < 90:
			a.Type, a.Target, a.Success = event.ActionUserPrompt, "please "+g.output(), nil
		case r < 93:
			a.Type = event.ActionTodoUpdate
		case r < 94 && j > 50:
			a.Type, a.Tool, a.Target = event.ActionContextCompacted, "compact_boundary", "auto"
			epoch++
			se := add(event.KindSession, "epoch"+strconv.Itoa(epoch))
			se.Session = &event.Session{State: event.SessionActive, Epoch: epoch}
		default:
			a.Type, a.Target = event.ActionWebFetch, "https://example.com/"+g.vocab[rng.IntN(len(g.vocab))]
		}
		if a.Success != nil && !*a.Success {
			a.Error = "exit status 1: " + g.output()
		}
		a.OutputSize = int64(len(a.Output)) * int64(1+rng.IntN(20))
		ev.Action = a
		if j%3 == 0 {
			g.msg++
			msg := "msg_bench_" + strconv.Itoa(g.msg)
			tok := event.Tokens{Input: int64(rng.IntN(50)), Output: int64(50 + rng.IntN(800)), CacheRead: int64(rng.IntN(80000)),
				CacheCreation: int64(rng.IntN(5000))}
			usd := float64(tok.Output)*15e-6 + float64(tok.CacheRead)*0.3e-6 + float64(tok.CacheCreation)*3.75e-6
			u := add(event.KindTokenUsage, "u"+strconv.Itoa(j))
			u.TokenUsage = &event.TokenUsage{Tokens: tok, MessageID: msg, Model: "claude-sonnet-4-5", CostUSD: usd,
				Reliability: event.ReliabilityApproximate, Origin: "transcript"}
			if proxied {
				pt := add(event.KindAPITurn, "p"+strconv.Itoa(j))
				pt.APITurn = &event.APITurn{Tokens: tok, Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-sonnet-4-5",
					MessageID: msg, Status: 200, CostUSD: usd, Reliability: event.ReliabilityAccurate}
			}
		}
	}
	add(event.KindSession, "end").Session = &event.Session{State: event.SessionFinalized, Epoch: epoch}
	return evs
}

// benchCall is one tool call of the benchmark with arguments drawn for it.
type benchCall struct {
	name string
	args func() map[string]any
}

// BenchmarkTools reports each tool's p50 and p95 latency (through the SDK's client and server on
// an in-memory transport) on the million-action store, and the size of the tools/list answer.
// Run it alone (scripts/bench-mcp.sh): the first run builds the store, later runs reuse it.
func BenchmarkTools(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a million-action store")
	}
	path, projects := genBenchStore(b, benchStoreDir())
	benchMemory(b, path)
	db := roDB(b, path)
	newest := queryInt(b, db, `SELECT max(ts) FROM actions`)
	maxID := queryInt(b, db, `SELECT max(id) FROM actions`)
	var sessions []string
	rows, _ := db.Query(`SELECT session_id FROM sessions`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		sessions = append(sessions, s)
	}
	rows.Close()
	rng := rand.New(rand.NewPCG(3, 5))
	vocab := benchVocab(rand.New(rand.NewPCG(7, 11)))
	proj := func() *benchProject { return &projects[rng.IntN(len(projects))] }
	file := func(p *benchProject) string { return p.files[rng.IntN(len(p.files))] }

	calls := []benchCall{
		{toolFileFreshness, func() map[string]any { p := proj(); return map[string]any{"project": p.path, "path": file(p)} }},
		{toolFileHistory, func() map[string]any { p := proj(); return map[string]any{"project": p.path, "path": file(p)} }},
		{toolSessionSummary, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolSearch, func() map[string]any {
			return map[string]any{"project": proj().path, "query": vocab[rng.IntN(len(vocab))]}
		}},
		{toolLastTest, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolFailures, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolActionDetails, func() map[string]any { return map[string]any{"id": 1 + rng.Int64N(maxID)} }},
		{toolCommandFreshness, func() map[string]any {
			p := proj()
			return map[string]any{"project": p.path, "command": p.cmds[rng.IntN(len(p.cmds))]}
		}},
		{toolRecovery, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolPatterns, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolCost, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolRedundancy, func() map[string]any { return map[string]any{"project": proj().path} }},
		{toolAround, func() map[string]any { return map[string]any{"id": 1 + rng.Int64N(maxID)} }},
		{toolMemory, func() map[string]any { return map[string]any{"project": proj().path} }},
		// Not the default scope: any session of the ninety days, however old.
		{toolSessionSummary + "/any_session", func() map[string]any {
			return map[string]any{"session": sessions[rng.IntN(len(sessions))]}
		}},
		{toolCost + "/any_session", func() map[string]any { return map[string]any{"session": sessions[rng.IntN(len(sessions))]} }},
	}
	s := New(Options{StorePath: path, Now: func() time.Time { return time.UnixMilli(newest).Add(time.Minute) }})
	cs := connect(b, s)
	ctx := context.Background()
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			name, _, _ := strings.Cut(c.name, "/")
			lat := make([]time.Duration, 0, b.N)
			var bytes, calls int
			for b.Loop() {
				args := c.args()
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				lat = append(lat, time.Since(t0))
				if err != nil || res.IsError {
					b.Fatalf("%s(%v): %v %v", name, args, err, res)
				}
				for _, ct := range res.Content {
					if tc, ok := ct.(*mcp.TextContent); ok {
						bytes += len(tc.Text)
					}
				}
				calls++
			}
			b.ReportMetric(float64(bytes)/float64(max(calls, 1)), "answer-bytes")
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.95), "p95-ms")
		})
	}
	b.Run("tools_list", func(b *testing.B) {
		// The answer's bytes as the client receives them, on Serve's stdio framing.
		c := serveRaw(b, New(Options{StorePath: path}))
		c.initialize()
		var size int
		id := 0
		for b.Loop() {
			id++
			c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`)
			size = len(c.recv())
		}
		b.ReportMetric(float64(size), "bytes")
	})
}

// benchMemory runs the writer's memory loop over the benchmark store once (summaries of every
// ended epoch, every project's observations), kept with the store.
func benchMemory(tb testing.TB, path string) {
	tb.Helper()
	marker := filepath.Join(filepath.Dir(path), "memory-done")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	m := &memory.Memory{DB: st.DB, ObserveEvery: time.Nanosecond}
	total := 0
	for {
		p, err := m.Step(ctx, 200)
		if err != nil {
			tb.Fatal(err)
		}
		total += p.Summaries
		if p.Pending == 0 {
			break
		}
	}
	tb.Logf("memory: %d epoch summaries in %s", total, time.Since(start).Round(time.Second))
	os.WriteFile(marker, nil, 0o600)
}
