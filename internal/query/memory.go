package query

// Session memory (store migration 0016), as the writer's memory loop (internal/memory) keeps it:
// the summaries of each ended session epoch, and the observations each project's sessions taught
// its agents. The CLI (observerctl summary, memory, suggest), the dashboard (a session's detail,
// the Memory tab) and the MCP tool get_project_memory read them here.
//
// The dashboard's reads:
//   - A session's summaries are all its epochs', newest epoch first, the extractive one before a
//     language model's of the same epoch. The epoch's tokens, turns and dollars are the extractive
//     summary's facts (each turn once, as Cost counts them); cost_usd is what writing the summary
//     cost (a model's call; 0 for an extractive one).
//   - Observations are a project's: the client filter does not apply to them (as for Patterns);
//     they are listed when last seen in the window, their confidence decayed to now
//     (Confidence, as the writer computes it), strongest first.
//   - Each observation's evidence is resolved to the action it names (by event id), newest action
//     first; an action the store no longer holds is listed last, with found false.
//   - The last sessions are the sessions whose newest summary with actions is the latest (of the
//     project and client, ended in the window), each with that epoch's summaries.
//   - A store written before session memory existed has no such tables: a session has no
//     summaries (EpochSummaries) and HasMemory says so, rather than an error.

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The observation kinds.
const (
	KindTestCommand    = "test_command"    // a test command that succeeds
	KindBuildCommand   = "build_command"   // a build command that succeeds
	KindFailingCommand = "failing_command" // a command that failed every time it ran
	KindCoChange       = "co_change"       // two files changed in the same sessions
	KindChangeArea     = "change_area"     // the directory most changes land in
)

// ObservationKinds lists the observation kinds.
var ObservationKinds = []string{KindTestCommand, KindBuildCommand, KindFailingCommand, KindCoChange, KindChangeArea}

// Observation is one thing a project's sessions taught.
type Observation struct {
	ID             int64      `json:"id"`
	Project        string     `json:"project"`
	Kind           string     `json:"kind"`
	Key            string     `json:"key"`
	Text           string     `json:"text"`
	Support        int        `json:"support"`
	Contradictions int        `json:"contradictions"`
	Confidence     float64    `json:"confidence"`
	FirstSeen      int64      `json:"first_seen"`
	LastSeen       int64      `json:"last_seen"`
	Evidence       []Evidence `json:"evidence"`
}

// Evidence is an action that supports an observation.
type Evidence struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	EventID   string `json:"event_id"`
}

// Confidence is support / (support + contradictions + 1), decayed by the time since lastSeen
// (Decay: halved every 14 days unseen): one session gives 0.5, three 0.75, and every session that
// goes against it, or every two weeks without it, takes some away.
func Confidence(support, contradictions int, lastSeen int64, now time.Time) float64 {
	c := float64(support) / float64(support+contradictions+1)
	return c * Decay(lastSeen, now)
}

// Summary is the extractive account of one session epoch (stored as facts, rendered as Text).
type Summary struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Epoch     int    `json:"epoch"`
	Project   string `json:"project"`
	FirstTS   int64  `json:"first_ts"`
	LastTS    int64  `json:"last_ts"`
	EndedBy   string `json:"ended_by"` // compaction, idle, finalized
	Actions   int    `json:"actions"`

	Goal     string `json:"goal,omitempty"`
	GoalID   string `json:"goal_event_id,omitempty"`
	Prompts  int    `json:"prompts"`
	Read     []File `json:"files_read,omitempty"`
	ReadN    int    `json:"files_read_count"`
	Changed  []File `json:"files_changed,omitempty"`
	Commands []Cmd  `json:"commands,omitempty"`
	// Failures are the failed actions, grouped by what failed, with how each ended.
	Failures  []Failure `json:"failures,omitempty"`
	Subagents int       `json:"subagents"`
	Turns     int       `json:"turns"`
	Tokens    int64     `json:"tokens"`
	CostUSD   float64   `json:"cost_usd"`
	Models    []string  `json:"models,omitempty"`
	Outcome   string    `json:"outcome"`
}

// File is a file and how many times the epoch touched it.
type File struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// Cmd is a command line and its runs.
type Cmd struct {
	Command string `json:"command"`
	Runs    int    `json:"runs"`
	Failed  int    `json:"failed"`
	LastOK  *bool  `json:"last_ok,omitempty"`
	LastID  string `json:"last_event_id"`
}

// Failure is what failed (a command, an edit of a file, a tool), how often, and how it ended.
type Failure struct {
	What     string `json:"what"`
	Count    int    `json:"count"`
	Resolved bool   `json:"resolved"`
	How      string `json:"how"`
	EventID  string `json:"event_id"` // the last failure
	Error    string `json:"error,omitempty"`
}

// Text renders the summary in a few lines.
func (s Summary) Text() string {
	var b strings.Builder
	if s.Goal != "" {
		fmt.Fprintf(&b, "Goal: %s", s.Goal)
		if s.Prompts > 1 {
			fmt.Fprintf(&b, " (+%d more prompts)", s.Prompts-1)
		}
		b.WriteByte('\n')
	}
	if len(s.Changed) > 0 {
		fmt.Fprintf(&b, "Changed: %s\n", fileList(s.Changed))
	}
	if s.ReadN > 0 {
		fmt.Fprintf(&b, "Read %d file(s): %s\n", s.ReadN, fileList(s.Read))
	}
	if len(s.Commands) > 0 {
		var parts []string
		for _, c := range s.Commands {
			p := fmt.Sprintf("`%s`", clip(c.Command, 80))
			if c.Runs > 1 {
				p += fmt.Sprintf(" %d×", c.Runs)
			}
			switch {
			case c.Failed > 0 && c.LastOK != nil && *c.LastOK:
				p += fmt.Sprintf(" (%d failed, last passed)", c.Failed)
			case c.Failed > 0:
				p += fmt.Sprintf(" (%d failed)", c.Failed)
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(&b, "Commands: %s\n", strings.Join(parts, "; "))
	}
	if len(s.Failures) > 0 {
		var parts []string
		for _, f := range s.Failures {
			p := f.What
			if f.Count > 1 {
				p += fmt.Sprintf(" failed %d×", f.Count)
			} else {
				p += " failed"
			}
			parts = append(parts, p+", "+f.How)
		}
		fmt.Fprintf(&b, "Failures: %s\n", strings.Join(parts, "; "))
	}
	if s.Turns > 0 || s.Subagents > 0 {
		fmt.Fprintf(&b, "Cost: $%.2f, %s tokens in %d turn(s)", s.CostUSD, compact(s.Tokens), s.Turns)
		if len(s.Models) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(s.Models, ", "))
		}
		if s.Subagents > 0 {
			fmt.Fprintf(&b, "; %d subagent(s)", s.Subagents)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Outcome: %s\n", s.Outcome)
	return b.String()
}

func fileList(fs []File) string {
	var parts []string
	for _, f := range fs {
		if f.Count > 1 {
			parts = append(parts, fmt.Sprintf("%s (%d)", f.Path, f.Count))
		} else {
			parts = append(parts, f.Path)
		}
	}
	return strings.Join(parts, ", ")
}

func compact(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 1
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// StoredSummary is a summary as the store holds it.
type StoredSummary struct {
	Client    string   `json:"client"`
	SessionID string   `json:"session_id"`
	Epoch     int      `json:"epoch"`
	Source    string   `json:"source"` // extractive or model
	Project   string   `json:"project"`
	FirstTS   int64    `json:"first_ts"`
	LastTS    int64    `json:"last_ts"`
	EndedBy   string   `json:"ended_by"`
	Actions   int      `json:"actions"`
	Text      string   `json:"text"`
	Model     string   `json:"model,omitempty"`
	CostUSD   float64  `json:"cost_usd,omitempty"`
	Facts     *Summary `json:"facts,omitempty"`
}

const storedCols = `client, session_id, epoch, source, project, first_ts, last_ts, ended_by, actions, text, model, cost_usd, facts`

func scanStored(rows *sql.Rows, withFacts bool) ([]StoredSummary, error) {
	defer rows.Close()
	var out []StoredSummary
	for rows.Next() {
		var s StoredSummary
		var facts string
		if err := rows.Scan(&s.Client, &s.SessionID, &s.Epoch, &s.Source, &s.Project, &s.FirstTS, &s.LastTS, &s.EndedBy,
			&s.Actions, &s.Text, &s.Model, &s.CostUSD, &facts); err != nil {
			return nil, err
		}
		if withFacts && s.Source == "extractive" {
			var f Summary
			if json.Unmarshal([]byte(facts), &f) == nil {
				s.Facts = &f
			}
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SessionSummaries returns a session's summaries, every epoch and source, oldest epoch first.
func SessionSummaries(ctx context.Context, db Querier, client, sessionID string, withFacts bool) ([]StoredSummary, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+storedCols+` FROM session_summaries
		WHERE session_id = ? AND (? = '' OR client = ?) ORDER BY epoch, source`, sessionID, client, client)
	if err != nil {
		return nil, err
	}
	return scanStored(rows, withFacts)
}

// RecentSummaries returns the newest extractive summaries of a project (all projects for "").
func RecentSummaries(ctx context.Context, db Querier, project string, limit int) ([]StoredSummary, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+storedCols+` FROM session_summaries
		WHERE source = 'extractive' AND (? = '' OR project = ?) AND actions > 0 ORDER BY last_ts DESC LIMIT ?`, project, project, limit)
	if err != nil {
		return nil, err
	}
	return scanStored(rows, false)
}

// Observations returns a project's observations (all projects for ""), not forgotten, with at
// least minConf confidence as of now (decay applied again), strongest first.
func Observations(ctx context.Context, db Querier, project string, minConf float64, limit int, now time.Time) ([]Observation, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, project, kind, key, text, support, contradictions, first_seen, last_seen, evidence
		FROM observations WHERE forgotten = 0 AND (? = '' OR project = ?) ORDER BY confidence DESC, support DESC, id`, project, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Observation
	for rows.Next() {
		var o Observation
		var ev string
		if err := rows.Scan(&o.ID, &o.Project, &o.Kind, &o.Key, &o.Text, &o.Support, &o.Contradictions, &o.FirstSeen, &o.LastSeen, &ev); err != nil {
			return nil, err
		}
		json.Unmarshal([]byte(ev), &o.Evidence)
		o.Confidence = Confidence(o.Support, o.Contradictions, o.LastSeen, now)
		if o.Confidence < minConf {
			continue
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The stored order is the confidence when last computed: time since may have moved it.
	sortObservations(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func sortObservations(os []Observation) {
	slices.SortStableFunc(os, func(a, b Observation) int {
		return cmp.Or(cmp.Compare(b.Confidence, a.Confidence), cmp.Compare(b.Support, a.Support), cmp.Compare(a.ID, b.ID))
	})
}

// MemoryBrief is a project's memory in a few hundred tokens: its strongest observations and what
// its last sessions set out to do and how they ended.
func MemoryBrief(ctx context.Context, db Querier, project string, now time.Time) (string, error) {
	obs, err := Observations(ctx, db, project, 0.3, 8, now)
	if err != nil {
		return "", err
	}
	sums, err := RecentSummaries(ctx, db, project, 3)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(obs) > 0 {
		b.WriteString("Learned in this project:\n")
		for _, o := range obs {
			fmt.Fprintf(&b, "- %s (%.0f%%, %d sessions)\n", clip(o.Text, 160), o.Confidence*100, o.Support)
		}
	}
	if len(sums) > 0 {
		b.WriteString("Last sessions:\n")
		for _, s := range sums {
			goal, outcome := "", ""
			for _, line := range strings.Split(s.Text, "\n") {
				if v, ok := strings.CutPrefix(line, "Goal: "); ok {
					goal = v
				}
				if v, ok := strings.CutPrefix(line, "Outcome: "); ok {
					outcome = v
				}
			}
			if goal == "" {
				goal = fmt.Sprintf("(no prompt; %d actions)", s.Actions)
			}
			fmt.Fprintf(&b, "- %s %s: %s → %s\n", time.UnixMilli(s.LastTS).UTC().Format("2006-01-02"), s.Client, clip(goal, 140), clip(outcome, 100))
		}
	}
	if b.Len() == 0 {
		return "Nothing learned about this project yet (no ended session summarized).", nil
	}
	return b.String(), nil
}

// EpochSummary is the account of one session epoch, as the writer stored it, with the epoch's
// figures and its session's title: the dashboard's row.
type EpochSummary struct {
	Client    string `json:"client"`
	SessionID string `json:"session_id"`
	Title     string `json:"title,omitempty"` // the session's title (in LastSummaries)
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
	Target    string `json:"target"` // its first characters (the preview RankedObservations is given)
	Success   *bool  `json:"success"`
}

// MemoryObservation is one thing a project's sessions taught, with its evidence resolved.
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

// MemoryProject is a project with observations in a window.
type MemoryProject struct {
	Project      string `json:"project"`
	Observations int64  `json:"observations"`
	LastSeen     int64  `json:"last_seen"` // ms
}

// HasMemory reports whether the store has session memory's tables.
func HasMemory(ctx context.Context, db Querier) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session_summaries', 'observations')`).Scan(&n)
	return n == 2, err
}

// observationConds selects the observations shown: not forgotten, last seen in the window, of
// the project and kind. The client filter does not apply: observations are a project's.
func observationConds(since time.Time, project, kind string) *sqlConds {
	c := &sqlConds{}
	c.add("forgotten = 0")
	if !since.IsZero() {
		c.add("last_seen >= :since", sql.Named("since", since.UnixMilli()))
	}
	if project != "" {
		c.add("project = :project", sql.Named("project", project))
	}
	if kind != "" {
		c.add("kind = :kind", sql.Named("kind", kind))
	}
	return c
}

// MemoryProjects lists every project with observations last seen since since (zero: all time),
// in path order.
func MemoryProjects(ctx context.Context, db Querier, since time.Time) ([]MemoryProject, error) {
	c := observationConds(since, "", "")
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

// RankedObservations ranks the observations last seen in f's window, of its project (the client
// does not apply) and of kind ("" every kind), by their confidence now (the stored one is as of
// the writer's last recomputation of the project), then reads the top limit in full with their
// evidence resolved (each action's target cut to preview characters). It returns them and how
// many there were before the limit.
func RankedObservations(ctx context.Context, db Querier, f Filter, kind string, limit, preview int, now time.Time) ([]MemoryObservation, int, error) {
	c := observationConds(f.Since, f.Project, kind)
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
		r.conf = Confidence(r.support, r.cont, last, now)
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
	var evidence []Evidence
	for rows.Next() {
		var o MemoryObservation
		var ev string
		if err := rows.Scan(&o.ID, &o.Project, &o.Kind, &o.Key, &o.Text, &o.Support, &o.Contradictions, &o.FirstSeen, &o.LastSeen, &ev); err != nil {
			return nil, 0, err
		}
		i := pos[o.ID]
		o.Confidence = all[i].conf
		var list []Evidence
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
	found, err := evidenceActions(ctx, db, evidence, preview)
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
func evidenceActions(ctx context.Context, db Querier, evidence []Evidence, preview int) (map[string]EvidenceAction, error) {
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
			FROM actions WHERE event_id IN (`+strings.Repeat("?,", len(chunk)-1)+`?)`, append([]any{preview}, chunk...)...)
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

// EpochSummaries reads a session's summaries, newest epoch first, at most max; none on a store
// without session memory.
func EpochSummaries(ctx context.Context, db Querier, client, sessionID string, max int) ([]EpochSummary, error) {
	if ok, err := HasMemory(ctx, db); err != nil || !ok {
		return []EpochSummary{}, err
	}
	return epochSummaries(ctx, db, `SELECT `+summaryCols+`, '' FROM session_summaries m
		WHERE m.session_id = ? AND m.client = ? ORDER BY m.epoch DESC, m.source LIMIT ?`, sessionID, client, max)
}

// LastSummaries reads the summaries of the last n sessions of f's window, project and client:
// the sessions whose newest summary with actions ended last, each with that epoch's summaries.
func LastSummaries(ctx context.Context, db Querier, f Filter, n int) ([]EpochSummary, error) {
	c := envelopeConds(Filter{Since: f.Since, Project: f.Project, Client: f.Client}, "last_ts")
	c.add("actions > 0")
	return epochSummaries(ctx, db, `WITH last AS (
		SELECT client, session_id, max(epoch) AS epoch, max(last_ts) AS t FROM session_summaries`+c.sql()+`
		 GROUP BY client, session_id ORDER BY t DESC, client, session_id LIMIT :n)
		SELECT `+summaryCols+`, coalesce(s.title, '') FROM last
		  JOIN session_summaries m ON m.client = last.client AND m.session_id = last.session_id AND m.epoch = last.epoch
		  LEFT JOIN sessions s ON s.client = m.client AND s.session_id = m.session_id
		 ORDER BY last.t DESC, m.client, m.session_id, m.source`, append(c.args, sql.Named("n", n))...)
}

func epochSummaries(ctx context.Context, db Querier, stmt string, args ...any) ([]EpochSummary, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []EpochSummary{}
	type epochKey struct {
		client, session string
		epoch           int64
	}
	facts := map[epochKey]Summary{}
	for rows.Next() {
		var m EpochSummary
		var raw string
		if err := rows.Scan(&m.Client, &m.SessionID, &m.Project, &m.Epoch, &m.Source, &m.Model, &m.FirstTS, &m.LastTS, &m.EndedBy,
			&m.Actions, &m.Text, &raw, &m.CostUSD, &m.CreatedAt, &m.Title); err != nil {
			return nil, err
		}
		if m.Source == "extractive" {
			var f Summary
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
