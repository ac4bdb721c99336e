package query

// The analysis: work the agents did twice (stale re-reads, repeated commands, files several
// clients touched), habits (patterns with a confidence that decays when they stop being seen) and
// a score per session, read from the tables the writer's analysis loop (internal/analysis) keeps
// current (migration 0006), so an answer costs a few thousand rows at most whatever the history's
// size.
//
// Windows select sessions: a session counts in a window when it acted in it (its last action is
// inside), and then with all its findings, since a re-read or a repeat is a property of the session.

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"
	"time"
)

// Definitions of a session's findings and score parts (shown in the dashboard's help and the CLI).
const (
	// A stale re-read is a read that observer-watch classified live as "stale" or "changed
	// elsewhere": the file had changed since the session last saw it. A later read without a
	// classification (history scanned after the fact) counts as an unclassified re-read.
	DefStaleReread        = "a read of a file the session had read before, classified live as changed since it last saw it (stale or changed elsewhere)"
	DefUnclassifiedReread = "a second or later read of the same file in the session, from history without a live classification"
	DefCrossAgent         = "a file read by more than one agent of the session (the main agent and its subagents share the session)"
	DefRepeat             = "a command run again with no edit or write by the session (any file, any of its agents) since its previous identical run"
	DefShared             = "a project's file read, edited or written by more than one client (clients counted over all time)"
	DefErrorRate          = "failed actions over actions whose result is known"
	DefRedundancy         = "stale and unclassified re-reads plus repeated commands, over reads plus commands"
	DefExploration        = "reads, searches and web lookups over all actions: high is a session that mostly looked around"
	DefScore              = "100 × (1 − error rate) × (1 − redundancy), rounded: 100 is a session with no failures and no repeated work"
)

// HalfLife is the time over which a pattern's confidence halves once it is no longer seen.
const HalfLife = 14 * 24 * time.Hour

// PatternKinds lists the pattern kinds.
var PatternKinds = []string{"command_pair", "co_edit", "edit_then_test", "hot_file"}

// Pattern is one habit of a project.
type Pattern struct {
	Kind       string  `json:"kind"`
	Project    string  `json:"project"`
	Key        string  `json:"key"`
	Detail     string  `json:"detail"`
	Support    int64   `json:"support"`
	Ratio      float64 `json:"ratio"`      // support over opportunities
	Confidence float64 `json:"confidence"` // ratio decayed by the time since last seen
	LastSeen   int64   `json:"last_seen"`
}

// Decay is the factor a pattern last seen at lastSeen (ms) keeps at now.
func Decay(lastSeen int64, now time.Time) float64 {
	age := now.Sub(time.UnixMilli(lastSeen))
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(HalfLife))
}

// Reread is one session's reads of one file: listed when some were stale or unclassified
// re-reads, or when more than one agent of the session read it.
type Reread struct {
	Client       string `json:"client"`
	SessionID    string `json:"session_id"`
	Title        string `json:"title"` // the session's
	Project      string `json:"project"`
	Target       string `json:"target"`
	Reads        int64  `json:"reads"`
	Stale        int64  `json:"stale"`        // classified live as changed since last seen
	Unclassified int64  `json:"unclassified"` // later reads without a classification
	Agents       int64  `json:"agents"`       // distinct agents (main + subagents) that read it
	Label        string `json:"label"`
	LastTs       int64  `json:"last_ts"`
}

// Finding names the finding: stale, an unclassified re-read or only reads by several agents, and
// whether more than one agent read the file.
func (r Reread) Finding() string {
	switch {
	case r.Stale == 0 && r.Unclassified == 0:
		return "read by several agents"
	case r.Stale > 0 && r.Agents > 1:
		return "stale, across agents"
	case r.Stale > 0:
		return "stale"
	case r.Agents > 1:
		return "re-read (unclassified), across agents"
	}
	return "re-read (unclassified)"
}

// Repeat is one session's repeated command.
type Repeat struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Title     string `json:"title"` // the session's
	Project   string `json:"project"`
	Command   string `json:"command"`
	Runs      int64  `json:"runs"`
	Repeats   int64  `json:"repeats"` // runs with nothing edited since the previous identical run
	LastTs    int64  `json:"last_ts"`
}

// SessionScore is a session's analysis: counts, findings and score.
type SessionScore struct {
	Client              string  `json:"client"`
	SessionID           string  `json:"session_id"`
	Title               string  `json:"title"`
	Project             string  `json:"project"`
	FirstTs             int64   `json:"first_ts"`
	LastTs              int64   `json:"last_ts"`
	Actions             int64   `json:"actions"`
	Failures            int64   `json:"failures"`
	Completed           int64   `json:"completed"`
	Reads               int64   `json:"reads"`
	Edits               int64   `json:"edits"`
	Commands            int64   `json:"commands"`
	Searches            int64   `json:"searches"`
	Files               int64   `json:"files"`
	Agents              int64   `json:"agents"`
	StaleRereads        int64   `json:"stale_rereads"`
	UnclassifiedRereads int64   `json:"unclassified_rereads"`
	CrossAgentFiles     int64   `json:"cross_agent_files"`
	RepeatedCommands    int64   `json:"repeated_commands"`
	ErrorRate           float64 `json:"error_rate"`
	Redundancy          float64 `json:"redundancy"`
	Exploration         float64 `json:"exploration"`
	Score               int64   `json:"score"`
}

// AnalysisQuery selects what an analysis read covers: the sessions active in the Filter's window
// (their last action in it), of its project and client. Member and SessionIDs do not apply (the
// analysis tables have no member column); SessionID applies to Scores alone. Limit caps each list
// (0: AnalysisLimit).
type AnalysisQuery struct {
	Filter
	Limit int
}

// AnalysisLimit is the length of a list when AnalysisQuery.Limit is 0.
const AnalysisLimit = 100

func (q AnalysisQuery) limit() int {
	if q.Limit <= 0 {
		return AnalysisLimit
	}
	return q.Limit
}

// where builds the conditions on a table with client, project and a time column.
// extra are further conditions with one argument each ("kind = ?", value), kept when the value
// is not empty.
func (q AnalysisQuery) where(alias, tsCol string, extra ...any) (string, []any) {
	var cs []string
	var args []any
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] != "" {
			cs = append(cs, extra[i].(string))
			args = append(args, extra[i+1])
		}
	}
	if !q.Since.IsZero() {
		cs = append(cs, alias+tsCol+" >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		cs = append(cs, alias+tsCol+" < ?")
		args = append(args, q.Until.UnixMilli())
	}
	if q.Project != "" {
		cs = append(cs, alias+"project = ?")
		args = append(args, q.Project)
	}
	if q.Client != "" {
		cs = append(cs, alias+"client = ?")
		args = append(args, q.Client)
	}
	if len(cs) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(cs, " AND "), args
}

// Discovery is work the agents did twice, in the sessions of a window.
type Discovery struct {
	Rereads []Reread      `json:"rereads"`
	Repeats []Repeat      `json:"repeats"`
	Shared  []SharedFile  `json:"shared_files"`
	Totals  DiscoveryTots `json:"totals"`
	Pending int64         `json:"pending_sessions"` // sessions the writer has yet to analyse
}

// DiscoveryTots sums each list over the whole window.
type DiscoveryTots struct {
	Sessions            int64 `json:"sessions"`
	StaleRereads        int64 `json:"stale_rereads"`
	UnclassifiedRereads int64 `json:"unclassified_rereads"`
	CrossAgentFiles     int64 `json:"cross_agent_files"`
	RepeatedCommands    int64 `json:"repeated_commands"`
	SharedFiles         int64 `json:"shared_files"`
}

// SharedFile is a file several clients touched.
type SharedFile struct {
	Project string   `json:"project"`
	Target  string   `json:"target"`
	Clients []string `json:"clients"`
	Actions int64    `json:"actions"`
	LastTs  int64    `json:"last_ts"`
}

// Discover reads the findings of the sessions active in the window. Lists are ordered worst first
// and capped at the query's limit; totals count them all. Shared files are listed when touched
// in the window; their clients and actions count all time.
func Discover(ctx context.Context, db Querier, q AnalysisQuery) (*Discovery, error) {
	d := &Discovery{Rereads: []Reread{}, Repeats: []Repeat{}, Shared: []SharedFile{}}
	w, args := q.where("", "last_ts")
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(stale_rereads), 0), coalesce(sum(unclassified_rereads), 0),
		coalesce(sum(cross_agent_files), 0), coalesce(sum(repeated_commands), 0) FROM session_analysis`+w, args...).
		Scan(&d.Totals.Sessions, &d.Totals.StaleRereads, &d.Totals.UnclassifiedRereads, &d.Totals.CrossAgentFiles,
			&d.Totals.RepeatedCommands); err != nil {
		return nil, err
	}
	// Unless the window holds very few of the sessions, the lists are read in rank order, each
	// row checked against its session, until the limit: with a share p of the sessions in the
	// window that reads about limit/p rows. A window with under 2% of them starts from its few
	// sessions instead and sorts their rows.
	var all int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM session_analysis`).Scan(&all); err != nil {
		return nil, err
	}
	wide := d.Totals.Sessions*50 >= all
	sw, sargs := q.where("s.", "last_ts")
	join := func(table, index string) string {
		if wide {
			return " FROM " + table + " r INDEXED BY " + index + " CROSS JOIN session_analysis s ON s.client = r.client AND s.session_id = r.session_id"
		}
		return " FROM session_analysis s CROSS JOIN " + table + " r ON r.client = s.client AND r.session_id = s.session_id"
	}
	rows, err := db.QueryContext(ctx, `SELECT r.client, r.session_id, r.project, r.target, r.reads, r.stale, r.unclassified,
		r.agents, r.last_ts`+join("session_rereads", "session_rereads_rank")+sw+
		` ORDER BY r.stale DESC, r.unclassified DESC LIMIT ?`, append(sargs, q.limit())...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r Reread
		if err := rows.Scan(&r.Client, &r.SessionID, &r.Project, &r.Target, &r.Reads, &r.Stale, &r.Unclassified,
			&r.Agents, &r.LastTs); err != nil {
			rows.Close()
			return nil, err
		}
		r.Label = r.Finding()
		d.Rereads = append(d.Rereads, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.QueryContext(ctx, `SELECT r.client, r.session_id, r.project, r.command, r.runs, r.repeats, r.last_ts`+
		join("session_repeats", "session_repeats_rank")+sw+` ORDER BY r.repeats DESC LIMIT ?`, append(sargs, q.limit())...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r Repeat
		if err := rows.Scan(&r.Client, &r.SessionID, &r.Project, &r.Command, &r.Runs, &r.Repeats, &r.LastTs); err != nil {
			rows.Close()
			return nil, err
		}
		d.Repeats = append(d.Repeats, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := sharedFiles(ctx, db, q, d, wide); err != nil {
		return nil, err
	}
	t := titler{}
	for i := range d.Rereads {
		if d.Rereads[i].Title, err = t.title(ctx, db, d.Rereads[i].Client, d.Rereads[i].SessionID); err != nil {
			return nil, err
		}
	}
	for i := range d.Repeats {
		if d.Repeats[i].Title, err = t.title(ctx, db, d.Repeats[i].Client, d.Repeats[i].SessionID); err != nil {
			return nil, err
		}
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM analysis_dirty`).Scan(&d.Pending); err != nil {
		return nil, err
	}
	return d, nil
}

func sharedFiles(ctx context.Context, db Querier, q AnalysisQuery, d *Discovery, wide bool) error {
	// A client filter keeps the files that client is one of the clients of.
	client := q.Client
	q.Client = ""
	like := ""
	if client != "" {
		like = "%," + client + ",%"
	}
	w, args := q.where("", "last_ts", "(','||clients||',') LIKE ?", like)
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM shared_files`+w, args...).Scan(&d.Totals.SharedFiles); err != nil {
		return err
	}
	// As the lists above: in rank order for a wide window (ties in path order, the table's key).
	from := " FROM shared_files"
	if wide {
		from += " INDEXED BY shared_files_rank"
	}
	rows, err := db.QueryContext(ctx, `SELECT project, target, clients, actions, last_ts`+from+w+
		` ORDER BY n_clients DESC, actions DESC, project, target LIMIT ?`, append(args, q.limit())...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var sf SharedFile
		var clients string
		if err := rows.Scan(&sf.Project, &sf.Target, &clients, &sf.Actions, &sf.LastTs); err != nil {
			return err
		}
		sf.Clients = strings.Split(clients, ",")
		slices.Sort(sf.Clients)
		d.Shared = append(d.Shared, sf)
	}
	return rows.Err()
}

// PatternSet is the answer of Patterns.
type PatternSet struct {
	Patterns []Pattern `json:"patterns"`
	Pending  int64     `json:"pending_projects"` // projects whose patterns are being recomputed
}

// Patterns reads the stored patterns seen since the query's start (of its project; the client
// filter does not apply, patterns are a project's), kind "" for all, with their confidence decayed
// to now; the strongest (support × confidence) Limit of each kind, at least minConfidence.
func Patterns(ctx context.Context, db Querier, q AnalysisQuery, kind string, minConfidence float64, now time.Time) (*PatternSet, error) {
	q.Client = ""
	w, args := q.where("", "last_seen", "kind = ?", kind)
	rows, err := db.QueryContext(ctx, `SELECT kind, project, key, detail, occurrences, confidence, last_seen FROM patterns`+w, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byKind := map[string][]Pattern{}
	for rows.Next() {
		var p Pattern
		if err := rows.Scan(&p.Kind, &p.Project, &p.Key, &p.Detail, &p.Support, &p.Ratio, &p.LastSeen); err != nil {
			return nil, err
		}
		p.Confidence = p.Ratio * Decay(p.LastSeen, now)
		if p.Confidence < minConfidence {
			continue
		}
		byKind[p.Kind] = append(byKind[p.Kind], p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := &PatternSet{Patterns: []Pattern{}}
	for _, k := range PatternKinds {
		ps := byKind[k]
		slices.SortStableFunc(ps, func(a, b Pattern) int {
			if c := cmp.Compare(float64(b.Support)*b.Confidence, float64(a.Support)*a.Confidence); c != 0 {
				return c
			}
			if c := cmp.Compare(a.Project, b.Project); c != 0 {
				return c
			}
			return cmp.Compare(a.Key, b.Key)
		})
		out.Patterns = append(out.Patterns, ps[:min(len(ps), q.limit())]...)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pattern_state WHERE dirty`).Scan(&out.Pending); err != nil {
		return nil, err
	}
	return out, nil
}

// Scores lists the sessions active in the window with their analysis, lowest score first (ties:
// most recent first), capped at the query's limit; a SessionID selects that session (of any
// client, unless the query names one).
func Scores(ctx context.Context, db Querier, q AnalysisQuery) ([]SessionScore, error) {
	w, args := q.where("", "last_ts", "session_id = ?", q.SessionID)
	rows, err := db.QueryContext(ctx, `SELECT client, session_id, project, first_ts, last_ts, actions, failures, completed,
		reads, edits, commands, searches, files, agents, stale_rereads, unclassified_rereads, cross_agent_files,
		repeated_commands, error_rate, redundancy, exploration, score FROM session_analysis`+w+
		` ORDER BY score, last_ts DESC LIMIT ?`, append(args, q.limit())...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []SessionScore{}
	for rows.Next() {
		var s SessionScore
		if err := rows.Scan(&s.Client, &s.SessionID, &s.Project, &s.FirstTs, &s.LastTs, &s.Actions, &s.Failures,
			&s.Completed, &s.Reads, &s.Edits, &s.Commands, &s.Searches, &s.Files, &s.Agents, &s.StaleRereads,
			&s.UnclassifiedRereads, &s.CrossAgentFiles, &s.RepeatedCommands, &s.ErrorRate, &s.Redundancy,
			&s.Exploration, &s.Score); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	t := titler{}
	for i := range out {
		if out[i].Title, err = t.title(ctx, db, out[i].Client, out[i].SessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// titler looks up sessions' titles, each once.
type titler map[[2]string]string

func (t titler) title(ctx context.Context, db Querier, client, id string) (string, error) {
	k := [2]string{client, id}
	if title, ok := t[k]; ok {
		return title, nil
	}
	var title string
	err := db.QueryRowContext(ctx, `SELECT title FROM sessions WHERE client = ? AND session_id = ?`, client, id).Scan(&title)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	t[k] = title
	return title, nil
}

// StoredPatterns reads a project's stored patterns, most seen first, at most limit: as the writer
// stored them, their confidence the ratio it computed (Ratio; Confidence is not decayed here).
func StoredPatterns(ctx context.Context, db Querier, project string, limit int) ([]Pattern, error) {
	rows, err := db.QueryContext(ctx, `SELECT kind, key, detail, confidence, occurrences, last_seen FROM patterns
		WHERE project = ? ORDER BY occurrences DESC LIMIT ?`, project, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pattern
	for rows.Next() {
		p := Pattern{Project: project}
		if err := rows.Scan(&p.Kind, &p.Key, &p.Detail, &p.Ratio, &p.Support, &p.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Habits are what a project's actions of a window show without the writer's analysis: its most
// touched files and its most run and most failed commands.
type Habits struct {
	Files   []FileHabit
	Cmds    []CommandHabit
	Failing []CommandHabit
}

// FileHabit is a file read, edited or written N times, Edits of them edits or writes.
type FileHabit struct {
	Path     string
	N, Edits int
}

// CommandHabit is a command line run N times, Fails of them failed.
type CommandHabit struct {
	Cmd      string
	N, Fails int
}

// ProjectHabits reads a project's habits from its actions since since (ms), at most limit of each
// list, most frequent first (ties in name order), through actions(project, type, ts) and the
// failures index. The files to group are selected in a materialized CTE: grouped in one query,
// the planner would rather walk the project's every action in target order through
// actions(project, target, ts) than sort the few rows of the window.
func ProjectHabits(ctx context.Context, db Querier, project string, since int64, limit int) (Habits, error) {
	var h Habits
	rows, err := db.QueryContext(ctx, `WITH r AS MATERIALIZED (SELECT target, type FROM actions WHERE project = ?
		AND type IN ('read_file', 'edit_file', 'write_file') AND ts >= ? AND target != '')
		SELECT target, count(*), sum(type != 'read_file') FROM r GROUP BY target ORDER BY count(*) DESC, target LIMIT ?`, project, since, limit)
	if err != nil {
		return h, err
	}
	for rows.Next() {
		var f FileHabit
		if err := rows.Scan(&f.Path, &f.N, &f.Edits); err != nil {
			rows.Close()
			return h, err
		}
		h.Files = append(h.Files, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return h, err
	}
	if h.Cmds, err = commandHabits(ctx, db, `SELECT target, count(*), coalesce(sum(success = 0), 0) FROM actions
		WHERE project = ? AND type = 'run_command' AND ts >= ? GROUP BY target ORDER BY count(*) DESC, target LIMIT ?`,
		project, since, limit); err != nil {
		return h, err
	}
	if h.Failing, err = commandHabits(ctx, db, `SELECT target, count(*), count(*) FROM actions
		WHERE project = ? AND success = 0 AND ts >= ? AND +type = 'run_command' GROUP BY target
		ORDER BY count(*) DESC, target LIMIT ?`, project, since, limit); err != nil {
		return h, err
	}
	return h, nil
}

func commandHabits(ctx context.Context, db Querier, stmt string, args ...any) ([]CommandHabit, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CommandHabit
	for rows.Next() {
		var c CommandHabit
		if err := rows.Scan(&c.Cmd, &c.N, &c.Fails); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ReplayStep is what a redundancy report reads of an action.
type ReplayStep struct {
	Type, Target, Hash string
	OK                 bool // it succeeded (false also when its result is unknown)
	Size               int64
}

// ReplaySteps reads a session's actions (by id, of any client), newest first, at most max.
func ReplaySteps(ctx context.Context, db Querier, sessionID string, max int) ([]ReplayStep, error) {
	rows, err := db.QueryContext(ctx, `SELECT type, target, success, content_hash, output_size FROM actions
		WHERE session_id = ? ORDER BY ts DESC, id DESC LIMIT ?`, sessionID, max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var steps []ReplayStep
	for rows.Next() {
		var st ReplayStep
		var ok sql.NullBool
		if err := rows.Scan(&st.Type, &st.Target, &ok, &st.Hash, &st.Size); err != nil {
			return nil, err
		}
		st.OK = ok.Valid && ok.Bool
		steps = append(steps, st)
	}
	return steps, rows.Err()
}

// OutputSearch is a full-text search of the stored tool outputs.
type OutputSearch struct {
	Match string // an FTS5 query
	// Project keeps the outputs of that project's actions, among the newest Scan matches of all
	// projects; with AllProjects, every project's.
	Project     string
	AllProjects bool
	Scan        int
	Prefix      int // how much of each output to read (bytes)
	Limit       int
}

// OutputHit is an action whose output matched.
type OutputHit struct {
	ID                               int64
	TS                               int64 // ms
	SessionID, Type, Target, Project string
	Output                           string // its first Prefix bytes
}

// SearchOutputs runs the full-text index over the tool outputs newest first (FTS5 walks rowids
// backwards and the LIMIT stops it). A project's search stops at the oldest of the newest Scan
// matches of all projects: its rowid is returned (0 when there are fewer, or for AllProjects). The
// index is built by the writer in batches, so the last seconds of output may not be searchable
// yet.
func SearchOutputs(ctx context.Context, db Querier, s OutputSearch) ([]OutputHit, int64, error) {
	cond, args := "", []any{s.Prefix, s.Match}
	var bound int64
	if !s.AllProjects {
		err := db.QueryRowContext(ctx, `SELECT rowid FROM tool_output_fts WHERE tool_output_fts MATCH ?
			ORDER BY rowid DESC LIMIT 1 OFFSET ?`, s.Match, s.Scan-1).Scan(&bound)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, 0, err
		}
		cond = ` AND tool_output_fts.rowid >= ? AND a.project = ?`
		args = append(args, bound, s.Project)
	}
	args = append(args, s.Limit)
	rows, err := db.QueryContext(ctx, `SELECT a.id, a.ts, a.session_id, a.type, a.target, a.project,
		substr(unpack(o.output), 1, ?)
		FROM tool_output_fts JOIN action_outputs o ON o.rowid = tool_output_fts.rowid JOIN actions a ON a.event_id = o.event_id
		WHERE tool_output_fts MATCH ?`+cond+` ORDER BY tool_output_fts.rowid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []OutputHit
	for rows.Next() {
		var h OutputHit
		if err := rows.Scan(&h.ID, &h.TS, &h.SessionID, &h.Type, &h.Target, &h.Project, &h.Output); err != nil {
			return nil, 0, err
		}
		out = append(out, h)
	}
	return out, bound, rows.Err()
}
