package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
)

// Filter selects what a query reads: sessions active since Since (zero: all time), of one
// project or client when set. Limit caps each list (0: DefaultLimit).
type Filter struct {
	Since   time.Time
	Project string
	Client  string
	Limit   int
}

// DefaultLimit is the length of a list when Filter.Limit is 0.
const DefaultLimit = 100

func (f Filter) limit() int {
	if f.Limit <= 0 {
		return DefaultLimit
	}
	return f.Limit
}

// where builds the conditions on a table with client, project and a time column.
// extra are further conditions with one argument each ("kind = ?", value), kept when the value
// is not empty.
func (f Filter) where(alias, tsCol string, extra ...any) (string, []any) {
	var cs []string
	var args []any
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] != "" {
			cs = append(cs, extra[i].(string))
			args = append(args, extra[i+1])
		}
	}
	if !f.Since.IsZero() {
		cs = append(cs, alias+tsCol+" >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	if f.Project != "" {
		cs = append(cs, alias+"project = ?")
		args = append(args, f.Project)
	}
	if f.Client != "" {
		cs = append(cs, alias+"client = ?")
		args = append(args, f.Client)
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
// and capped at the filter's limit; totals count them all. Shared files are listed when touched
// in the window; their clients and actions count all time.
func Discover(ctx context.Context, db *sql.DB, f Filter) (*Discovery, error) {
	d := &Discovery{Rereads: []Reread{}, Repeats: []Repeat{}, Shared: []SharedFile{}}
	w, args := f.where("", "last_ts")
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
	sw, sargs := f.where("s.", "last_ts")
	join := func(table, index string) string {
		if wide {
			return " FROM " + table + " r INDEXED BY " + index + " CROSS JOIN session_analysis s ON s.client = r.client AND s.session_id = r.session_id"
		}
		return " FROM session_analysis s CROSS JOIN " + table + " r ON r.client = s.client AND r.session_id = s.session_id"
	}
	rows, err := db.QueryContext(ctx, `SELECT r.client, r.session_id, r.project, r.target, r.reads, r.stale, r.unclassified,
		r.agents, r.last_ts`+join("session_rereads", "session_rereads_rank")+sw+
		` ORDER BY r.stale DESC, r.unclassified DESC LIMIT ?`, append(sargs, f.limit())...)
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
		r.Label = r.label()
		d.Rereads = append(d.Rereads, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.QueryContext(ctx, `SELECT r.client, r.session_id, r.project, r.command, r.runs, r.repeats, r.last_ts`+
		join("session_repeats", "session_repeats_rank")+sw+` ORDER BY r.repeats DESC LIMIT ?`, append(sargs, f.limit())...)
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
	if err := sharedFiles(ctx, db, f, d, wide); err != nil {
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

func sharedFiles(ctx context.Context, db *sql.DB, f Filter, d *Discovery, wide bool) error {
	// A client filter keeps the files that client is one of the clients of.
	client := f.Client
	f.Client = ""
	like := ""
	if client != "" {
		like = "%," + client + ",%"
	}
	w, args := f.where("", "last_ts", "(','||clients||',') LIKE ?", like)
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM shared_files`+w, args...).Scan(&d.Totals.SharedFiles); err != nil {
		return err
	}
	// As the lists above: in rank order for a wide window (ties in path order, the table's key).
	from := " FROM shared_files"
	if wide {
		from += " INDEXED BY shared_files_rank"
	}
	rows, err := db.QueryContext(ctx, `SELECT project, target, clients, actions, last_ts`+from+w+
		` ORDER BY n_clients DESC, actions DESC, project, target LIMIT ?`, append(args, f.limit())...)
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

// Patterns reads the stored patterns seen since the filter's start (of its project; the client
// filter does not apply, patterns are a project's), kind "" for all, with their confidence decayed
// to now; the strongest (support × confidence) Limit of each kind, at least minConfidence.
func Patterns(ctx context.Context, db *sql.DB, f Filter, kind string, minConfidence float64, now time.Time) (*PatternSet, error) {
	f.Client = ""
	w, args := f.where("", "last_seen", "kind = ?", kind)
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
	for _, k := range Kinds {
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
		out.Patterns = append(out.Patterns, ps[:min(len(ps), f.limit())]...)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pattern_state WHERE dirty`).Scan(&out.Pending); err != nil {
		return nil, err
	}
	return out, nil
}

// Scores lists the sessions active in the window with their analysis, lowest score first (ties:
// most recent first), capped at the filter's limit; a non-empty sessionID selects that session
// (of any client, unless the filter names one).
func Scores(ctx context.Context, db *sql.DB, f Filter, sessionID string) ([]Session, error) {
	w, args := f.where("", "last_ts", "session_id = ?", sessionID)
	rows, err := db.QueryContext(ctx, `SELECT client, session_id, project, first_ts, last_ts, actions, failures, completed,
		reads, edits, commands, searches, files, agents, stale_rereads, unclassified_rereads, cross_agent_files,
		repeated_commands, error_rate, redundancy, exploration, score FROM session_analysis`+w+
		` ORDER BY score, last_ts DESC LIMIT ?`, append(args, f.limit())...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		var s Session
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

func (t titler) title(ctx context.Context, db *sql.DB, client, id string) (string, error) {
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
