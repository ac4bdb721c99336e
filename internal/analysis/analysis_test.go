package analysis_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// act is (client, session, agent, type, target, freshness).
type act [6]string

func actionEvents(start time.Time, acts []act) []event.Event {
	var evs []event.Event
	for i, a := range acts {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = fmt.Sprintf("a%03d", i), a[0], a[1], "/p", start.Add(time.Duration(i)*time.Second)
		ok := a[3] != "run_command" || a[4] != "false"
		ev.Action = &event.Action{Type: event.ActionType(a[3]), Target: a[4], AgentID: a[2], Sidechain: a[2] != "",
			Freshness: a[5], Tool: "T", ToolUseID: fmt.Sprintf("tu%03d", i), Success: &ok}
		evs = append(evs, ev)
	}
	return evs
}

const cc, cx = "claude-code", "codex"

// crafted is one session of each client; the comments give what the findings must count.
var crafted = []act{
	{cc, "s1", "", "read_file", "a.go", ""},
	{cc, "s1", "", "read_file", "a.go", ""},      // history re-read
	{cc, "s1", "sub1", "read_file", "a.go", ""},  // re-read by the subagent
	{cc, "s1", "", "read_file", "b.go", "fresh"}, // first read
	{cc, "s1", "", "read_file", "b.go", "stale"}, // changed since: stale
	{cc, "s1", "", "read_file", "c.go", "fresh"}, // read twice, unchanged: not listed
	{cc, "s1", "", "read_file", "c.go", "fresh"},
	{cc, "s1", "", "run_command", "go test ./...", ""},
	{cc, "s1", "", "run_command", "go test ./...", ""}, // repeat 1
	{cc, "s1", "", "edit_file", "a.go", ""},
	{cc, "s1", "", "run_command", "go test ./...", ""}, // after an edit: not a repeat
	{cc, "s1", "", "run_command", "ls", ""},
	{cc, "s1", "", "run_command", "go test ./...", ""}, // repeat 2: ls changed nothing
	{cc, "s1", "", "run_command", "ls", ""},            // repeat 1
	{cc, "s1", "sub1", "write_file", "d.go", ""},       // a subagent's write counts as a change
	{cc, "s1", "", "run_command", "ls", ""},            // not a repeat
	{cc, "s1", "sub1", "read_file", "e.go", "fresh"},   // read by the subagent, then by the main agent:
	{cc, "s1", "", "read_file", "e.go", "fresh"},       // unchanged, but across agents
	{cx, "s2", "", "run_command", "go test ./...", ""}, // another session: its first run
	{cx, "s2", "", "read_file", "a.go", ""},
	{cx, "s2", "", "write_file", "b.go", ""},
	{cx, "s2", "", "run_command", "false", ""}, // fails
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, db *sql.DB, now time.Time) analysis.Progress {
	t.Helper()
	a := &analysis.Analyzer{DB: db, Now: func() time.Time { return now }}
	p, err := a.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.PendingSessions != 0 || p.PendingProjects != 0 {
		t.Fatalf("after Run: %+v", p)
	}
	return p
}

// TestDiscover_Crafted: exact findings, totals, scores and filters on a crafted store.
func TestDiscover_Crafted(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	now := time.Now()
	if _, err := s.WriteBatch(ctx, actionEvents(now.Add(-time.Hour), crafted), nil); err != nil {
		t.Fatal(err)
	}
	d, err := query.Discover(ctx, s.DB, query.AnalysisQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Pending != 2 || d.Totals.Sessions != 0 {
		t.Errorf("before the analysis: pending %d, sessions %d; want 2 pending, none analysed", d.Pending, d.Totals.Sessions)
	}
	if p := run(t, s.DB, now); p.Sessions != 2 || p.Projects != 1 {
		t.Errorf("Run analysed %+v, want 2 sessions and 1 project", p)
	}
	d, err = query.Discover(ctx, s.DB, query.AnalysisQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := query.DiscoveryTots{Sessions: 2, StaleRereads: 1, UnclassifiedRereads: 2, CrossAgentFiles: 2, RepeatedCommands: 3, SharedFiles: 2}
	if d.Totals != want || d.Pending != 0 {
		t.Errorf("totals %+v (pending %d), want %+v", d.Totals, d.Pending, want)
	}
	got := map[string]analysis.Reread{}
	for _, r := range d.Rereads {
		got[r.Target] = r
	}
	if r := got["a.go"]; r.Reads != 3 || r.Unclassified != 2 || r.Agents != 2 || r.Label != "re-read (unclassified), across agents" {
		t.Errorf("a.go: %+v", r)
	}
	if r := got["b.go"]; r.Stale != 1 || r.Label != "stale" || len(d.Rereads) != 3 || d.Rereads[0].Target != "b.go" {
		t.Errorf("re-reads %+v: want b.go (stale) first, then a.go, e.go; c.go was re-read unchanged by one agent", d.Rereads)
	}
	if r := got["e.go"]; r.Reads != 2 || r.Agents != 2 || r.Stale+r.Unclassified != 0 || r.Label != "read by several agents" {
		t.Errorf("e.go: %+v", r)
	}
	reps := map[string]analysis.Repeat{}
	for _, r := range d.Repeats {
		reps[r.Client+" "+r.Command] = r
	}
	if r := reps[cc+" go test ./..."]; r.Runs != 4 || r.Repeats != 2 || len(d.Repeats) != 2 || d.Repeats[0] != r {
		t.Errorf("repeats %+v: want go test (4 runs, 2 repeats) first", d.Repeats)
	}
	if r := reps[cc+" ls"]; r.Runs != 3 || r.Repeats != 1 {
		t.Errorf("ls: %+v", r)
	}
	if len(d.Shared) != 2 || fmt.Sprint(d.Shared[0].Clients) != "[claude-code codex]" || d.Shared[0].Target != "a.go" || d.Shared[0].Actions != 5 {
		t.Errorf("shared %+v: want a.go (5 actions) then b.go, by claude-code and codex", d.Shared)
	}

	// Filters: codex alone has no findings of its own, but the files it shares with claude-code.
	d, err = query.Discover(ctx, s.DB, query.AnalysisQuery{Filter: query.Filter{Client: cx}})
	if err != nil {
		t.Fatal(err)
	}
	if (d.Totals != query.DiscoveryTots{Sessions: 1, SharedFiles: 2}) || len(d.Rereads)+len(d.Repeats) != 0 {
		t.Errorf("codex alone: %+v", d)
	}
	for _, f := range []query.AnalysisQuery{{Filter: query.Filter{Project: "/other"}}, {Filter: query.Filter{Since: now.Add(time.Minute)}}} {
		d, err = query.Discover(ctx, s.DB, f)
		if err != nil {
			t.Fatal(err)
		}
		if d.Totals != (query.DiscoveryTots{}) || len(d.Rereads)+len(d.Repeats)+len(d.Shared) != 0 {
			t.Errorf("%+v: %+v, want nothing", f, d)
		}
	}
	d, err = query.Discover(ctx, s.DB, query.AnalysisQuery{Limit: 1})
	if err != nil || len(d.Rereads) != 1 || len(d.Repeats) != 1 || len(d.Shared) != 1 || d.Totals.SharedFiles != 2 {
		t.Errorf("limit 1: %+v %v", d, err)
	}

	// Scores: codex failed one of its three completed actions; claude-code repeated and re-read.
	sc, err := query.Scores(ctx, s.DB, query.AnalysisQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) != 2 {
		t.Fatalf("scores %+v", sc)
	}
	byID := map[string]analysis.Session{}
	for _, x := range sc {
		byID[x.SessionID] = x
	}
	s1, s2 := byID["s1"], byID["s2"]
	// s1: 9 reads + 7 commands; 1 stale + 2 unclassified re-reads + 3 repeats = 6 of 16.
	if s1.Actions != 18 || s1.Reads != 9 || s1.Commands != 7 || s1.Edits != 2 || s1.Agents != 2 || s1.Files != 5 ||
		math.Abs(s1.Redundancy-6.0/16) > 1e-9 || s1.ErrorRate != 0 || s1.Score != int64(math.Round(100*(1-6.0/16))) {
		t.Errorf("s1: %+v", s1)
	}
	if s2.Failures != 1 || s2.Completed != 4 || s2.ErrorRate != 0.25 || s2.Redundancy != 0 || s2.Score != 75 || s2.Exploration != 0.25 {
		t.Errorf("s2: %+v", s2)
	}
	if sc[0].SessionID != "s1" {
		t.Errorf("scores not lowest first: %+v", sc)
	}
	one, err := query.Scores(ctx, s.DB, query.AnalysisQuery{Filter: query.Filter{SessionID: "s2"}})
	if err != nil || len(one) != 1 || one[0] != s2 {
		t.Errorf("Scores(s2) = %+v, %v", one, err)
	}
}

// dump reads the analysis tables whole, in key order, leaving out analyzed_at.
func dump(t *testing.T, db *sql.DB) [][]any {
	t.Helper()
	var out [][]any
	for _, q := range []string{
		`SELECT client, session_id, project, first_ts, last_ts, actions, failures, completed, reads, edits, commands,
			searches, files, agents, stale_rereads, unclassified_rereads, cross_agent_files, repeated_commands,
			round(error_rate, 9), round(redundancy, 9), round(exploration, 9), score FROM session_analysis ORDER BY 1, 2`,
		"SELECT * FROM session_rereads ORDER BY client, session_id, target",
		"SELECT * FROM session_repeats ORDER BY client, session_id, command",
		"SELECT * FROM file_clients ORDER BY project, target, client",
		"SELECT * FROM shared_files ORDER BY project, target",
		"SELECT project, kind, key, detail, round(confidence, 9), occurrences, last_seen FROM patterns ORDER BY project, kind, key",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]any{q[:20]}, vals...))
		}
		rows.Close()
	}
	return out
}

// TestAnalyzer_IncrementalEqualsFull writes random batches (results merging into calls, in either
// order and at an earlier time, freshness arriving late, several clients on the same files,
// sessions spanning batches) and analyses after each one, then prunes by age and by count; the
// tables must then equal a full analysis of everything from scratch, and file_clients must equal
// a count over the actions.
func TestAnalyzer_IncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rng := rand.New(rand.NewPCG(7, 9))
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clients := []string{cc, cx, "cursor"}
	files := []string{"a.go", "b.go", "c.go", "d.go", "e.go"}
	a := &analysis.Analyzer{DB: s.DB, Now: func() time.Time { return now }}
	for b := 0; b < 40; b++ {
		var evs []event.Event
		for i := 0; i < 20; i++ {
			// ids repeat: a call and its result merge (of the same client, session and project)
			n := rng.IntN(300)
			ev := event.New(event.KindAction, "test")
			cl := clients[n%len(clients)]
			ev.ID, ev.Client, ev.SessionID = fmt.Sprintf("k%d", n), cl, fmt.Sprintf("s%d", n%4)
			ev.Project = []string{"/p", "/q"}[n%5%2]
			ev.Time = now.Add(-time.Duration(rng.IntN(3*24*3600)) * time.Second)
			typ := []string{"read_file", "read_file", "edit_file", "write_file", "run_command", "search_text", "unknown"}[rng.IntN(7)]
			act := &event.Action{Type: event.ActionType(typ), Tool: "T", AgentID: []string{"", "", "sub"}[rng.IntN(3)]}
			if typ == "run_command" {
				act.Target = []string{"go test ./...", "ls", "make"}[rng.IntN(3)]
			} else if rng.IntN(5) > 0 {
				act.Target = files[rng.IntN(len(files))]
			}
			if rng.IntN(2) == 0 {
				ok := rng.IntN(4) > 0
				act.Success = &ok
				act.Freshness = []string{"", "fresh", "stale", "changed_elsewhere"}[rng.IntN(4)]
			}
			ev.Action = act
			evs = append(evs, ev)
		}
		if _, err := s.WriteBatch(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Step(ctx, 1000, true); err != nil {
			t.Fatal(err)
		}
	}
	// Retention deletes the oldest day and then the oldest actions beyond 100: the sessions and
	// files they belonged to are recounted.
	for _, o := range []store.PruneOptions{{Before: now.Add(-2 * 24 * time.Hour), ChunkSize: 37}, {MaxActions: 100, ChunkSize: 30}} {
		r, err := s.Prune(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Deleted["actions"] == 0 {
			var n int64
			s.DB.QueryRow("SELECT count(*) FROM actions").Scan(&n)
			t.Fatalf("prune %+v deleted no action (%d left): %+v", o, n, r)
		}
		if _, err := a.Step(ctx, 1000, true); err != nil {
			t.Fatal(err)
		}
	}
	inc := dump(t, s.DB)

	var fc, want [][]any
	for q, dst := range map[string]*[][]any{
		"SELECT project, target, client, actions, first_ts, last_ts FROM file_clients ORDER BY 1, 2, 3": &fc,
		`SELECT project, target, client, count(*), min(ts), max(ts) FROM actions WHERE type IN ('read_file', 'edit_file', 'write_file')
			AND target != '' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`: &want,
	} {
		rows, err := s.DB.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var p, tg, c string
			var n, f, l int64
			if err := rows.Scan(&p, &tg, &c, &n, &f, &l); err != nil {
				t.Fatal(err)
			}
			*dst = append(*dst, []any{p, tg, c, n, f, l})
		}
		rows.Close()
	}
	if len(fc) == 0 || !reflect.DeepEqual(fc, want) {
		t.Errorf("file_clients kept incrementally (%d rows) differ from the actions (%d rows)", len(fc), len(want))
	}

	for _, q := range []string{"DELETE FROM session_analysis", "DELETE FROM session_rereads", "DELETE FROM session_repeats",
		"DELETE FROM file_clients", "DELETE FROM shared_files", "DELETE FROM patterns", "DELETE FROM pattern_state",
		"INSERT INTO analysis_dirty (client, session_id, since_ts) SELECT DISTINCT client, session_id, 0 FROM actions"} {
		if _, err := s.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	run(t, s.DB, now)
	full := dump(t, s.DB)
	if !reflect.DeepEqual(inc, full) {
		t.Errorf("incremental analysis (%d rows) differs from a full one (%d rows)", len(inc), len(full))
		for i := range min(len(inc), len(full)) {
			if !reflect.DeepEqual(inc[i], full[i]) {
				t.Errorf("first difference:\n inc  %v\n full %v", inc[i], full[i])
				break
			}
		}
	}
}

// TestPatterns_Decay: patterns found on crafted sessions, with a confidence that halves every
// HalfLife after the pattern was last seen.
func TestPatterns_Decay(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var acts []act
	for i := 0; i < 3; i++ {
		sid := fmt.Sprintf("s%d", i)
		acts = append(acts,
			act{cc, sid, "", "edit_file", "x.go", ""},
			act{cc, sid, "", "edit_file", "x_test.go", ""},
			act{cc, sid, "", "run_command", "go test ./x", ""},
			act{cc, sid, "", "run_command", "git status", ""})
	}
	acts = append(acts, act{cc, "s3", "", "read_file", "x.go", ""}, act{cc, "s3", "", "edit_file", "y.go", ""},
		act{cc, "s3", "", "run_command", "ls", ""})
	if _, err := s.WriteBatch(ctx, actionEvents(start, acts), nil); err != nil {
		t.Fatal(err)
	}
	run(t, s.DB, start.Add(time.Hour))
	last := start.Add(time.Duration(len(acts)-1) * time.Second)
	check := func(now time.Time, factor float64) {
		t.Helper()
		ps, err := query.Patterns(ctx, s.DB, query.AnalysisQuery{}, "", 0, now)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]analysis.Pattern{}
		for _, p := range ps.Patterns {
			got[p.Kind+" "+p.Key] = p
		}
		want := map[string][2]float64{ // support, ratio
			"command_pair go test → git status": {3, 1},
			"co_edit x.go + x_test.go":          {3, 1},
			"edit_then_test edit → test":        {3, 3.0 / 4}, // s3's edit run ended with ls
			"hot_file x.go":                     {4, 1},
			"hot_file x_test.go":                {3, 3.0 / 4},
		}
		if len(got) != len(want) {
			t.Errorf("patterns %+v, want %d", ps.Patterns, len(want))
		}
		for k, w := range want {
			p := got[k]
			if p.Support != int64(w[0]) || math.Abs(p.Ratio-w[1]) > 1e-9 || math.Abs(p.Confidence-w[1]*factor) > 1e-4*w[1] {
				t.Errorf("%s: %+v, want support %v ratio %v confidence %v", k, p, w[0], w[1], w[1]*factor)
			}
		}
	}
	check(last, 1)
	check(last.Add(query.HalfLife), 0.5)
	check(last.Add(2*query.HalfLife), 0.25)
	ps, err := query.Patterns(ctx, s.DB, query.AnalysisQuery{}, "hot_file", 0.9, last)
	if err != nil || len(ps.Patterns) != 1 || ps.Patterns[0].Key != "x.go" {
		t.Errorf("hot_file with confidence ≥ 0.9: %+v %v", ps, err)
	}
}
