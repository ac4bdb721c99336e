package dash

// Discovery (/api/discovery): work the agents did twice.
//
//   - Stale re-reads: read_file actions of a session on a file it had read before. Reads that
//     observer-watch classified live (actions.freshness, see internal/freshness) count as stale
//     when the file had changed since the session last saw it (stale or changed_elsewhere); a
//     re-read it found unchanged (fresh, changed_by_agent) is not listed. History has no
//     classification: a second or later read of the same target in the same session is counted
//     as "re-read (unclassified)", labelled so, since nothing says whether the file changed. The
//     session includes its subagents (they share its session_id; actions.agent_id names the
//     subagent): a file read by more than one agent of the session is marked "across agents".
//   - Repeated commands: a run_command whose exact target the session already ran with no
//     edit_file or write_file of the session (any file, any of its agents) in between.
//   - Files touched by several clients: a project's file (read, edited or written) with actions
//     from more than one client.
//
// Everything counts actions inside the window: a read or run whose predecessor is older than the
// window counts as the first. Lists are capped at discoveryLimit rows; totals count them all.

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
)

const discoveryLimit = 100

// Discovery is the answer of /api/discovery.
type Discovery struct {
	Store   bool          `json:"store"`
	Filters filters       `json:"filters"`
	Rereads []Reread      `json:"rereads"`
	Repeats []Repeat      `json:"repeats"`
	Shared  []SharedFile  `json:"shared_files"`
	Totals  DiscoveryTots `json:"totals"`
}

// DiscoveryTots sums each list over the whole window.
type DiscoveryTots struct {
	StaleRereads        int64 `json:"stale_rereads"`
	UnclassifiedRereads int64 `json:"unclassified_rereads"`
	CrossAgentFiles     int64 `json:"cross_agent_files"`
	RepeatedCommands    int64 `json:"repeated_commands"`
	SharedFiles         int64 `json:"shared_files"`
}

// Reread is one session's reads of one file.
type Reread struct {
	Client       string `json:"client"`
	SessionID    string `json:"session_id"`
	Project      string `json:"project"`
	Target       string `json:"target"`
	Reads        int64  `json:"reads"`
	Stale        int64  `json:"stale"`        // classified live as changed since last seen
	Unclassified int64  `json:"unclassified"` // later reads without a classification
	Agents       int64  `json:"agents"`       // distinct agents (main + subagents) that read it
	Label        string `json:"label"`
}

// Repeat is one session's repeated command.
type Repeat struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	Command   string `json:"command"`
	Runs      int64  `json:"runs"`
	Repeats   int64  `json:"repeats"` // runs with nothing edited since the previous identical run
}

// SharedFile is a file several clients touched.
type SharedFile struct {
	Project string   `json:"project"`
	Target  string   `json:"target"`
	Clients []string `json:"clients"`
	Actions int64    `json:"actions"`
	LastTs  int64    `json:"last_ts"`
}

func (s *Server) discoveryAPI(ctx context.Context, q *query) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	d := &Discovery{Filters: f, Rereads: []Reread{}, Repeats: []Repeat{}, Shared: []SharedFile{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return d, err
	}
	d.Store = true
	if err := rereads(ctx, db, f, d); err != nil {
		return nil, err
	}
	if err := repeats(ctx, db, f, d); err != nil {
		return nil, err
	}
	if err := sharedFiles(ctx, db, f, d); err != nil {
		return nil, err
	}
	return d, nil
}

// rereadSQL groups each session's reads per file; n numbers a file's reads in the session.
const rereadSQL = `
WITH r AS (
  SELECT client, session_id, project, target, agent_id, freshness,
         row_number() OVER (PARTITION BY client, session_id, target ORDER BY ts, id) AS n
    FROM actions %s)
SELECT client, session_id, max(project), target, count(*),
       sum(freshness IN ('stale', 'changed_elsewhere')),
       sum(n > 1 AND freshness = ''),
       count(DISTINCT agent_id)
  FROM r GROUP BY client, session_id, target
HAVING sum(freshness IN ('stale', 'changed_elsewhere')) > 0 OR sum(n > 1 AND freshness = '') > 0`

func rereads(ctx context.Context, db *sql.DB, f filters, d *Discovery) error {
	c := filterConds(f, "ts")
	c.add("type = 'read_file'")
	c.add("target != ''")
	rows, err := db.QueryContext(ctx, strings.Replace(rereadSQL, "%s", c.sql(), 1), c.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var all []Reread
	for rows.Next() {
		var r Reread
		if err := rows.Scan(&r.Client, &r.SessionID, &r.Project, &r.Target, &r.Reads, &r.Stale, &r.Unclassified, &r.Agents); err != nil {
			return err
		}
		r.Label = "re-read (unclassified)"
		if r.Stale > 0 {
			r.Label = "stale"
		}
		if r.Agents > 1 {
			r.Label += ", across agents"
			d.Totals.CrossAgentFiles++
		}
		d.Totals.StaleRereads += r.Stale
		d.Totals.UnclassifiedRereads += r.Unclassified
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.SortStableFunc(all, func(a, b Reread) int {
		if c := cmp.Compare(b.Stale, a.Stale); c != 0 {
			return c
		}
		return cmp.Compare(b.Unclassified, a.Unclassified)
	})
	d.Rereads = append(d.Rereads, all[:min(len(all), discoveryLimit)]...)
	return nil
}

// repeats walks each session's commands and edits in time order.
func repeats(ctx context.Context, db *sql.DB, f filters, d *Discovery) error {
	c := filterConds(f, "ts")
	c.add("type IN ('run_command', 'edit_file', 'write_file')")
	rows, err := db.QueryContext(ctx, "SELECT client, session_id, project, type, target FROM actions"+c.sql()+
		" ORDER BY client, session_id, ts, id", c.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	type key struct{ client, session, target string }
	idx := map[key]int{}
	var all []Repeat
	// lastRun is the edit count of the session when a command last ran.
	lastRun := map[key]int{}
	edits, curClient, curSession := 0, "", ""
	for rows.Next() {
		var cl, sid, proj, typ, target string
		if err := rows.Scan(&cl, &sid, &proj, &typ, &target); err != nil {
			return err
		}
		if cl != curClient || sid != curSession {
			curClient, curSession, edits = cl, sid, 0
			clear(lastRun)
		}
		if typ != "run_command" {
			edits++
			continue
		}
		if target == "" {
			continue
		}
		k := key{cl, sid, target}
		i, ok := idx[k]
		if !ok {
			i = len(all)
			idx[k] = i
			all = append(all, Repeat{Client: cl, SessionID: sid, Project: proj, Command: target})
		}
		all[i].Runs++
		if e, seen := lastRun[k]; seen && e == edits {
			all[i].Repeats++
		}
		lastRun[k] = edits
	}
	if err := rows.Err(); err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(r Repeat) bool { return r.Repeats == 0 })
	for _, r := range all {
		d.Totals.RepeatedCommands += r.Repeats
	}
	slices.SortStableFunc(all, func(a, b Repeat) int { return cmp.Compare(b.Repeats, a.Repeats) })
	d.Repeats = append(d.Repeats, all[:min(len(all), discoveryLimit)]...)
	return nil
}

func sharedFiles(ctx context.Context, db *sql.DB, f filters, d *Discovery) error {
	c := filterConds(f, "ts")
	c.add("type IN ('read_file', 'edit_file', 'write_file')")
	c.add("target != ''")
	rows, err := db.QueryContext(ctx, `SELECT project, target, group_concat(DISTINCT client), count(*), max(ts) FROM actions`+c.sql()+
		` GROUP BY project, target HAVING count(DISTINCT client) > 1 ORDER BY count(DISTINCT client) DESC, count(*) DESC, target`, c.args...)
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
		d.Totals.SharedFiles++
		if len(d.Shared) < discoveryLimit {
			d.Shared = append(d.Shared, sf)
		}
	}
	return rows.Err()
}
