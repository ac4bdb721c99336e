package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// Analyzer keeps the analysis tables current. Only the process that owns the store (the writer)
// runs one; its transactions are short (one session, or one project's patterns) so that batches
// are never held up for long.
type Analyzer struct {
	DB *sql.DB // the writer's connection: the analysis writes there, in short transactions
	// Read, when set, is a read-only connection to the same store (store.Store.ReadDB): the
	// analysis reads the actions there, so that the writer's connection is held only while the
	// results are written.
	Read   *sql.DB
	Logger *slog.Logger
	Now    func() time.Time
	// PatternEvery is the least time between two recomputations of one project's patterns (they
	// read all the project's file and command actions). Zero means one minute.
	PatternEvery time.Duration
}

// reader is where the analysis reads.
func (a *Analyzer) reader() *sql.DB {
	if a.Read != nil {
		return a.Read
	}
	return a.DB
}

func (a *Analyzer) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Progress is what one Step did and what is left.
type Progress struct {
	Sessions        int   // sessions analysed
	Projects        int   // projects whose patterns were recomputed
	PendingSessions int64 // sessions still marked
	PendingProjects int64 // projects still marked (some wait for PatternEvery)
}

// Step analyses at most maxSessions marked sessions, then recomputes the patterns of the marked
// projects whose last computation is older than PatternEvery (with force: all of them, once no
// session is left marked).
func (a *Analyzer) Step(ctx context.Context, maxSessions int, force bool) (Progress, error) {
	var p Progress
	rows, err := a.reader().QueryContext(ctx, `SELECT client, session_id, since_ts, gen FROM analysis_dirty LIMIT ?`, maxSessions)
	if err != nil {
		return p, err
	}
	var marks []mark
	for rows.Next() {
		var m mark
		if err := rows.Scan(&m.client, &m.id, &m.since, &m.gen); err != nil {
			rows.Close()
			return p, err
		}
		marks = append(marks, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, err
	}
	// The sessions are read and analysed where the analysis reads (a.Read, beside the writer's
	// connection, which a batch or the full-text index may hold meanwhile); then their findings,
	// the files they touched (once each, however many sessions touched them) and the marks are
	// written in one transaction: the writer's connection is waited for once per step, not once
	// per session (after a history, the analysis went one session per index transaction). A stop
	// before the write leaves the marks, so the sessions are analysed again.
	touched, inProjects := map[fileKey]bool{}, map[string]bool{}
	found := make([]findings, 0, len(marks))
	for _, m := range marks {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		f, err := a.session(ctx, m.client, m.id, m.since, touched, inProjects)
		if err != nil {
			return p, fmt.Errorf("analyse session %s: %w", m.id, err)
		}
		found = append(found, f)
	}
	if len(marks) > 0 {
		if err := a.settle(ctx, found, touched, inProjects, marks); err != nil {
			return p, err
		}
		p.Sessions = len(marks)
	}
	every := a.PatternEvery
	if every <= 0 {
		every = time.Minute
	}
	cutoff := a.now().Add(-every).UnixMilli()
	if force {
		// All due now, but only once the sessions are done: each analysed session marks its
		// project again.
		var left int64
		if err := a.reader().QueryRowContext(ctx, `SELECT count(*) FROM analysis_dirty`).Scan(&left); err != nil {
			return p, err
		}
		cutoff = a.now().UnixMilli() + 1
		if left > 0 {
			cutoff = 0
		}
	}
	var projects []string
	prows, err := a.reader().QueryContext(ctx, `SELECT project FROM pattern_state WHERE dirty AND computed_at < ?`, cutoff)
	if err != nil {
		return p, err
	}
	for prows.Next() {
		var pr string
		if err := prows.Scan(&pr); err != nil {
			prows.Close()
			return p, err
		}
		projects = append(projects, pr)
	}
	prows.Close()
	if err := prows.Err(); err != nil {
		return p, err
	}
	if err := a.projectPatterns(ctx, projects); err != nil {
		return p, err
	}
	p.Projects += len(projects)
	if err := a.reader().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM analysis_dirty), (SELECT count(*) FROM pattern_state WHERE dirty)`).
		Scan(&p.PendingSessions, &p.PendingProjects); err != nil {
		return p, err
	}
	return p, nil
}

// Run analyses everything marked, patterns included, and returns when nothing is left.
func (a *Analyzer) Run(ctx context.Context) (Progress, error) {
	var total Progress
	for {
		p, err := a.Step(ctx, 200, true)
		total.Sessions += p.Sessions
		total.Projects += p.Projects
		total.PendingSessions, total.PendingProjects = p.PendingSessions, p.PendingProjects
		if err != nil || (p.PendingSessions == 0 && p.PendingProjects == 0) || (p.Sessions == 0 && p.Projects == 0) {
			// Nothing left, or nothing done (which with force means nothing can be).
			return total, err
		}
	}
}

const sessionActionsSQL = `SELECT ts, project, type, target, agent_id, freshness, success FROM actions
	WHERE session_id = ? AND client = ? ORDER BY ts, id`

// mark is a session marked for analysis.
type mark struct {
	client, id string
	since, gen int64
}

type fileKey struct{ project, target string }

// findings are what the analysis of one session found, to be written.
type findings struct {
	client, id string
	row        *store.SessionAnalysis // nil: the session has no action left
	rereads    []store.SessionReread
	repeats    []store.SessionRepeat
}

// settle writes the sessions' findings, marks the patterns of their projects, recomputes the
// file_clients rows of the files touched and clears the marks unless a batch marked the session
// again meanwhile, in one transaction.
func (a *Analyzer) settle(ctx context.Context, found []findings, touched map[fileKey]bool, projects map[string]bool, marks []mark) error {
	tx, err := a.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := a.now().UnixMilli()
	for _, f := range found {
		if err := store.ReplaceSessionAnalysis(ctx, tx, f.client, f.id, f.row, f.rereads, f.repeats, now); err != nil {
			return err
		}
	}
	for _, pr := range slices.Sorted(maps.Keys(projects)) {
		if err := store.MarkPatterns(ctx, tx, pr); err != nil {
			return err
		}
	}
	keys := slices.SortedFunc(maps.Keys(touched), func(x, y fileKey) int {
		if c := strings.Compare(x.project, y.project); c != 0 {
			return c
		}
		return strings.Compare(x.target, y.target)
	})
	if len(keys) > 0 {
		fc, err := store.NewFileClients(ctx, tx)
		if err != nil {
			return err
		}
		defer fc.Close()
		for _, k := range keys {
			if err := fc.Refresh(ctx, k.project, k.target); err != nil {
				return err
			}
		}
	}
	for _, m := range marks {
		if err := store.ClearAnalysisMark(ctx, tx, m.client, m.id, m.gen); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// session reads and analyses one session, and adds the files it touched from since on to
// touched and the projects of its actions to projects.
func (a *Analyzer) session(ctx context.Context, client, id string, since int64, touched map[fileKey]bool, projects map[string]bool) (findings, error) {
	f := findings{client: client, id: id}
	rows, err := a.reader().QueryContext(ctx, sessionActionsSQL, id, client)
	if err != nil {
		return f, err
	}
	var acts []Action
	for rows.Next() {
		var x Action
		var ok sql.NullBool
		if err := rows.Scan(&x.Ts, &x.Project, &x.Type, &x.Target, &x.AgentID, &x.Freshness, &ok); err != nil {
			rows.Close()
			return f, err
		}
		if ok.Valid {
			v := ok.Bool
			x.Success = &v
		}
		if x.Ts >= since && isFile(x.Type) && x.Target != "" {
			touched[fileKey{x.Project, x.Target}] = true
		}
		projects[x.Project] = true
		acts = append(acts, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return f, err
	}
	s, rr, rp := AnalyseSession(client, id, acts)
	if len(acts) > 0 {
		f.row = storedSession(s)
	}
	f.rereads, f.repeats = storedRereads(rr), storedRepeats(rp)
	return f, nil
}

// storedSession is s as the store takes it.
func storedSession(s Session) *store.SessionAnalysis {
	return &store.SessionAnalysis{Project: s.Project, FirstTs: s.FirstTs, LastTs: s.LastTs, Actions: s.Actions,
		Failures: s.Failures, Completed: s.Completed, Reads: s.Reads, Edits: s.Edits, Commands: s.Commands,
		Searches: s.Searches, Files: s.Files, Agents: s.Agents, StaleRereads: s.StaleRereads,
		UnclassifiedRereads: s.UnclassifiedRereads, CrossAgentFiles: s.CrossAgentFiles,
		RepeatedCommands: s.RepeatedCommands, ErrorRate: s.ErrorRate, Redundancy: s.Redundancy,
		Exploration: s.Exploration, Score: s.Score}
}

// storedRereads are rr as the store takes them.
func storedRereads(rr []Reread) []store.SessionReread {
	out := make([]store.SessionReread, len(rr))
	for i, r := range rr {
		out[i] = store.SessionReread{Target: r.Target, Project: r.Project, Reads: r.Reads, Stale: r.Stale,
			Unclassified: r.Unclassified, Agents: r.Agents, LastTs: r.LastTs}
	}
	return out
}

// storedRepeats are rp as the store takes them.
func storedRepeats(rp []Repeat) []store.SessionRepeat {
	out := make([]store.SessionRepeat, len(rp))
	for i, r := range rp {
		out[i] = store.SessionRepeat{Command: r.Command, Project: r.Project, Runs: r.Runs, Repeats: r.Repeats, LastTs: r.LastTs}
	}
	return out
}
