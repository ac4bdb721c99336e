//go:build ignore

// gen-dash-store builds the dashboard's benchmark store and, with -bench, measures every API
// endpoint of observer-dash on it (see scripts/bench-dash.sh).
//
// The store: 5,000,000 actions and 1,000,000 token_usage rows over ~90 days, 5,000 sessions of 50
// projects (a few much busier) and 3 clients, several models per client, ~4% failed actions,
// outputs for 10% of the actions, a quarter of the Claude Code and Codex sessions also seen by the
// proxy (api_turns matching their transcript rows, so cost's join does real work) with
// compression events. It is written with raw batched SQL in large transactions through the store's
// writer connection, with the secondary indexes of the big tables dropped during the load and
// rebuilt at the end (one sort each instead of millions of random inserts). Tool outputs are not
// full-text indexed: the dashboard does not search them.
//
// The built store is kept in -dir (default $OBSERVER_DASH_BENCH_DIR or $TMPDIR/observer-dash-bench-v1,
// ~4 GB) with a "done" marker and reused; delete the directory to rebuild it. Its timestamps end
// when it was built, so the 24h window of an old store is empty: rebuild it for honest 24h figures
// (-rebuild-after, default 24h, does so automatically).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/dash"
	"github.com/observerhq/observer/pkg/store"
)

const (
	nActions  = 5_000_000
	nTokens   = 1_000_000
	nSessions = 5000
	nProjects = 50
	nDays     = 90
	version   = "v1"
)

func main() {
	def := os.Getenv("OBSERVER_DASH_BENCH_DIR")
	if def == "" {
		def = filepath.Join(os.TempDir(), "observer-dash-bench-"+version)
	}
	dir := flag.String("dir", def, "where the store is built and kept")
	bench := flag.Bool("bench", false, "measure every API endpoint on the store")
	n := flag.Int("n", 30, "requests per endpoint and window")
	only := flag.String("only", "", "time only the endpoints whose name contains this")
	budget := flag.Duration("budget", 15*time.Second, "stop a row's requests after this long (at least 3 are made)")
	rebuildAfter := flag.Duration("rebuild-after", 24*time.Hour, "rebuild a store older than this (0: never)")
	flag.Parse()
	path, err := ensureStore(*dir, *rebuildAfter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-dash-store:", err)
		os.Exit(1)
	}
	if *bench {
		if err := runBench(path, *n, *budget, *only); err != nil {
			fmt.Fprintln(os.Stderr, "bench-dash:", err)
			os.Exit(1)
		}
	}
}

// ensureStore returns the store in dir, building it unless a finished one is there.
func ensureStore(dir string, rebuildAfter time.Duration) (string, error) {
	path := filepath.Join(dir, "observer.db")
	if fi, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		if rebuildAfter == 0 || time.Since(fi.ModTime()) < rebuildAfter {
			fmt.Fprintf(os.Stderr, "reusing %s (built %s)\n", path, fi.ModTime().Format(time.RFC3339))
			// Opening it as the writer applies the migrations added since it was built (0005
			// builds the rollups from the stored rows).
			start := time.Now()
			st, err := store.OpenWriter(context.Background(), path)
			if err != nil {
				return "", err
			}
			if d := time.Since(start); d > time.Second {
				fmt.Fprintf(os.Stderr, "migrated in %v\n", d.Round(time.Second))
			}
			if err := analyse(context.Background(), st); err != nil {
				return "", err
			}
			if err := st.Close(); err != nil {
				return "", err
			}
			return path, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	if err := build(path); err != nil {
		return "", err
	}
	fi, _ := os.Stat(path)
	fmt.Fprintf(os.Stderr, "built %s in %v (%d MB)\n", path, time.Since(start).Round(time.Second), fi.Size()>>20)
	return path, os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

// bigTables are loaded with their secondary indexes dropped.
var bigTables = []string{"actions", "action_outputs", "token_usage", "api_turns", "compression_events", "session_events", "sessions"}

func build(path string) error {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	// One connection: the pragmas below hold for every statement.
	db, err := st.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, p := range []string{"PRAGMA synchronous = OFF", "PRAGMA cache_size = -1000000", "PRAGMA temp_store = MEMORY"} {
		if _, err := db.ExecContext(ctx, p); err != nil {
			return err
		}
	}
	indexes, err := dropIndexes(ctx, db)
	if err != nil {
		return err
	}
	g := newGen(time.Now().Truncate(time.Second))
	if err := g.load(ctx, db); err != nil {
		return err
	}
	t := time.Now()
	for _, ix := range indexes {
		if _, err := db.ExecContext(ctx, ix); err != nil {
			return fmt.Errorf("%s: %w", ix, err)
		}
	}
	fmt.Fprintf(os.Stderr, "indexes rebuilt in %v\n", time.Since(t).Round(time.Second))
	// The rows went in around the writer: build its hourly rollups from them, as migration 0005
	// does for an existing store.
	t = time.Now()
	if _, err := db.ExecContext(ctx, "DELETE FROM usage_hourly"); err != nil {
		return err
	}
	db.Close() // the store's only connection, which RebuildRollups needs
	if err := st.RebuildRollups(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "rollups built in %v\n", time.Since(t).Round(time.Second))
	// And the analysis the writer's loop keeps (discovery, patterns, scores).
	if err := st.ResetAnalysis(ctx); err != nil {
		return err
	}
	if err := analyse(ctx, st); err != nil {
		return err
	}
	for _, s := range []string{"ANALYZE", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := st.DB.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// analyse runs what the writer's analysis loop would, until nothing is marked.
func analyse(ctx context.Context, st *store.Store) error {
	t := time.Now()
	p, err := (&analysis.Analyzer{DB: st.DB}).Run(ctx)
	if err != nil {
		return err
	}
	if p.Sessions > 0 || p.Projects > 0 {
		fmt.Fprintf(os.Stderr, "analysed %d sessions and %d projects in %v\n", p.Sessions, p.Projects, time.Since(t).Round(time.Second))
	}
	return nil
}

// dropIndexes drops the explicit indexes of the big tables and returns their CREATE statements.
func dropIndexes(ctx context.Context, db *sql.Conn) ([]string, error) {
	q := "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('" + strings.Join(bigTables, "','") + "')"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	var names, sqls []string
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			rows.Close()
			return nil, err
		}
		names, sqls = append(names, n), append(sqls, s)
	}
	rows.Close()
	for _, n := range names {
		if _, err := db.ExecContext(ctx, "DROP INDEX "+n); err != nil {
			return nil, err
		}
	}
	return sqls, nil
}

// loader is the one connection all the inserters write on, in transactions of commitEvery rows.
// BEGIN and COMMIT are plain statements so that the statements prepared once on the connection
// serve every transaction.
type loader struct {
	conn    *sql.Conn
	open    bool
	pending int
}

const commitEvery = 250_000

func (l *loader) exec(ctx context.Context, stmt *sql.Stmt, q string, rows int, args []any) error {
	if !l.open {
		if _, err := l.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		l.open = true
	}
	var err error
	if stmt != nil {
		_, err = stmt.ExecContext(ctx, args...)
	} else {
		_, err = l.conn.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return err
	}
	if l.pending += rows; l.pending >= commitEvery {
		return l.commit(ctx)
	}
	return nil
}

func (l *loader) commit(ctx context.Context) error {
	if !l.open {
		return nil
	}
	_, err := l.conn.ExecContext(ctx, "COMMIT")
	l.open, l.pending = false, 0
	return err
}

// inserter writes rows of one table with multi-row INSERTs of per rows.
type inserter struct {
	l     *loader
	table string
	cols  []string
	per   int
	stmt  *sql.Stmt
	buf   []any
	rows  int64
}

func newInserter(l *loader, table string, cols []string) *inserter {
	return &inserter{l: l, table: table, cols: cols, per: 30000 / len(cols)}
}

func (in *inserter) sql(rows int) string {
	ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(in.cols)), ",") + ")"
	return "INSERT INTO " + in.table + " (" + strings.Join(in.cols, ",") + ") VALUES " + strings.TrimSuffix(strings.Repeat(ph+",", rows), ",")
}

func (in *inserter) add(ctx context.Context, vals ...any) error {
	if len(vals) != len(in.cols) {
		panic(fmt.Sprintf("%s: %d values for %d columns", in.table, len(vals), len(in.cols)))
	}
	in.buf = append(in.buf, vals...)
	if len(in.buf) < in.per*len(in.cols) {
		return nil
	}
	return in.flush(ctx)
}

func (in *inserter) flush(ctx context.Context) error {
	rows := len(in.buf) / len(in.cols)
	if rows == 0 {
		return nil
	}
	var err error
	if rows == in.per {
		if in.stmt == nil {
			if in.stmt, err = in.l.conn.PrepareContext(ctx, in.sql(rows)); err != nil {
				return err
			}
		}
		err = in.l.exec(ctx, in.stmt, "", rows, in.buf)
	} else {
		err = in.l.exec(ctx, nil, in.sql(rows), rows, in.buf)
	}
	if err != nil {
		return fmt.Errorf("insert into %s: %w", in.table, err)
	}
	in.rows += int64(rows)
	in.buf = in.buf[:0]
	return nil
}

var (
	actionCols  = []string{"event_id", "ts", "client", "session_id", "project", "source", "type", "tool", "target", "tool_use_id", "message_id", "request_id", "agent_id", "sidechain", "success", "error", "duration_ms", "input_hash", "output_size", "model", "transcript"}
	outputCols  = []string{"event_id", "output"}
	usageCols   = []string{"event_id", "ts", "client", "session_id", "project", "source", "message_id", "request_id", "model", "agent_id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "cache_creation_1h_tokens", "reasoning_tokens", "cost_usd", "reliability", "origin"}
	turnCols    = []string{"event_id", "ts", "client", "session_id", "project", "provider", "endpoint", "model", "message_id", "request_id", "stream", "status", "error_class", "error_message", "stop_reason", "latency_ms", "ttfb_ms", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "cache_creation_1h_tokens", "reasoning_tokens", "cost_usd", "reliability", "messages", "tools", "bytes_in", "bytes_out", "partial"}
	compCols    = []string{"event_id", "ts", "client", "session_id", "project", "mechanism", "provider", "model", "bytes_before", "bytes_after", "tokens_before", "tokens_after"}
	sessEvCols  = []string{"event_id", "ts", "client", "session_id", "project", "source", "state", "cwd", "transcript_path", "parent_session_id", "epoch", "model", "git_branch"}
	sessionCols = []string{"client", "session_id", "project", "first_seen", "last_seen", "state", "cwd", "transcript_path", "parent_session_id", "epoch", "model", "events"}
	projectCols = []string{"path", "name", "first_seen", "last_seen"}
)

type clientSpec struct {
	name, provider, endpoint, reliability string
	models                                []string
	price                                 [3]float64 // $ per million input, output, cache read
	proxied                               bool       // some of its sessions go through the proxy
	msgIDs                                bool       // its transcripts log message ids
}

var clients = []clientSpec{
	{"claude-code", "anthropic", "/v1/messages", "unreliable", []string{"claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"}, [3]float64{3, 15, 0.3}, true, true},
	{"codex", "openai", "/v1/responses", "approximate", []string{"gpt-5.2-codex", "gpt-5", "gpt-5-mini"}, [3]float64{1.25, 10, 0.125}, true, false},
	{"gemini-cli", "google", "", "approximate", []string{"gemini-2.5-pro", "gemini-2.5-flash"}, [3]float64{1.25, 10, 0.31}, false, false},
}

var actionMix = []struct {
	typ, tool string
	weight    int
}{
	{"read_file", "Read", 30}, {"run_command", "Bash", 22}, {"edit_file", "Edit", 14}, {"search_text", "Grep", 10},
	{"search_files", "Glob", 6}, {"write_file", "Write", 4}, {"todo_update", "TodoWrite", 4}, {"user_prompt", "", 3},
	{"web_fetch", "WebFetch", 2}, {"web_search", "WebSearch", 1}, {"mcp_call", "mcp__github__search", 2},
	{"spawn_subagent", "Task", 1}, {"task_complete", "", 1},
}

type gen struct {
	rng      *rand.Rand
	end      time.Time
	projects []string
	mixTotal int
	seq      uint64
}

// pick draws an action type by its weight.
func (g *gen) pick() (typ, tool string) {
	w := g.rng.IntN(g.mixTotal)
	for _, m := range actionMix {
		if w < m.weight {
			return m.typ, m.tool
		}
		w -= m.weight
	}
	return actionMix[0].typ, actionMix[0].tool
}

func newGen(end time.Time) *gen {
	g := &gen{rng: rand.New(rand.NewPCG(5, 17)), end: end}
	names := []string{"api", "billing", "web", "cli", "infra", "auth", "search", "mobile", "ml", "docs"}
	for i := range nProjects {
		g.projects = append(g.projects, fmt.Sprintf("/home/dev/src/%s-%02d", names[i%len(names)], i))
	}
	for _, m := range actionMix {
		g.mixTotal += m.weight
	}
	return g
}

// id is a unique, random-looking event id, as the writer's are.
func (g *gen) id() string {
	g.seq++
	x := g.seq * 0x9e3779b97f4a7c15
	x ^= x >> 31
	return fmt.Sprintf("%016x%08x", x, g.seq)
}

type tables struct {
	actions, outputs, usage, turns, comp, sessEv, sessions, projects *inserter
}

func (t *tables) all() []*inserter {
	return []*inserter{t.actions, t.outputs, t.usage, t.turns, t.comp, t.sessEv, t.sessions, t.projects}
}

func (g *gen) load(ctx context.Context, conn *sql.Conn) error {
	l := &loader{conn: conn}
	t := &tables{
		actions: newInserter(l, "actions", actionCols), outputs: newInserter(l, "action_outputs", outputCols),
		usage: newInserter(l, "token_usage", usageCols), turns: newInserter(l, "api_turns", turnCols),
		comp: newInserter(l, "compression_events", compCols), sessEv: newInserter(l, "session_events", sessEvCols),
		sessions: newInserter(l, "sessions", sessionCols), projects: newInserter(l, "projects", projectCols),
	}
	start := time.Now()
	span := time.Duration(nDays) * 24 * time.Hour
	first, last := map[string]int64{}, map[string]int64{}
	for i := range nSessions {
		// Sessions start in time order, spread over the ninety days; a few projects are much busier.
		at := g.end.Add(-span).Add(time.Duration(float64(span-8*time.Hour) * float64(i) / nSessions))
		project := g.projects[int(float64(nProjects)*g.rng.Float64()*g.rng.Float64())]
		if err := g.session(ctx, t, i, at, project); err != nil {
			return err
		}
		if _, ok := first[project]; !ok {
			first[project] = at.UnixMilli()
		}
		last[project] = at.UnixMilli()
		if i%500 == 499 {
			fmt.Fprintf(os.Stderr, "  %d sessions, %v\n", i+1, time.Since(start).Round(time.Second))
		}
	}
	for _, p := range g.projects {
		if f, ok := first[p]; ok {
			if err := t.projects.add(ctx, p, filepath.Base(p), f, last[p]); err != nil {
				return err
			}
		}
	}
	for _, in := range t.all() {
		if err := in.flush(ctx); err != nil {
			return err
		}
	}
	if err := l.commit(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "rows loaded in %v:", time.Since(start).Round(time.Second))
	for _, in := range t.all() {
		fmt.Fprintf(os.Stderr, " %s %d", in.table, in.rows)
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

// session writes one session: its actions every few seconds, a model turn every fifth action, its
// start and end, and for a proxied session the proxy's turns and compressions.
func (g *gen) session(ctx context.Context, t *tables, i int, at time.Time, project string) error {
	rng := g.rng
	c := clients[0]
	switch r := rng.IntN(100); {
	case r >= 90:
		c = clients[2]
	case r >= 55:
		c = clients[1]
	}
	sid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()>>16)
	proxied := c.proxied && rng.IntN(4) == 0
	model := c.models[min(int(float64(len(c.models))*rng.Float64()*rng.Float64()), len(c.models)-1)]
	// Sessions average nActions/nSessions actions (from a fifth to nine fifths of it).
	n := nActions / nSessions * (1 + rng.IntN(9)) / 5
	transcript := "/home/dev/.sessions/" + sid + ".jsonl"
	ts := at.UnixMilli()
	firstTs := ts
	for j := range n {
		ts += int64(1000 + rng.IntN(12000))
		typ, tool := g.pick()
		target := ""
		switch typ {
		case "read_file", "edit_file", "write_file":
			target = fmt.Sprintf("%s/src/pkg%02d/file_%03d.go", project, rng.IntN(20), rng.IntN(200))
		case "run_command":
			target = []string{"go test ./...", "git status", "git diff", "make build", "ls -la", "npm test", "rg -n TODO"}[rng.IntN(7)]
		case "search_text", "search_files":
			target = fmt.Sprintf("func Handle%d", rng.IntN(500))
		case "web_fetch", "web_search":
			target = fmt.Sprintf("https://docs.example.com/page/%d", rng.IntN(1000))
		}
		var success any = 1
		errText := ""
		if rng.IntN(100) < 4 {
			success, errText = 0, "exit status 1"
		} else if j == n-1 {
			success = nil // the last call's result not yet seen
		}
		agent := ""
		if rng.IntN(10) == 0 {
			agent = fmt.Sprintf("agent-%d", rng.IntN(4))
		}
		eid := g.id()
		outSize := rng.IntN(20000)
		if err := t.actions.add(ctx, eid, ts, c.name, sid, project, "transcript", typ, tool, target,
			"toolu_"+eid[:12], fmt.Sprintf("msg_%s_%d", sid[:8], j/5), "", agent, b2i(agent != ""), success, errText,
			rng.IntN(5000), eid[8:24], outSize, model, transcript); err != nil {
			return err
		}
		if rng.IntN(10) == 0 {
			out := fmt.Sprintf("%s %s: %d lines, %s", typ, target, outSize/40, strings.Repeat("ok ", 20+rng.IntN(40)))
			if err := t.outputs.add(ctx, eid, out); err != nil {
				return err
			}
		}
		if j%5 == 4 {
			if err := g.turn(ctx, t, c, sid, project, model, j/5, ts, proxied); err != nil {
				return err
			}
		}
	}
	state := "ended"
	if g.end.UnixMilli()-ts < int64(2*time.Hour/time.Millisecond) {
		state = "active"
	}
	for k, s := range []struct {
		state string
		at    int64
	}{{"started", firstTs}, {state, ts}} {
		if err := t.sessEv.add(ctx, g.id(), s.at, c.name, sid, project, "hook", s.state, project, transcript, "", 0, model, []string{"main", "dev"}[k%2]); err != nil {
			return err
		}
	}
	return t.sessions.add(ctx, c.name, sid, project, firstTs, ts, state, project, transcript, "", 0, model, n+2)
}

// turn writes one model turn: the transcript's token row and, for a proxied session, the proxy's
// turn of the same message (Codex and Gemini log no message id: the join goes by time).
func (g *gen) turn(ctx context.Context, t *tables, c clientSpec, sid, project, model string, k int, ts int64, proxied bool) error {
	rng := g.rng
	in, out := int64(200+rng.IntN(4000)), int64(50+rng.IntN(2000))
	cr, cw := int64(rng.IntN(80000)), int64(rng.IntN(4000))
	cw1h := int64(0)
	if rng.IntN(5) == 0 {
		cw1h = cw / 2
	}
	reasoning := int64(0)
	if c.name != "claude-code" {
		reasoning = int64(rng.IntN(1000))
	}
	usd := (float64(in)*c.price[0] + float64(out)*c.price[1] + float64(cr)*c.price[2] + float64(cw)*c.price[0]*1.25) / 1e6
	msg := ""
	if c.msgIDs {
		msg = fmt.Sprintf("msg_%s_%d", sid[:8], k)
	}
	if err := t.usage.add(ctx, g.id(), ts, c.name, sid, project, "transcript", msg, "", model, "",
		in, out, cr, cw, cw1h, reasoning, usd, c.reliability, "transcript"); err != nil {
		return err
	}
	if !proxied {
		return nil
	}
	status, errClass, errMsg := 200, "", ""
	if rng.IntN(50) == 0 {
		status, errClass, errMsg = 529, "overloaded", "Overloaded"
	}
	pmsg := msg
	if pmsg == "" {
		pmsg = fmt.Sprintf("resp_%s_%d", sid[:8], k)
	}
	if err := t.turns.add(ctx, g.id(), ts-int64(rng.IntN(3000)), c.name, sid, "", c.provider, c.endpoint, model, pmsg, "",
		1, status, errClass, errMsg, "end_turn", float64(500+rng.IntN(20000)), float64(200+rng.IntN(2000)),
		in, out, cr, cw, cw1h, reasoning, usd, "accurate", 10+k, 12, 10000+rng.IntN(200000), 1000+rng.IntN(20000), 0); err != nil {
		return err
	}
	if rng.IntN(5) == 0 {
		before := int64(5000 + rng.IntN(50000))
		after := before * int64(30+rng.IntN(60)) / 100
		return t.comp.add(ctx, g.id(), ts, c.name, sid, project, []string{"dedupe", "trim", "summarize"}[rng.IntN(3)],
			c.provider, model, before, after, before/4, after/4)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ---- the benchmark ----

type target struct {
	name, window, path string
}

// runBench serves the store with observer-dash's own server on a loopback port and times n
// requests of every endpoint and window, after one untimed request each; a row whose requests
// outlast budget stops early (the "n" column says how many were timed).
func runBench(path string, n int, budget time.Duration, only string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := dash.New(dash.Options{Addr: "127.0.0.1:0", StorePath: path})
	if err != nil {
		return err
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	go srv.Serve(ctx, ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	st, err := store.OpenReader(ctx, path)
	if err != nil {
		return err
	}
	sessions, project, err := benchSubjects(st.DB, n)
	st.Close()
	if err != nil {
		return err
	}
	var targets []target
	for _, w := range []string{"24h", "7d", "30d", "all"} {
		for _, ep := range []string{"overview", "cost", "analysis", "sessions", "actions", "tools", "compression", "discovery", "patterns"} {
			targets = append(targets, target{"/api/" + ep, w, "/api/" + ep + "?window=" + w})
		}
		targets = append(targets,
			target{"/api/overview&project", w, "/api/overview?window=" + w + "&project=" + url.QueryEscape(project)},
			target{"/api/cost&client", w, "/api/cost?window=" + w + "&client=codex"},
			target{"/api/sessions&sort=cost", w, "/api/sessions?window=" + w + "&sort=cost"},
			target{"/api/actions&type", w, "/api/actions?window=" + w + "&type=run_command&client=claude-code"})
	}
	targets = append(targets, target{"/api/status", "-", "/api/status"}, target{"/api/filters", "-", "/api/filters"},
		target{"/api/settings", "-", "/api/settings"})
	fmt.Printf("%-28s %-6s %4s %9s %9s %9s %10s\n", "endpoint", "window", "n", "p50 ms", "p95 ms", "max ms", "bytes")
	client := &http.Client{Timeout: time.Minute}
	var misses []string
	rowsRun := 0
	row := func(name, window string, paths func(i int) string) error {
		if !strings.Contains(name, only) {
			return nil
		}
		rowsRun++
		if _, err := fetch(client, base+paths(0)); err != nil { // warm-up, untimed
			return err
		}
		var ds []time.Duration
		size := 0
		began := time.Now()
		for i := 0; i < n && (i < 3 || time.Since(began) < budget); i++ {
			t := time.Now()
			b, err := fetch(client, base+paths(i))
			if err != nil {
				return err
			}
			ds = append(ds, time.Since(t))
			size = b
		}
		slices.Sort(ds)
		p50, p95 := ds[len(ds)/2], ds[min((len(ds)*95+99)/100-1, len(ds)-1)]
		mark := ""
		if p95 > 50*time.Millisecond {
			mark = "  > 50 ms"
			misses = append(misses, name+" "+window)
		}
		fmt.Printf("%-28s %-6s %4d %9.1f %9.1f %9.1f %10d%s\n", name, window, len(ds), ms(p50), ms(p95), ms(ds[len(ds)-1]), size, mark)
		return nil
	}
	for _, tg := range targets {
		if err := row(tg.name, tg.window, func(int) string { return tg.path }); err != nil {
			return err
		}
	}
	// Session detail and timeline: a different session each request, the biggest ones included.
	if err := row("/api/sessions/{id}", "-", func(i int) string {
		s := sessions[i%len(sessions)]
		return "/api/sessions/" + s[1] + "?client=" + s[0]
	}); err != nil {
		return err
	}
	if err := row("/api/sessions/{id}/timeline", "-", func(i int) string {
		s := sessions[i%len(sessions)]
		return "/api/sessions/" + s[1] + "/timeline?client=" + s[0]
	}); err != nil {
		return err
	}
	if len(misses) > 0 {
		fmt.Printf("\n%d of %d rows miss p95 <= 50 ms: %s\n", len(misses), rowsRun, strings.Join(misses, ", "))
	} else {
		fmt.Printf("\nevery endpoint: p95 <= 50 ms\n")
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fetch(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, errors.New(u + ": " + resp.Status + ": " + string(b))
	}
	return len(b), nil
}

// benchSubjects picks n sessions (the biggest first, then spread over time) and the busiest project.
func benchSubjects(db *sql.DB, n int) ([][2]string, string, error) {
	var out [][2]string
	add := func(q string) error {
		rows, err := db.Query(q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c, s string
			if err := rows.Scan(&c, &s); err != nil {
				return err
			}
			out = append(out, [2]string{c, s})
		}
		return rows.Err()
	}
	if err := add("SELECT client, session_id FROM sessions ORDER BY events DESC LIMIT 5"); err != nil {
		return nil, "", err
	}
	if err := add(fmt.Sprintf("SELECT client, session_id FROM sessions ORDER BY abs(random()) %% 1000 LIMIT %d", max(n-5, 1))); err != nil {
		return nil, "", err
	}
	var project string
	err := db.QueryRow("SELECT project FROM sessions GROUP BY project ORDER BY count(*) DESC LIMIT 1").Scan(&project)
	return out, project, err
}
