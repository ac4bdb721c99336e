package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// Memory keeps the summaries and observations current; the writer runs Step between batches.
type Memory struct {
	DB     *sql.DB // the writer's connection: summaries and observations are written there
	Read   *sql.DB // a read-only connection for the reading (nil: DB)
	Logger *slog.Logger
	Now    func() time.Time
	// ObserveEvery is the least time between two recomputations of one project's observations.
	// Zero means one minute.
	ObserveEvery time.Duration
	// Model, when set, is offered each extractive summary saved, for a language model's account
	// of the epoch ([memory] model): it decides itself whether its gates and spend cap let it call.
	Model ModelSummarizer

	// observed holds when each project's observations were last recomputed, for the throttle; an
	// entry older than ObserveEvery throttles nothing and is dropped, so it holds only the projects
	// recomputed within the last ObserveEvery, not every project the writer has seen.
	observed map[string]time.Time
	waiting  map[string]bool  // projects whose recomputation the throttle put off
	cost     *store.SpanTurns // epochs' costs, through a statement prepared once on the reading connection
}

// ModelSummarizer writes a language model's summary of an epoch, when its gates allow (model.go).
type ModelSummarizer interface {
	Consider(ctx context.Context, s Summary) error
}

// Progress is what one Step did.
type Progress struct {
	Summaries int // epochs summarized
	Projects  int // projects whose observations were recomputed
	Pending   int // epochs still due when it stopped, and projects the throttle put off
	Waiting   int // of Pending, the projects the throttle put off
}

// Due is how many epochs were still due when the step stopped.
func (p Progress) Due() int { return p.Pending - p.Waiting }

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Memory) read() *sql.DB {
	if m.Read != nil {
		return m.Read
	}
	return m.DB
}

// dueSQL finds the sessions with an ended epoch whose extractive summary is missing or older than
// the session's records: the current epoch of an idle or finalized session, and the earlier epochs
// of any session (each ended at a compaction).
const dueSQL = `SELECT client, session_id, project, epoch, state, last_seen FROM sessions s
 WHERE (state IN ('idle', 'finalized') AND NOT EXISTS (SELECT 1 FROM session_summaries m
         WHERE m.client = s.client AND m.session_id = s.session_id AND m.epoch = s.epoch AND m.source = 'extractive'
           AND m.last_ts >= s.last_seen))
    OR (epoch > 0 AND NOT EXISTS (SELECT 1 FROM session_summaries m
         WHERE m.client = s.client AND m.session_id = s.session_id AND m.epoch = s.epoch - 1 AND m.source = 'extractive'))
 ORDER BY last_seen LIMIT ?`

// Step summarizes up to limit sessions' ended epochs, then recomputes the observations of the
// projects they belong to (each at most once per ObserveEvery).
func (m *Memory) Step(ctx context.Context, limit int) (Progress, error) {
	return m.step(ctx, limit, false)
}

// Drain is Step for the end of a backlog: its projects' observations wait while epochs are left
// due (each would be recomputed as the next steps add summaries to it), and once none is, it
// recomputes those of every project put off, by it or by the throttle, so that a history ingested
// is fully observed, each project once, when the writer says it has caught up, not up to
// ObserveEvery later.
func (m *Memory) Drain(ctx context.Context, limit int) (Progress, error) {
	return m.step(ctx, limit, true)
}

func (m *Memory) step(ctx context.Context, limit int, drain bool) (Progress, error) {
	var p Progress
	if m.observed == nil {
		m.observed, m.waiting = map[string]time.Time{}, map[string]bool{}
	}
	type due struct {
		client, session, project, state string
		epoch                           int
		lastSeen                        int64
	}
	rows, err := m.read().QueryContext(ctx, dueSQL, limit+1)
	if err != nil {
		return p, err
	}
	var dues []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.client, &d.session, &d.project, &d.epoch, &d.state, &d.lastSeen); err != nil {
			rows.Close()
			return p, err
		}
		dues = append(dues, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, err
	}
	if len(dues) > limit {
		p.Pending, dues = len(dues)-limit, dues[:limit]
	}
	projects := map[string]bool{}
	var made []summaryMade
	for _, d := range dues {
		s, err := m.summarizeSession(ctx, d.client, d.session, d.project, d.epoch, d.state, d.lastSeen)
		if err != nil {
			return p, fmt.Errorf("summary of %s %s: %w", d.client, d.session, err)
		}
		made = append(made, s...)
		if d.project != "" {
			projects[d.project] = true
		}
	}
	if err := m.save(ctx, made); err != nil {
		return p, fmt.Errorf("session summaries: %w", err)
	}
	p.Summaries = len(made)
	if m.Model != nil {
		for _, x := range made {
			if err := m.Model.Consider(ctx, x.s); err != nil && m.Logger != nil {
				m.Logger.Warn("language-model summary not made", "session", x.s.SessionID, "epoch", x.s.Epoch, "err", err)
			}
		}
	}
	every := m.ObserveEvery
	if every <= 0 {
		every = time.Minute
	}
	for project := range m.waiting {
		projects[project] = true
	}
	for project, t := range m.observed {
		if time.Since(t) >= every {
			delete(m.observed, project)
		}
	}
	throttle := !drain || p.Pending > 0 // a drain lifts it once no epoch is left due
	for project := range projects {
		// The throttle is about the work, so it goes by the wall clock, not by Now.
		if t, ok := m.observed[project]; drain && p.Pending > 0 || ok && throttle && time.Since(t) < every {
			m.waiting[project] = true
			p.Pending++
			p.Waiting++
			continue
		}
		delete(m.waiting, project)
		if _, err := Observe(ctx, m.read(), m.DB, project, m.now()); err != nil {
			return p, fmt.Errorf("observations of %s: %w", project, err)
		}
		m.observed[project] = time.Now()
		p.Projects++
	}
	return p, nil
}

// summaryMade is an extractive summary made, and how far the session's records went when it was
// made.
type summaryMade struct {
	s      Summary
	seenTo int64
}

// summarizeSession makes the extractive summary of each ended epoch of a session that lacks one or
// is out of date: the epochs before the current one, and the current one unless the session is
// still active. It reads only (m.read); the step saves them.
func (m *Memory) summarizeSession(ctx context.Context, client, session, project string, epoch int, state string, lastSeen int64) ([]summaryMade, error) {
	ws, err := Windows(ctx, m.read(), client, session, epoch)
	if err != nil {
		return nil, err
	}
	var out []summaryMade
	for i, w := range ws {
		current := i == len(ws)-1
		endedBy := "compaction"
		if current {
			if state != "idle" && state != "finalized" {
				break
			}
			endedBy = state
		} else {
			var have int
			m.read().QueryRowContext(ctx, `SELECT count(*) FROM session_summaries WHERE client = ? AND session_id = ?
				AND epoch = ? AND source = 'extractive'`, client, session, w.Epoch).Scan(&have)
			if have > 0 {
				continue
			}
		}
		if m.cost == nil {
			m.cost = &store.SpanTurns{DB: m.read(), Prepare: true}
		}
		s, err := summarize(ctx, m.read(), m.cost, client, session, project, w, endedBy)
		if err != nil {
			return out, err
		}
		seenTo := w.To
		if current {
			seenTo = lastSeen
		}
		out = append(out, summaryMade{s, seenTo})
	}
	return out, nil
}

// save stores extractive summaries in one transaction (the writer's connection is waited for once
// per step, not once per summary); last_ts is how far the session's records went when each was made
// (so that a resumed session's epoch is summarized again).
func (m *Memory) save(ctx context.Context, made []summaryMade) error {
	if len(made) == 0 {
		return nil
	}
	tx, err := m.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := m.now().UnixMilli()
	for _, x := range made {
		s := x.s
		facts, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := store.SaveExtractiveSummary(ctx, tx, store.SessionSummary{Client: s.Client, SessionID: s.SessionID,
			Epoch: s.Epoch, Project: s.Project, FirstTs: s.FirstTS, LastTs: max(x.seenTo, s.LastTS), EndedBy: s.EndedBy,
			Actions: s.Actions, Text: s.Text(), Facts: string(facts), CreatedAt: now}); err != nil {
			return err
		}
	}
	return tx.Commit()
}
