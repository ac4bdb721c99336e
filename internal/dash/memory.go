package dash

// Session memory (internal/memory, store migration 0016), read-only: the summaries the writer
// keeps of each ended session epoch, shown in a session's detail (/api/sessions/{id}, summaries)
// and on the Memory tab with the observations it learned per project (/api/memory).
//
// Choices:
//   - A session's summaries are all its epochs', newest epoch first, the extractive one before a
//     language model's of the same epoch. The epoch's tokens, turns and dollars are the extractive
//     summary's facts (each turn once, as cost.Run counts them); cost_usd is what writing the
//     summary cost (a model's call; 0 for an extractive one).
//   - Observations are a project's: the client filter does not apply to them (as for Patterns);
//     they are listed when last seen in the window, their confidence decayed to now
//     (memory.Confidence, as the writer computes it), strongest first.
//   - Each observation's evidence is resolved to the action it names (by event id), newest action
//     first; an action the store no longer holds is listed last, with found false.
//   - The last sessions are the memorySessions sessions whose newest summary with actions is the
//     latest (of the project and client, ended in the window), each with that epoch's summaries.
//   - A store written before session memory existed has no such tables: a session has no
//     summaries and /api/memory answers empty lists with memory false, rather than an error.

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/memory"
)

const (
	memorySessions = 5   // the last sessions' summaries /api/memory lists
	maxSummaries   = 200 // a session's summaries in its detail (100 epochs, both sources)
)

// SessionSummary is the account of one session epoch, as the writer stored it.
type SessionSummary struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Title     string `json:"title,omitempty"` // the session's title (in /api/memory)
	Project   string `json:"project"`
	Epoch     int64  `json:"epoch"`
	Source    string `json:"source"`          // extractive or model
	Model     string `json:"model,omitempty"` // the language model that wrote a model summary
	FirstTS   int64  `json:"first_ts"`        // ms; 0 when the epoch has no action
	LastTS    int64  `json:"last_ts"`         // ms
	EndedBy   string `json:"ended_by"`        // compaction, idle or finalized
	Actions   int64  `json:"actions"`
	Text      string `json:"text"`
	// The epoch's model turns, tokens and dollars (from its extractive summary).
	EpochTurns   int64   `json:"epoch_turns"`
	EpochTokens  int64   `json:"epoch_tokens"`
	EpochCostUSD float64 `json:"epoch_cost_usd"`
	// CostUSD is what writing the summary cost: a language model's call, 0 for an extractive one.
	CostUSD   float64 `json:"cost_usd"`
	CreatedAt int64   `json:"created_at"` // ms
}

// EvidenceAction is an action an observation rests on, resolved from its event id.
type EvidenceAction struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	EventID   string `json:"event_id"`
	Found     bool   `json:"found"` // false when the store no longer holds the action
	TS        int64  `json:"ts"`    // ms
	Type      string `json:"type"`
	Tool      string `json:"tool"`
	Target    string `json:"target"` // its first targetPreview characters
	Success   *bool  `json:"success"`
}

// MemoryObservation is one thing a project's sessions taught, with its evidence.
type MemoryObservation struct {
	ID             int64            `json:"id"`
	Project        string           `json:"project"`
	Kind           string           `json:"kind"`
	Key            string           `json:"key"`
	Text           string           `json:"text"`
	Support        int              `json:"support"`
	Contradictions int              `json:"contradictions"`
	Confidence     float64          `json:"confidence"` // decayed to now
	FirstSeen      int64            `json:"first_seen"` // ms
	LastSeen       int64            `json:"last_seen"`  // ms
	Evidence       []EvidenceAction `json:"evidence"`
}

// MemoryProject is a project with observations in the window.
type MemoryProject struct {
	Project      string `json:"project"`
	Observations int64  `json:"observations"`
	LastSeen     int64  `json:"last_seen"` // ms
}

// Memory is the answer of /api/memory.
type Memory struct {
	Store        bool                `json:"store"`
	Memory       bool                `json:"memory"` // the store has session memory's tables
	Filters      filters             `json:"filters"`
	Projects     []MemoryProject     `json:"projects"`
	Observations []MemoryObservation `json:"observations"`
	Total        int                 `json:"total_observations"` // before the limit
	Summaries    []SessionSummary    `json:"summaries"`          // the last sessions'
}

// hasMemory reports whether the store has session memory's tables.
func hasMemory(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session_summaries', 'observations')`).Scan(&n)
	return n == 2, err
}

// memoryAPI answers /api/memory: the observations of the project (of every project without one),
// and the last sessions' summaries.
func (s *Server) memoryAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	kind := q.name("kind")
	limit := q.intParam("limit", 50, 1, maxPageSize)
	if err := q.done(); err != nil {
		return nil, err
	}
	if kind != "" && !slices.Contains(memory.Kinds, kind) {
		return nil, badParam("kind", "one of %s", strings.Join(memory.Kinds, ", "))
	}
	m := &Memory{Filters: f, Projects: []MemoryProject{}, Observations: []MemoryObservation{}, Summaries: []SessionSummary{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return m, err
	}
	m.Store = true
	if m.Memory, err = hasMemory(ctx, db); err != nil || !m.Memory {
		return m, err
	}
	if m.Projects, err = memoryProjects(ctx, db, f); err != nil {
		return nil, err
	}
	if m.Observations, m.Total, err = observations(ctx, db, f, kind, limit, q.now); err != nil {
		return nil, err
	}
	if m.Summaries, err = recentSummaries(ctx, db, f); err != nil {
		return nil, err
	}
	return m, nil
}

// observationConds selects the observations shown: not forgotten, last seen in the window, of
// the project and kind. The client filter does not apply: observations are a project's.
func observationConds(f filters, kind string) *conds {
	c := &conds{}
	c.add("forgotten = 0")
	if ms := f.sinceMs(); ms > 0 {
		c.add("last_seen >= :since", sql.Named("since", ms))
	}
	if f.Project != "" {
		c.add("project = :project", sql.Named("project", f.Project))
	}
	if kind != "" {
		c.add("kind = :kind", sql.Named("kind", kind))
	}
	return c
}

func memoryProjects(ctx context.Context, db *sql.DB, f filters) ([]MemoryProject, error) {
	c := observationConds(filters{Since: f.Since}, "")
	rows, err := db.QueryContext(ctx, "SELECT project, count(*), max(last_seen) FROM observations"+c.sql()+" GROUP BY project ORDER BY project", c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []MemoryProject{}
	for rows.Next() {
		var p MemoryProject
		if err := rows.Scan(&p.Project, &p.Observations, &p.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// observations ranks the selected observations by their confidence now (the stored one is as of
// the writer's last recomputation of the project), then reads the top limit in full.
func observations(ctx context.Context, db *sql.DB, f filters, kind string, limit int, now time.Time) ([]MemoryObservation, int, error) {
	c := observationConds(f, kind)
	rows, err := db.QueryContext(ctx, "SELECT id, support, contradictions, last_seen FROM observations"+c.sql(), c.args...)
	if err != nil {
		return nil, 0, err
	}
	type ranked struct {
		id            int64
		support, cont int
		conf          float64
	}
	var all []ranked
	for rows.Next() {
		var r ranked
		var last int64
		if err := rows.Scan(&r.id, &r.support, &r.cont, &last); err != nil {
			rows.Close()
			return nil, 0, err
		}
		r.conf = memory.Confidence(r.support, r.cont, last, now)
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.conf, a.conf), cmp.Compare(b.support, a.support), cmp.Compare(a.id, b.id))
	})
	total := len(all)
	all = all[:min(len(all), limit)]
	out := make([]MemoryObservation, len(all))
	if len(all) == 0 {
		return out, total, nil
	}
	pos := map[int64]int{}
	ph := make([]string, len(all))
	args := make([]any, len(all))
	for i, r := range all {
		pos[r.id], ph[i], args[i] = i, "?", r.id
	}
	rows, err = db.QueryContext(ctx, `SELECT id, project, kind, key, text, support, contradictions, first_seen, last_seen, evidence
		FROM observations WHERE id IN (`+strings.Join(ph, ",")+`)`, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var evidence []memory.Evidence
	for rows.Next() {
		var o MemoryObservation
		var ev string
		if err := rows.Scan(&o.ID, &o.Project, &o.Kind, &o.Key, &o.Text, &o.Support, &o.Contradictions, &o.FirstSeen, &o.LastSeen, &ev); err != nil {
			return nil, 0, err
		}
		i := pos[o.ID]
		o.Confidence = all[i].conf
		var list []memory.Evidence
		if err := json.Unmarshal([]byte(ev), &list); err != nil {
			return nil, 0, fmt.Errorf("observation %d: evidence: %w", o.ID, err)
		}
		o.Evidence = make([]EvidenceAction, len(list))
		for j, e := range list {
			o.Evidence[j] = EvidenceAction{Client: e.Client, SessionID: e.SessionID, EventID: e.EventID}
		}
		evidence = append(evidence, list...)
		out[i] = o
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	found, err := evidenceActions(ctx, db, evidence)
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		ev := out[i].Evidence
		for j, e := range ev {
			if a, ok := found[e.EventID]; ok {
				ev[j] = a
			}
		}
		// Newest first: the stored list's order is the writer's reading order, not time.
		slices.SortStableFunc(ev, func(a, b EvidenceAction) int { return cmp.Compare(b.TS, a.TS) })
	}
	return out, total, nil
}

// evidenceActions reads the actions the evidence names, by event id.
func evidenceActions(ctx context.Context, db *sql.DB, evidence []memory.Evidence) (map[string]EvidenceAction, error) {
	out := map[string]EvidenceAction{}
	seen := map[string]bool{}
	var ids []any
	for _, e := range evidence {
		if !seen[e.EventID] && e.EventID != "" {
			seen[e.EventID] = true
			ids = append(ids, e.EventID)
		}
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		rows, err := db.QueryContext(ctx, `SELECT event_id, client, session_id, ts, type, tool, substr(target, 1, ?), success
			FROM actions WHERE event_id IN (`+strings.Repeat("?,", len(chunk)-1)+`?)`, append([]any{targetPreview}, chunk...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			a := EvidenceAction{Found: true}
			var success sql.NullBool
			if err := rows.Scan(&a.EventID, &a.Client, &a.SessionID, &a.TS, &a.Type, &a.Tool, &a.Target, &success); err != nil {
				rows.Close()
				return nil, err
			}
			if success.Valid {
				a.Success = &success.Bool
			}
			out[a.EventID] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

const summaryCols = `m.client, m.session_id, m.project, m.epoch, m.source, m.model, m.first_ts, m.last_ts, m.ended_by,
	m.actions, m.text, m.facts, m.cost_usd, m.created_at`

// sessionSummaries reads a session's summaries, newest epoch first; none on a store without
// session memory.
func sessionSummaries(ctx context.Context, db *sql.DB, sess Session) ([]SessionSummary, error) {
	if ok, err := hasMemory(ctx, db); err != nil || !ok {
		return []SessionSummary{}, err
	}
	return querySummaries(ctx, db, `SELECT `+summaryCols+`, '' FROM session_summaries m
		WHERE m.session_id = ? AND m.client = ? ORDER BY m.epoch DESC, m.source LIMIT ?`, sess.SessionID, sess.Client, maxSummaries)
}

// recentSummaries reads the summaries of the last sessions of the filters (see the file's doc).
func recentSummaries(ctx context.Context, db *sql.DB, f filters) ([]SessionSummary, error) {
	c := filterConds(filters{Since: f.Since, Project: f.Project, Client: f.Client}, "last_ts")
	c.add("actions > 0")
	return querySummaries(ctx, db, `WITH last AS (
		SELECT client, session_id, max(epoch) AS epoch, max(last_ts) AS t FROM session_summaries`+c.sql()+`
		 GROUP BY client, session_id ORDER BY t DESC, client, session_id LIMIT :n)
		SELECT `+summaryCols+`, coalesce(s.title, '') FROM last
		  JOIN session_summaries m ON m.client = last.client AND m.session_id = last.session_id AND m.epoch = last.epoch
		  LEFT JOIN sessions s ON s.client = m.client AND s.session_id = m.session_id
		 ORDER BY last.t DESC, m.client, m.session_id, m.source`, append(c.args, sql.Named("n", memorySessions))...)
}

func querySummaries(ctx context.Context, db *sql.DB, stmt string, args ...any) ([]SessionSummary, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []SessionSummary{}
	type epochKey struct {
		client, session string
		epoch           int64
	}
	facts := map[epochKey]memory.Summary{}
	for rows.Next() {
		var m SessionSummary
		var raw string
		if err := rows.Scan(&m.Client, &m.SessionID, &m.Project, &m.Epoch, &m.Source, &m.Model, &m.FirstTS, &m.LastTS, &m.EndedBy,
			&m.Actions, &m.Text, &raw, &m.CostUSD, &m.CreatedAt, &m.Title); err != nil {
			return nil, err
		}
		if m.Source == "extractive" {
			var f memory.Summary
			if json.Unmarshal([]byte(raw), &f) == nil {
				facts[epochKey{m.Client, m.SessionID, m.Epoch}] = f
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A model's summary of an epoch shows the epoch's figures too.
	for i, m := range out {
		if f, ok := facts[epochKey{m.Client, m.SessionID, m.Epoch}]; ok {
			out[i].EpochTurns, out[i].EpochTokens, out[i].EpochCostUSD = int64(f.Turns), f.Tokens, f.CostUSD
		}
	}
	return out, nil
}
