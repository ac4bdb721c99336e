package mcpserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

type hit struct {
	act
	Snip string `json:"snip"`
}

type searchAnswer struct {
	Hits []hit  `json:"hits"`
	More string `json:"more,omitempty"` // set when the search stopped at maxSearchScan
}

// maxSearchScan bounds the matching outputs (of all projects, newest first) a project-scoped
// search examines. Each costs two index lookups to learn its project, so a word common in other
// projects and rare in this one would otherwise walk tens of thousands of them (60 ms and more on
// the benchmark store); past the bound the answer says so, and more words narrow the search.
const maxSearchScan = 1000

// search runs the full-text index over tool outputs newest first (FTS5 walks rowids backwards
// and the LIMIT stops it), keeping the project's, among the newest maxSearchScan matches, each
// with a snippet marked in Go (see markTerms: FTS5's snippet() is quadratic in the matches). The
// index is built by the writer in batches, so the last seconds of output may not be searchable
// yet.
func (s *Server) search(ctx context.Context, db *dbh, in searchArgs) (any, error) {
	fq, terms, err := parseQuery(in.Query)
	if err != nil {
		return nil, err
	}
	if fq == "" {
		return nil, errors.New("query is empty")
	}
	cond, args := "", []any{maxSnipScan, fq}
	proj := ""
	n := limit(in.Limit, defLimit)
	var bound int64
	if strings.TrimSpace(in.Project) != "*" {
		p, err := s.projectOf(ctx, db, in.Project)
		if err != nil {
			return nil, err
		}
		// The oldest of the newest maxSearchScan matches: the search stops there.
		err = db.QueryRowContext(ctx, `SELECT rowid FROM tool_output_fts WHERE tool_output_fts MATCH ?
			ORDER BY rowid DESC LIMIT 1 OFFSET ?`, fq, maxSearchScan-1).Scan(&bound)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		proj, cond = p, ` AND tool_output_fts.rowid >= ? AND a.project = ?`
		args = append(args, bound, p)
	}
	args = append(args, n)
	rows, err := db.QueryContext(ctx, `SELECT a.id, a.ts, a.session_id, a.type, a.target, a.project,
		substr(o.output, 1, ?)
		FROM tool_output_fts JOIN action_outputs o ON o.rowid = tool_output_fts.rowid JOIN actions a ON a.event_id = o.event_id
		WHERE tool_output_fts MATCH ?`+cond+` ORDER BY tool_output_fts.rowid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	now := s.now()
	ans := searchAnswer{Hits: []hit{}}
	for rows.Next() {
		var h hit
		var ts int64
		var sid, target, p, out string
		if err := rows.Scan(&h.ID, &ts, &sid, &h.Type, &target, &p, &out); err != nil {
			return nil, err
		}
		h.Ago, h.Sess, h.Target = ago(now, ts), short(sid), clip(rel(p, target), 120)
		marks, _ := markTerms(out, terms)
		h.Snip = strings.Join(strings.Fields(snippet(out, marks, snipBytes)), " ")
		ans.Hits = append(ans.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	stopped := bound > 0 && len(ans.Hits) < n
	if stopped {
		ans.More = "searched the newest " + strconv.Itoa(maxSearchScan) + " matching outputs of all projects; add words to narrow"
	}
	if len(ans.Hits) == 0 && !stopped {
		where := "in " + proj
		if proj == "" {
			where = "in any project"
		}
		return nil, notice("no tool output matches " + fq + " " + where)
	}
	return ans, nil
}

type pattern struct {
	Kind   string  `json:"kind"`
	Key    string  `json:"key"`
	Detail string  `json:"detail,omitempty"`
	Conf   float64 `json:"conf"`
	N      int     `json:"n"`
	Ago    string  `json:"ago"`
}

type fileUse struct {
	Path  string `json:"path"`
	N     int    `json:"n"`
	Edits int    `json:"edits"`
}

type cmdUse struct {
	Cmd   string `json:"cmd"`
	N     int    `json:"n"`
	Fails int    `json:"fails"`
}

type patternsAnswer struct {
	Project  string    `json:"project"`
	Patterns []pattern `json:"patterns,omitempty"` // from the patterns table, when an analysis filled it
	Days     int       `json:"days,omitempty"`     // the window the lists below are derived from
	Files    []fileUse `json:"files,omitempty"`    // most read, edited or written
	Cmds     []cmdUse  `json:"cmds,omitempty"`     // most run
	Failing  []cmdUse  `json:"failing,omitempty"`  // most failed
}

// patterns answers from the patterns table when it has rows for the project, else derives the
// project's habits from its actions of the last days (default 7: a month of a busy project is
// 40 ms of grouping on the benchmark store, a week under 10) through actions(project, type,
// ts) and the failures index. The rows to group are selected in a materialized CTE: grouped in
// one query, the planner would rather walk the project's every action in target order through
// actions(project, target, ts) than sort the few rows of the window.
func (s *Server) patterns(ctx context.Context, db *dbh, in patternArgs) (any, error) {
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	n := limit(in.Limit, 8)
	now := s.now()
	ans := patternsAnswer{Project: proj}
	rows, err := db.QueryContext(ctx, `SELECT kind, key, detail, confidence, occurrences, last_seen FROM patterns
		WHERE project = ? ORDER BY occurrences DESC LIMIT ?`, proj, n)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p pattern
		var ts int64
		if err := rows.Scan(&p.Kind, &p.Key, &p.Detail, &p.Conf, &p.N, &ts); err != nil {
			rows.Close()
			return nil, err
		}
		p.Ago, p.Detail = ago(now, ts), clip(p.Detail, 200)
		ans.Patterns = append(ans.Patterns, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ans.Patterns) > 0 {
		return ans, err
	}

	ans.Days = daysOf(in.Days)
	since := now - int64(ans.Days)*86400000
	if err := scanRows(ctx, db, func(r *sql.Rows) error {
		var f fileUse
		if err := r.Scan(&f.Path, &f.N, &f.Edits); err != nil {
			return err
		}
		f.Path = clip(rel(proj, f.Path), 160)
		ans.Files = append(ans.Files, f)
		return nil
	}, `WITH r AS MATERIALIZED (SELECT target, type FROM actions WHERE project = ?
		AND type IN ('read_file', 'edit_file', 'write_file') AND ts >= ? AND target != '')
		SELECT target, count(*), sum(type != 'read_file') FROM r GROUP BY target ORDER BY count(*) DESC, target LIMIT ?`, proj, since, n); err != nil {
		return nil, err
	}
	cmdRow := func(list *[]cmdUse) func(r *sql.Rows) error {
		return func(r *sql.Rows) error {
			var c cmdUse
			if err := r.Scan(&c.Cmd, &c.N, &c.Fails); err != nil {
				return err
			}
			c.Cmd = clip(c.Cmd, 120)
			*list = append(*list, c)
			return nil
		}
	}
	if err := scanRows(ctx, db, cmdRow(&ans.Cmds), `SELECT target, count(*), coalesce(sum(success = 0), 0) FROM actions
		WHERE project = ? AND type = 'run_command' AND ts >= ? GROUP BY target ORDER BY count(*) DESC, target LIMIT ?`,
		proj, since, n); err != nil {
		return nil, err
	}
	if err := scanRows(ctx, db, cmdRow(&ans.Failing), `SELECT target, count(*), count(*) FROM actions
		WHERE project = ? AND success = 0 AND ts >= ? AND +type = 'run_command' GROUP BY target
		ORDER BY count(*) DESC, target LIMIT ?`, proj, since, n); err != nil {
		return nil, err
	}
	if len(ans.Files) == 0 && len(ans.Cmds) == 0 {
		return nil, notice("nothing recorded in " + proj + " in the last " + strconv.Itoa(ans.Days) + " days")
	}
	return ans, nil
}

// maxDays caps a days argument (the answer says the days it covers): a window is a range of
// the project's index, and a larger number would overflow the milliseconds it is counted in.
const maxDays = 366

// daysOf returns a days argument: 7 by default, at most maxDays.
func daysOf(n int) int {
	switch {
	case n <= 0:
		return 7
	case n > maxDays:
		return maxDays
	}
	return n
}

func scanRows(ctx context.Context, db *dbh, each func(*sql.Rows) error, query string, args ...any) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// costFig is a cost summary, in internal/cost's figures, shortened for the agent.
type costFig struct {
	USD        float64     `json:"usd"`
	Turns      int64       `json:"turns"`
	In         int64       `json:"in"`
	Out        int64       `json:"out"`
	CacheRead  int64       `json:"cache_read"`
	CacheWrite int64       `json:"cache_write"`
	Proxy      int64       `json:"proxy,omitempty"`  // turns measured by the proxy (exact); the rest from transcripts
	Models     []modelCost `json:"models,omitempty"` // when more than one model
}

type modelCost struct {
	Model string  `json:"model"`
	USD   float64 `json:"usd"`
	Turns int64   `json:"turns"`
}

// usd rounds to a hundredth of a cent.
func usd(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// scopedCost runs store.TurnsSQL (every model turn once, as internal/cost counts them) restricted to
// a set of sessions: cond, a condition on session_id, with the session indexes of both tables,
// where cost.Query's project filter would select turns by their own project instead of the
// sessions'. TestScopedCost_EqualsCostRun compares the two on every session and project.
//
// It sums the turns of the sessions cond selects (with its named arguments) since since
// (ms), by model.
func scopedCost(ctx context.Context, db *dbh, cond string, since int64, args ...any) (costFig, error) {
	args = append(args, sql.Named("since", since), sql.Named("window", store.JoinWindowMs))
	var c costFig
	err := scanRows(ctx, db, func(r *sql.Rows) error {
		var m modelCost
		var in, out, cr, cw, turns, proxy int64
		if err := r.Scan(&m.Model, &in, &out, &cr, &cw, &m.USD, &turns, &proxy); err != nil {
			return err
		}
		c.USD += m.USD
		c.Turns += turns
		c.In, c.Out, c.CacheRead, c.CacheWrite, c.Proxy = c.In+in, c.Out+out, c.CacheRead+cr, c.CacheWrite+cw, c.Proxy+proxy
		m.USD, m.Turns = usd(m.USD), turns
		c.Models = append(c.Models, m)
		return nil
	}, `SELECT model, sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens),
		sum(cost_usd), count(*), sum(proxy) FROM (`+fmt.Sprintf(store.TurnsSQL, "api_turns."+cond+" AND api_turns.ts >= :since",
		"t."+cond+" AND t.ts >= :since")+`)
		GROUP BY model ORDER BY sum(cost_usd) DESC, model`, args...)
	c.USD = usd(c.USD)
	if len(c.Models) < 2 {
		c.Models = nil
	}
	return c, err
}

// sessionCost is one session's cost, all of it.
func sessionCost(ctx context.Context, db *dbh, x session) (costFig, error) {
	return scopedCost(ctx, db, `session_id = :session`, 0, sql.Named("session", x.ID))
}

// projectCost is the cost of the project's sessions since since (ms): a turn counts for the
// project of its session, which also places the proxy's turns (the proxy does not know the
// project).
func projectCost(ctx context.Context, db *dbh, proj string, since int64) (costFig, error) {
	return scopedCost(ctx, db, `session_id IN (SELECT session_id FROM sessions WHERE project = :project AND last_seen >= :since)`,
		since, sql.Named("project", proj))
}

type costAnswer struct {
	Sess    string `json:"sess,omitempty"`
	Project string `json:"project,omitempty"`
	Days    int    `json:"days,omitempty"`
	costFig
}

// costSummary reports a session's cost when one is named, else the project's over the last days.
func (s *Server) costSummary(ctx context.Context, db *dbh, in costArgs) (any, error) {
	if in.Session != "" {
		x, err := s.sessionOf(ctx, db, in.Session, "")
		if err != nil {
			return nil, err
		}
		c, err := sessionCost(ctx, db, x)
		if err != nil {
			return nil, err
		}
		if c.Turns == 0 {
			return nil, notice("no model turn recorded for session " + x.ID)
		}
		return costAnswer{Sess: x.ID, costFig: c}, nil
	}
	proj, err := s.projectOf(ctx, db, in.Project)
	if err != nil {
		return nil, err
	}
	days := daysOf(in.Days)
	c, err := projectCost(ctx, db, proj, s.opts.Now().Add(-time.Duration(days)*24*time.Hour).UnixMilli())
	if err != nil {
		return nil, err
	}
	if c.Turns == 0 {
		return nil, notice("no model turn recorded for " + proj + " in the last " + strconv.Itoa(days) + " days")
	}
	return costAnswer{Project: proj, Days: days, costFig: c}, nil
}

type redundant struct {
	Target string `json:"target"`
	N      int    `json:"n"`     // redundant repeats
	Bytes  int64  `json:"bytes"` // their output
}

type redundancyAnswer struct {
	Sess   string      `json:"sess"`
	Reads  []redundant `json:"reads"`
	Cmds   []redundant `json:"cmds"`
	Bytes  int64       `json:"bytes"`      // output of every redundant repeat
	Tokens int64       `json:"tokens_est"` // bytes/4
}

// maxRedundancyActions bounds the actions a report reads: the newest of a very long session.
const maxRedundancyActions = 20000

// redundancy replays a session's actions in order and counts:
//   - a read of a file the session had read before, unchanged since: same content hash when both
//     reads were hashed (live sessions), else no edit or write of the file and no command at all
//     in between (a command may have changed it);
//   - a command run again with no edit or write of any file since its previous run, whether
//     either run failed or not (rerunning a failed command unchanged repeats its failure).
func (s *Server) redundancy(ctx context.Context, db *dbh, in listArgs) (any, error) {
	x, err := s.sessionOf(ctx, db, in.Session, in.Project)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT type, target, success, content_hash, output_size FROM actions
		WHERE session_id = ? ORDER BY ts DESC, id DESC LIMIT ?`, x.ID, maxRedundancyActions)
	if err != nil {
		return nil, err
	}
	type step struct {
		typ, target, hash string
		ok                bool
		size              int64
	}
	var steps []step
	for rows.Next() {
		var st step
		var ok sql.NullBool
		if err := rows.Scan(&st.typ, &st.target, &ok, &st.hash, &st.size); err != nil {
			rows.Close()
			return nil, err
		}
		st.ok = ok.Valid && ok.Bool
		steps = append(steps, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	type fileSeen struct {
		hash        string
		writes, cmd int // edit and command counters when last read
	}
	files := map[string]fileSeen{}
	writesOf := map[string]int{} // edits and writes per file so far
	lastRun := map[string]int{}  // total edits when a command last ran
	cmds, edits := 0, 0
	reads, reruns := map[string]*redundant{}, map[string]*redundant{}
	count := func(m map[string]*redundant, target string, size int64) {
		r := m[target]
		if r == nil {
			r = &redundant{Target: rel(x.Project, target)}
			m[target] = r
		}
		r.N++
		r.Bytes += size
	}
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i]
		if st.target == "" || !st.ok && st.typ != "run_command" {
			continue // a failed read saw nothing, a failed edit changed nothing; a failed command still ran
		}
		switch st.typ {
		case "read_file":
			if f, seen := files[st.target]; seen {
				same := f.hash == st.hash
				if f.hash == "" || st.hash == "" {
					same = f.writes == writesOf[st.target] && f.cmd == cmds
				}
				if same {
					count(reads, st.target, st.size)
				}
			}
			files[st.target] = fileSeen{hash: st.hash, writes: writesOf[st.target], cmd: cmds}
		case "edit_file", "write_file":
			writesOf[st.target]++
			edits++
		case "run_command":
			if at, ran := lastRun[st.target]; ran && at == edits {
				count(reruns, st.target, st.size)
			}
			lastRun[st.target] = edits
			cmds++
		}
	}
	ans := redundancyAnswer{Sess: x.ID}
	n := limit(in.Limit, defLimit)
	ans.Reads, ans.Bytes = topRedundant(reads, n, 160, ans.Bytes)
	ans.Cmds, ans.Bytes = topRedundant(reruns, n, 120, ans.Bytes)
	ans.Tokens = ans.Bytes / 4
	return ans, nil
}

// topRedundant sorts by bytes, keeps n, and adds every entry's bytes to total.
func topRedundant(m map[string]*redundant, n, width int, total int64) ([]redundant, int64) {
	out := make([]redundant, 0, len(m))
	for _, r := range m {
		total += r.Bytes
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Target < out[j].Target
	})
	if len(out) > n {
		out = out[:n]
	}
	for i := range out {
		out[i].Target = clip(out[i].Target, width)
	}
	return out, total
}
