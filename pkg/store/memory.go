package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Execer runs the store's write statements: the writer's connection (*sql.DB) or a transaction
// of it (*sql.Tx). The session memory writes some rows outside a transaction of its own.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ForgetObservation marks an observation forgotten: it is not shown again, and not brought back.
// It reports whether it was there and not forgotten yet.
func ForgetObservation(ctx context.Context, db Execer, id int64) (bool, error) {
	res, err := db.ExecContext(ctx, `UPDATE observations SET forgotten = 1 WHERE id = ? AND forgotten = 0`, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Observation is an observations row: something the session memory found in a project's actions.
type Observation struct {
	Kind, Key, Text     string
	Support             int
	Contradictions      int
	Confidence          float64
	FirstSeen, LastSeen int64  // Unix ms
	Evidence            string // JSON
}

// ReplaceObservations makes obs a project's observations in the writer's transaction: new ones
// added, changed ones updated, ones not in obs removed; forgotten ones stay forgotten (neither
// updated nor removed). updatedAt is their updated_at (Unix ms).
func ReplaceObservations(ctx context.Context, tx *sql.Tx, project string, obs []Observation, updatedAt int64) error {
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS memory_keep (kind TEXT, key TEXT)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_keep`); err != nil {
		return err
	}
	up, err := tx.PrepareContext(ctx, `INSERT INTO observations (project, kind, key, text, support, contradictions,
		confidence, first_seen, last_seen, evidence, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (project, kind, key) DO UPDATE SET text = excluded.text, support = excluded.support,
			contradictions = excluded.contradictions, confidence = excluded.confidence, first_seen = excluded.first_seen,
			last_seen = excluded.last_seen, evidence = excluded.evidence, updated_at = excluded.updated_at
		WHERE forgotten = 0`)
	if err != nil {
		return err
	}
	defer up.Close()
	for _, o := range obs {
		if _, err := up.ExecContext(ctx, project, o.Kind, o.Key, o.Text, o.Support, o.Contradictions, o.Confidence,
			o.FirstSeen, o.LastSeen, o.Evidence, updatedAt); err != nil {
			return fmt.Errorf("observation %s %s: %w", o.Kind, o.Key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_keep VALUES (?, ?)`, o.Kind, o.Key); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM observations WHERE project = ? AND forgotten = 0
		AND NOT EXISTS (SELECT 1 FROM memory_keep k WHERE k.kind = observations.kind AND k.key = observations.key)`, project); err != nil {
		return err
	}
	return nil
}

// SessionSummary is a session_summaries row: the account of one session epoch.
type SessionSummary struct {
	Client, SessionID string
	Epoch             int
	Project           string
	FirstTs, LastTs   int64 // Unix ms
	EndedBy           string
	Actions           int
	Text              string
	Facts             string // JSON: the extractive summary
	Model             string // of a 'model' summary
	CostUSD           float64
	CreatedAt         int64 // Unix ms
}

// SaveExtractiveSummary stores s as its epoch's 'extractive' summary (its Model is not stored, its
// cost is zero), replacing the one there.
func SaveExtractiveSummary(ctx context.Context, db Execer, s SessionSummary) error {
	_, err := db.ExecContext(ctx, `INSERT INTO session_summaries (client, session_id, epoch, source, project, first_ts,
		last_ts, ended_by, actions, text, facts, cost_usd, created_at) VALUES (?, ?, ?, 'extractive', ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (client, session_id, epoch, source) DO UPDATE SET project = excluded.project, first_ts = excluded.first_ts,
			last_ts = excluded.last_ts, ended_by = excluded.ended_by, actions = excluded.actions, text = excluded.text,
			facts = excluded.facts, created_at = excluded.created_at`,
		s.Client, s.SessionID, s.Epoch, s.Project, s.FirstTs, s.LastTs, s.EndedBy, s.Actions, s.Text, s.Facts,
		0.0, s.CreatedAt)
	return err
}

// SaveModelSummary stores s as its epoch's 'model' summary (a language model's account, with its
// model and cost), replacing the one there.
func SaveModelSummary(ctx context.Context, db Execer, s SessionSummary) error {
	_, err := db.ExecContext(ctx, `INSERT INTO session_summaries (client, session_id, epoch, source, project, first_ts,
		last_ts, ended_by, actions, text, facts, model, cost_usd, created_at) VALUES (?, ?, ?, 'model', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (client, session_id, epoch, source) DO UPDATE SET project = excluded.project, first_ts = excluded.first_ts,
			last_ts = excluded.last_ts, ended_by = excluded.ended_by, actions = excluded.actions, text = excluded.text,
			facts = excluded.facts, model = excluded.model, cost_usd = excluded.cost_usd, created_at = excluded.created_at`,
		s.Client, s.SessionID, s.Epoch, s.Project, s.FirstTs, s.LastTs, s.EndedBy, s.Actions, s.Text, s.Facts, s.Model, s.CostUSD,
		s.CreatedAt)
	return err
}

// modelTablesSQL create the language-model summaries' own bookkeeping (internal/memory's
// ModelClient): they exist only where that path was turned on, so they are not a migration.
var modelTablesSQL = []string{
	// The epoch's figures at its last model call: the growth gates count from them.
	`CREATE TABLE IF NOT EXISTS memory_model_state (
			client     TEXT NOT NULL,
			session_id TEXT NOT NULL,
			epoch      INTEGER NOT NULL,
			raw_bytes  INTEGER NOT NULL,
			text       TEXT NOT NULL,
			called_at  INTEGER NOT NULL,
			PRIMARY KEY (client, session_id, epoch)
		) WITHOUT ROWID`,
	// Every call's cost by its api_turn's id, so that the cap counts a call whose event has not
	// reached the store (or never will: the bus was down).
	`CREATE TABLE IF NOT EXISTS memory_model_calls (
			event_id TEXT PRIMARY KEY,
			ts       INTEGER NOT NULL,
			cost_usd REAL NOT NULL
		) WITHOUT ROWID`,
}

// EnsureModelTables creates the language-model summaries' tables (memory_model_state,
// memory_model_calls) on the writer's connection, when they are missing.
func EnsureModelTables(ctx context.Context, db Execer) error {
	for _, q := range modelTablesSQL {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// SaveModelState records an epoch's figures at its last language-model call: the size of its
// records (rawBytes) and its extractive text; calledAt is Unix ms.
func SaveModelState(ctx context.Context, db Execer, client, sessionID string, epoch int, rawBytes int64, text string, calledAt int64) error {
	_, err := db.ExecContext(ctx, `INSERT INTO memory_model_state (client, session_id, epoch, raw_bytes, text, called_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (client, session_id, epoch) DO UPDATE SET raw_bytes = excluded.raw_bytes,
		text = excluded.text, called_at = excluded.called_at`, client, sessionID, epoch, rawBytes, text, calledAt)
	return err
}

// RecordModelCall counts a language-model call (its api_turn's event id, time in Unix ms and cost)
// against the daily cap until its api_turn is stored; a call recorded already is kept as it is.
func RecordModelCall(ctx context.Context, db Execer, eventID string, ts int64, costUSD float64) error {
	_, err := db.ExecContext(ctx, `INSERT OR IGNORE INTO memory_model_calls (event_id, ts, cost_usd) VALUES (?, ?, ?)`,
		eventID, ts, costUSD)
	return err
}

// PruneModelCalls deletes the recorded language-model calls older than before (Unix ms).
func PruneModelCalls(ctx context.Context, db Execer, before int64) error {
	_, err := db.ExecContext(ctx, `DELETE FROM memory_model_calls WHERE ts < ?`, before)
	return err
}
