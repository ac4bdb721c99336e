package memory

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stored is a summary as the store holds it.
type Stored struct {
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

func scanStored(rows *sql.Rows, withFacts bool) ([]Stored, error) {
	defer rows.Close()
	var out []Stored
	for rows.Next() {
		var s Stored
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
func SessionSummaries(ctx context.Context, db *sql.DB, client, sessionID string, withFacts bool) ([]Stored, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+storedCols+` FROM session_summaries
		WHERE session_id = ? AND (? = '' OR client = ?) ORDER BY epoch, source`, sessionID, client, client)
	if err != nil {
		return nil, err
	}
	return scanStored(rows, withFacts)
}

// RecentSummaries returns the newest extractive summaries of a project (all projects for "").
func RecentSummaries(ctx context.Context, db *sql.DB, project string, limit int) ([]Stored, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+storedCols+` FROM session_summaries
		WHERE source = 'extractive' AND (? = '' OR project = ?) AND actions > 0 ORDER BY last_ts DESC LIMIT ?`, project, project, limit)
	if err != nil {
		return nil, err
	}
	return scanStored(rows, false)
}

// Observations returns a project's observations (all projects for ""), not forgotten, with at
// least minConf confidence as of now (decay applied again), strongest first.
func Observations(ctx context.Context, db *sql.DB, project string, minConf float64, limit int, now time.Time) ([]Observation, error) {
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

// Brief is a project's memory in a few hundred tokens: its strongest observations and what its
// last sessions set out to do and how they ended.
func Brief(ctx context.Context, db *sql.DB, project string, now time.Time) (string, error) {
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

// ForgetSubject is where the running writer (the store's one writer) takes `observerctl memory
// forget` requests: {"id": N}, answered {"found": bool} or {"error": "..."}.
const ForgetSubject = "observer.ctl.memory.forget"

// Forget marks an observation forgotten: it is not shown again, and not brought back.
func Forget(ctx context.Context, db *sql.DB, id int64) (bool, error) {
	res, err := db.ExecContext(ctx, `UPDATE observations SET forgotten = 1 WHERE id = ? AND forgotten = 0`, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
