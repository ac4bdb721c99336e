package mcpserver

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// corpusEnv is the corpus store, the project with the most actions (the server's own project in
// these tests), and a clock an hour after the newest action.
type corpusEnv struct {
	path string
	db   *sql.DB
	proj string
	now  time.Time
}

func newCorpusEnv(t *testing.T) corpusEnv {
	path := corpusStore(t)
	db := roDB(t, path)
	e := corpusEnv{path: path, db: db}
	e.proj = queryStr(t, db, `SELECT project FROM actions WHERE project != '' GROUP BY project ORDER BY count(*) DESC, project LIMIT 1`)
	e.now = time.UnixMilli(queryInt(t, db, `SELECT max(ts) FROM actions`)).Add(time.Hour)
	return e
}

// Each tool answers from the corpus store what the store itself says, through the SDK's client
// and server over an in-memory transport.
func TestTools_Corpus(t *testing.T) {
	e := newCorpusEnv(t)
	db := e.db
	_, cs := newServer(t, e.path, e.proj, e.now)
	latest := queryStr(t, db, `SELECT session_id FROM sessions WHERE project = ? ORDER BY last_seen DESC LIMIT 1`, e.proj)

	t.Run("SessionSummary", func(t *testing.T) {
		var got summaryAnswer
		callJSON(t, cs, toolSessionSummary, nil, &got)
		if got.Sess != latest {
			t.Fatalf("default session %s, want the project's latest %s", got.Sess, latest)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE session_id = ?`, latest); int64(got.Acts) != want {
			t.Errorf("acts = %d, want %d", got.Acts, want)
		}
		rows, _ := db.Query(`SELECT type, count(*) FROM actions WHERE session_id = ? GROUP BY type`, latest)
		want := map[string]int{}
		for rows.Next() {
			var typ string
			var n int
			rows.Scan(&typ, &n)
			want[typ] = n
		}
		rows.Close()
		if !mapsEqual(got.Types, want) {
			t.Errorf("types = %v, want %v", got.Types, want)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE session_id = ? AND success = 0`, latest); int64(got.Fails) != want {
			t.Errorf("fails = %d, want %d", got.Fails, want)
		}
		if want := queryInt(t, db, `SELECT count(DISTINCT target) FROM actions WHERE session_id = ?
			AND type IN ('edit_file', 'write_file') AND target != ''`, latest); int64(got.Edited) != want {
			t.Errorf("edited = %d, want %d", got.Edited, want)
		}
		// The cost equals the session's row of an all-time report (the tool reads only the turns
		// since the session began).
		rep, err := query.Cost(context.Background(), db, query.CostQuery{GroupBy: []string{"session"}})
		if err != nil {
			t.Fatal(err)
		}
		checkCost(t, got.Cost, rep, func(r query.CostRow) bool { return r.SessionID == latest })

		var byPrefix summaryAnswer
		callJSON(t, cs, toolSessionSummary, map[string]any{"session": short(latest)}, &byPrefix)
		if byPrefix.Sess != latest || byPrefix.Acts != got.Acts {
			t.Errorf("by prefix: %s with %d acts, want %s with %d", byPrefix.Sess, byPrefix.Acts, latest, got.Acts)
		}
	})

	// The file the project's agents touched most.
	file := queryStr(t, db, `SELECT target FROM actions WHERE project = ? AND type IN ('read_file', 'edit_file', 'write_file')
		AND target != '' GROUP BY target ORDER BY count(*) DESC, target LIMIT 1`, e.proj)

	t.Run("FileHistory", func(t *testing.T) {
		var got historyAnswer
		callJSON(t, cs, toolFileHistory, map[string]any{"path": file, "limit": 3}, &got)
		wantN := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND target = ?`, e.proj, file)
		if int64(got.N) != wantN || got.Path != rel(e.proj, file) {
			t.Fatalf("history of %s: path %s n %d, want n %d", file, got.Path, got.N, wantN)
		}
		want := queryInts(t, db, `SELECT id FROM actions WHERE project = ? AND target = ? ORDER BY ts DESC, id DESC LIMIT 3`, e.proj, file)
		if ids := actIDs(got.Acts); !slices.Equal(ids, want) {
			t.Errorf("acts %v, want the newest %v", ids, want)
		}
		// The same file named by its absolute path.
		if !filepath.IsAbs(file) {
			var abs historyAnswer
			callJSON(t, cs, toolFileHistory, map[string]any{"path": filepath.Join(e.proj, file)}, &abs)
			if abs.N != got.N {
				t.Errorf("absolute path: n %d, want %d", abs.N, got.N)
			}
		}
	})

	t.Run("FileFreshness", func(t *testing.T) {
		var got freshAnswer
		callJSON(t, cs, toolFileFreshness, map[string]any{"path": file}, &got)
		// The corpus projects are other people's machines: their files are not here.
		if got.State != "missing" {
			t.Errorf("state %q, want missing", got.State)
		}
		wantRead := queryInts(t, db, `SELECT id FROM actions WHERE project = ? AND target = ? AND type = 'read_file'
			ORDER BY ts DESC, id DESC LIMIT 1`, e.proj, file)
		if len(wantRead) == 1 && (got.Read == nil || got.Read.ID != wantRead[0]) {
			t.Errorf("last read %+v, want id %d", got.Read, wantRead[0])
		}
		wantWrite := queryInts(t, db, `SELECT id FROM actions WHERE project = ? AND target = ? AND type IN ('edit_file', 'write_file')
			ORDER BY ts DESC, id DESC LIMIT 1`, e.proj, file)
		if len(wantWrite) == 1 && (got.Write == nil || got.Write.ID != wantWrite[0]) {
			t.Errorf("last write %+v, want id %d", got.Write, wantWrite[0])
		}
		if len(wantRead)+len(wantWrite) == 0 {
			t.Fatalf("the most touched file %s has no read or write", file)
		}
	})

	t.Run("SearchPastOutputs", func(t *testing.T) {
		word, want := rareWord(t, db, e.proj)
		var got searchAnswer
		callJSON(t, cs, toolSearch, map[string]any{"query": word}, &got)
		var ids []int64
		for _, h := range got.Hits {
			ids = append(ids, h.ID)
			if !strings.Contains(strings.ToLower(h.Snip), "«"+strings.ToLower(word)+"»") {
				t.Errorf("hit %d: snippet %q does not mark %q", h.ID, h.Snip, word)
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("search %q: hits %v, want the outputs holding it, newest first: %v", word, ids, want)
		}
		// Across every project there are at least as many.
		var all searchAnswer
		callJSON(t, cs, toolSearch, map[string]any{"query": word, "project": "*", "limit": 50}, &all)
		if len(all.Hits) < len(want) {
			t.Errorf("all projects: %d hits, fewer than the project's %d", len(all.Hits), len(want))
		}
		// FTS5 syntax in the query is taken as words, never as an error.
		text, isErr := call(t, cs, toolSearch, map[string]any{"query": `"unbalanced AND ( NEAR -x`})
		if isErr {
			t.Errorf("a query with FTS5 operators failed: %s", text)
		}
	})

	t.Run("LastTestResult", func(t *testing.T) {
		// The newest test-like command of the whole corpus, found in Go over every command.
		rows, err := db.Query(`SELECT id, project, target, success FROM actions WHERE type = 'run_command' ORDER BY ts DESC, id DESC`)
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		var proj, target string
		var ok sql.NullBool
		found := false
		for rows.Next() && !found {
			rows.Scan(&id, &proj, &target, &ok)
			found = isTestCommand(target)
		}
		rows.Close()
		if !found {
			t.Skip("no test command in the corpus")
		}
		var got testAnswer
		callJSON(t, cs, toolLastTest, map[string]any{"project": proj, "max_bytes": 300}, &got)
		if got.ID != id || (got.OK != nil) != ok.Valid || (ok.Valid && *got.OK != ok.Bool) {
			t.Fatalf("last test %d ok %v, want %d ok %v (%s)", got.ID, got.OK, id, ok, target)
		}
		// No newer command of that project looks like a test run.
		rows, _ = db.Query(`SELECT target FROM actions WHERE project = ? AND type = 'run_command' AND ts > (SELECT ts FROM actions WHERE id = ?)`, proj, id)
		for rows.Next() {
			var tg string
			rows.Scan(&tg)
			if isTestCommand(tg) {
				t.Errorf("a newer test run exists: %s", tg)
			}
		}
		rows.Close()
		out := queryStr(t, db, `SELECT unpack(o.output) FROM action_outputs o JOIN actions a USING (event_id) WHERE a.id = ?`, id)
		checkClipped(t, got.Out, out, 300)
	})

	t.Run("FailureContext", func(t *testing.T) {
		var got failuresAnswer
		callJSON(t, cs, toolFailures, map[string]any{"limit": 3}, &got)
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND success = 0`, e.proj); int64(got.N) != want {
			t.Errorf("n = %d, want %d", got.N, want)
		}
		want := queryInts(t, db, `SELECT id FROM actions WHERE project = ? AND success = 0 ORDER BY ts DESC, id DESC LIMIT 3`, e.proj)
		var ids []int64
		for _, f := range got.Fails {
			ids = append(ids, f.ID)
			fixed := queryInts(t, db, `SELECT b.id FROM actions a JOIN actions b ON b.project = a.project AND b.target = a.target
				AND b.type = a.type AND b.ts > a.ts AND b.success = 1 WHERE a.id = ? ORDER BY b.ts LIMIT 1`, f.ID)
			if (len(fixed) == 0) != (f.Fixed == 0) || len(fixed) == 1 && fixed[0] != f.Fixed {
				t.Errorf("failure %d: fixed by %d, want %v", f.ID, f.Fixed, fixed)
			}
			prev := queryStr(t, db, `SELECT b.type FROM actions a JOIN actions b ON b.session_id = a.session_id
				AND (b.ts < a.ts OR b.ts = a.ts AND b.id < a.id) WHERE a.id = ? ORDER BY b.ts DESC, b.id DESC LIMIT 1`, f.ID)
			if !strings.HasPrefix(f.Prev, prev) {
				t.Errorf("failure %d: prev %q, want a %s", f.ID, f.Prev, prev)
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("failures %v, want the newest %v", ids, want)
		}
	})

	t.Run("ActionDetails", func(t *testing.T) {
		var id int64
		var out string
		db.QueryRow(`SELECT a.id, unpack(o.output) FROM actions a JOIN action_outputs o USING (event_id)
			WHERE length(unpack(o.output)) BETWEEN 100 AND 3000 ORDER BY a.id LIMIT 1`).Scan(&id, &out)
		var got detailAnswer
		callJSON(t, cs, toolActionDetails, map[string]any{"id": id}, &got)
		if got.ID != id || got.Out != out {
			t.Errorf("action %d: out %q, want the stored output %q", got.ID, clip(got.Out, 80), clip(out, 80))
		}
		if typ := queryStr(t, db, `SELECT type FROM actions WHERE id = ?`, id); got.Type != typ {
			t.Errorf("type %s, want %s", got.Type, typ)
		}
		var small detailAnswer
		callJSON(t, cs, toolActionDetails, map[string]any{"id": id, "max_bytes": 60}, &small)
		checkClipped(t, small.Out, out, 60)

		text, isErr := call(t, cs, toolActionDetails, map[string]any{"id": 1 << 40})
		if !isErr || !strings.Contains(text, "no action") {
			t.Errorf("unknown id: %q (error %v)", text, isErr)
		}
	})

	t.Run("CommandFreshness", func(t *testing.T) {
		// A command run at least twice, the one whose last run is oldest (most happened since).
		var proj, cmd string
		db.QueryRow(`SELECT project, target FROM actions WHERE type = 'run_command' GROUP BY project, target
			HAVING count(*) >= 2 ORDER BY max(ts), target LIMIT 1`).Scan(&proj, &cmd)
		if cmd == "" {
			t.Skip("no command ran twice in the corpus")
		}
		e := e
		e.proj = proj
		var got cmdAnswer
		callJSON(t, cs, toolCommandFreshness, map[string]any{"command": cmd, "project": proj}, &got)
		lastID := queryInt(t, db, `SELECT id FROM actions WHERE project = ? AND target = ? AND type = 'run_command'
			ORDER BY ts DESC, id DESC LIMIT 1`, e.proj, cmd)
		lastTS := queryInt(t, db, `SELECT ts FROM actions WHERE id = ?`, lastID)
		wantRuns := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND target = ? AND type = 'run_command'`, e.proj, cmd)
		wantEdits := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND type IN ('edit_file', 'write_file') AND ts > ?`, e.proj, lastTS)
		wantCmds := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND type = 'run_command' AND ts > ?`, e.proj, lastTS)
		if got.Last == nil || got.Last.ID != lastID || int64(got.Runs) != wantRuns || int64(got.Edits) != wantEdits ||
			int64(got.Cmds) != wantCmds || got.Fresh != (wantEdits == 0) {
			t.Errorf("got %+v last %+v, want last %d runs %d edits %d cmds %d", got, got.Last, lastID, wantRuns, wantEdits, wantCmds)
		}
		text, _ := call(t, cs, toolCommandFreshness, map[string]any{"command": "never-ran-this --flag"})
		if !strings.HasPrefix(text, "command never recorded") {
			t.Errorf("unknown command: %q", text)
		}
	})

	t.Run("SessionRecoveryContext", func(t *testing.T) {
		var got recoveryAnswer
		callJSON(t, cs, toolRecovery, map[string]any{"limit": 4}, &got)
		if got.Sess != latest {
			t.Fatalf("session %s, want %s", got.Sess, latest)
		}
		rows, _ := db.Query(`SELECT target FROM actions WHERE session_id = ? AND type = 'user_prompt' ORDER BY ts DESC, id DESC LIMIT 3`, latest)
		var want []string
		for rows.Next() {
			var p string
			rows.Scan(&p)
			want = append(want, clip(p, 300))
		}
		rows.Close()
		var prompts []string
		for _, p := range got.Prompts {
			prompts = append(prompts, p.Text)
		}
		if !slices.Equal(prompts, want) {
			t.Errorf("prompts %q, want %q", prompts, want)
		}
		wantActs := queryInts(t, db, `SELECT id FROM actions WHERE session_id = ? AND type NOT IN ('user_prompt', 'system_prompt')
			ORDER BY ts DESC, id DESC LIMIT 4`, latest)
		if ids := actIDs(got.Acts); !slices.Equal(ids, wantActs) {
			t.Errorf("acts %v, want %v", ids, wantActs)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE session_id = ? AND type = 'context_compacted'`, latest); int64(got.Compactions) != want {
			t.Errorf("compactions %d, want %d", got.Compactions, want)
		}
		for _, o := range got.Open {
			if queryInt(t, db, `SELECT success FROM actions WHERE id = ?`, o.ID) != 0 {
				t.Errorf("open failure %d did not fail", o.ID)
			}
		}
	})

	t.Run("ProjectPatterns", func(t *testing.T) {
		var got patternsAnswer
		callJSON(t, cs, toolPatterns, map[string]any{"days": 100000, "limit": 3}, &got)
		if len(got.Files) == 0 || len(got.Cmds) == 0 {
			t.Fatalf("no files or commands: %+v", got)
		}
		if got.Files[0].Path != rel(e.proj, file) {
			t.Errorf("top file %s, want %s", got.Files[0].Path, file)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND target = ? AND type IN ('read_file', 'edit_file', 'write_file')`,
			e.proj, file); int64(got.Files[0].N) != want {
			t.Errorf("top file count %d, want %d", got.Files[0].N, want)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND type = 'run_command'
			GROUP BY target ORDER BY count(*) DESC LIMIT 1`, e.proj); int64(got.Cmds[0].N) != want {
			t.Errorf("top command count %d, want %d", got.Cmds[0].N, want)
		}
		if want := queryInt(t, db, `SELECT count(*) FROM actions WHERE project = ? AND type = 'run_command' AND success = 0
			GROUP BY target ORDER BY count(*) DESC LIMIT 1`, e.proj); want > 0 && (len(got.Failing) == 0 || int64(got.Failing[0].N) != want) {
			t.Errorf("top failing %+v, want count %d", got.Failing, want)
		}
	})

	t.Run("CostSummary", func(t *testing.T) {
		rep, err := query.Cost(context.Background(), db, query.CostQuery{GroupBy: []string{"project"}})
		if err != nil {
			t.Fatal(err)
		}
		var got costAnswer
		callJSON(t, cs, toolCost, map[string]any{"days": 100000}, &got)
		checkCost(t, &got.costFig, rep, func(r query.CostRow) bool { return r.Project == e.proj })

		week, err := query.Cost(context.Background(), db, query.CostQuery{GroupBy: []string{"project"}, Filter: query.Filter{Since: e.now.Add(-7 * 24 * time.Hour)}})
		if err != nil {
			t.Fatal(err)
		}
		text, _ := call(t, cs, toolCost, nil)
		if w := rowOf(week, func(r query.CostRow) bool { return r.Project == e.proj }); w.Turns == 0 {
			if !strings.HasPrefix(text, "no model turn") {
				t.Errorf("default week without turns: %q", text)
			}
		} else {
			var def costAnswer
			callJSON(t, cs, toolCost, nil, &def)
			checkCost(t, &def.costFig, week, func(r query.CostRow) bool { return r.Project == e.proj })
		}

		sess, err := query.Cost(context.Background(), db, query.CostQuery{GroupBy: []string{"session"}})
		if err != nil {
			t.Fatal(err)
		}
		top := sess.Rows[0].SessionID // the most expensive session of the corpus
		var bySess costAnswer
		callJSON(t, cs, toolCost, map[string]any{"session": top}, &bySess)
		checkCost(t, &bySess.costFig, sess, func(r query.CostRow) bool { return r.SessionID == top })
	})

	t.Run("RedundancyReport", func(t *testing.T) {
		var got redundancyAnswer
		callJSON(t, cs, toolRedundancy, nil, &got)
		if got.Sess != latest {
			t.Fatalf("session %s, want %s", got.Sess, latest)
		}
		// Every command reported as rerun ran more than once in the session.
		for _, c := range got.Cmds {
			if n := queryInt(t, db, `SELECT count(*) FROM actions WHERE session_id = ? AND type = 'run_command' AND target = ?`,
				latest, c.Target); n < int64(c.N)+1 {
				t.Errorf("command %q reported %d reruns, ran %d times", c.Target, c.N, n)
			}
		}
	})

	t.Run("ListActionsAround", func(t *testing.T) {
		big := queryStr(t, db, `SELECT session_id FROM actions GROUP BY session_id ORDER BY count(*) DESC LIMIT 1`)
		ids := queryInts(t, db, `SELECT id FROM actions WHERE session_id = ? ORDER BY ts, id`, big)
		mid := len(ids) / 2
		var got aroundAnswer
		callJSON(t, cs, toolAround, map[string]any{"id": ids[mid], "before": 2, "after": 3}, &got)
		if want := ids[mid-2 : mid+4]; !slices.Equal(actIDs(got.Acts), want) {
			t.Errorf("around %d: %v, want %v", ids[mid], actIDs(got.Acts), want)
		}
		for _, a := range got.Acts {
			if a.At != (a.ID == ids[mid]) {
				t.Errorf("action %d marked at=%v", a.ID, a.At)
			}
		}
		var last aroundAnswer
		callJSON(t, cs, toolAround, map[string]any{"session": big, "before": 1}, &last)
		if want := ids[len(ids)-2:]; !slices.Equal(actIDs(last.Acts), want) {
			t.Errorf("latest of %s: %v, want %v", big, actIDs(last.Acts), want)
		}
	})
}

func actIDs(acts []act) []int64 {
	var ids []int64
	for _, a := range acts {
		ids = append(ids, a.ID)
	}
	return ids
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func rowOf(rep *query.CostReport, keep func(query.CostRow) bool) query.CostRow {
	var t query.CostRow
	for _, r := range rep.Rows {
		if keep(r) {
			t.CostUSD += r.CostUSD
			t.Turns += r.Turns
			t.InputTokens += r.InputTokens
			t.OutputTokens += r.OutputTokens
			t.CacheReadTokens += r.CacheReadTokens
			t.CacheCreationTokens += r.CacheCreationTokens
		}
	}
	return t
}

func checkCost(t *testing.T, got *costFig, rep *query.CostReport, keep func(query.CostRow) bool) {
	t.Helper()
	want := rowOf(rep, keep)
	if want.Turns == 0 {
		if got != nil {
			t.Errorf("cost %+v where the report has none", got)
		}
		return
	}
	if got == nil {
		t.Fatalf("no cost, want %+v", want)
	}
	if got.Turns != want.Turns || got.In != want.InputTokens || got.Out != want.OutputTokens ||
		got.CacheRead != want.CacheReadTokens || got.CacheWrite != want.CacheCreationTokens ||
		math.Abs(got.USD-want.CostUSD) > 0.00005 {
		t.Errorf("cost %+v, want %+v", *got, want)
	}
}

// checkClipped checks that got is want, or want's head and tail around a cut mark within max.
func checkClipped(t *testing.T, got, want string, max int) {
	t.Helper()
	if len(want) <= max {
		if got != want {
			t.Errorf("output %q, want %q", got, want)
		}
		return
	}
	head, tail, ok := strings.Cut(got, "…[")
	if !ok {
		t.Fatalf("clipped output has no cut mark: %q", got)
	}
	head = strings.TrimSuffix(head, "\n")
	_, tail, _ = strings.Cut(tail, "]…\n")
	if !strings.HasPrefix(want, head) || !strings.HasSuffix(want, tail) ||
		len(head)+len(tail) > max || tail == "" {
		t.Errorf("clipped output %q is not the head and tail of the stored one within %d bytes", got, max)
	}
}

// isTestCommand is the spec the test-run search follows, in Go.
func isTestCommand(cmd string) bool {
	cmd = strings.ToLower(cmd)
	for _, c := range testCommands {
		if strings.Contains(cmd, c) {
			return true
		}
	}
	return false
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

var asciiWord = regexp.MustCompile(`^[a-z0-9]+$`)

// rareWord picks a long word that two to five tool outputs of the project hold as a token, and
// returns it with those outputs' action ids, newest output first.
func rareWord(t *testing.T, db *sql.DB, proj string) (string, []int64) {
	t.Helper()
	rows, err := db.Query(`SELECT o.rowid, a.id, unpack(o.output) FROM action_outputs o JOIN actions a USING (event_id) WHERE a.project = ?`, proj)
	if err != nil {
		t.Fatal(err)
	}
	type hold struct{ rowid, id int64 }
	holders := map[string][]hold{}
	for rows.Next() {
		var h hold
		var out string
		rows.Scan(&h.rowid, &h.id, &out)
		seen := map[string]bool{}
		for _, w := range wordRE.FindAllString(strings.ToLower(out), -1) {
			if len(w) >= 10 && asciiWord.MatchString(w) && !seen[w] && strings.Trim(w, "0123456789abcdef") != "" {
				seen[w] = true
				holders[w] = append(holders[w], h)
			}
		}
	}
	rows.Close()
	var words []string
	for w, hs := range holders {
		if len(hs) >= 2 && len(hs) <= 5 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		t.Skip("no word held by two to five outputs")
	}
	sort.Strings(words)
	w := words[len(words)/2]
	hs := holders[w]
	sort.Slice(hs, func(i, j int) bool { return hs[i].rowid > hs[j].rowid })
	var ids []int64
	for _, h := range hs {
		ids = append(ids, h.id)
	}
	return w, ids
}
