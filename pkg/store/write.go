package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/observerhq/observer/pkg/event"
)

// Rejected is a message the writer could not decode, kept in the quarantine table.
type Rejected struct {
	Subject string
	Reason  string
	Data    []byte
}

// WriteResult counts what a batch did.
type WriteResult struct {
	Inserted    int // events stored for the first time
	Duplicates  int // events already stored, ignored
	Quarantined int
}

// insertSQL holds one INSERT OR IGNORE per event table; the arguments come from args below.
var insertSQL = map[event.Kind]string{
	// A tool call and its result are two events with one id: the second fills in what the first
	// lacked (the result, or the call's type when the result came first). Nothing changes, and no
	// row counts as written, when the second brings nothing new. The freshness class and content
	// hash come with the result (observer-watch adds them); the first ones stored stay.
	event.KindAction: `INSERT INTO actions (event_id, ts, client, session_id, project, source, type, tool,
		target, tool_use_id, message_id, request_id, agent_id, sidechain, success, error, duration_ms, input_hash,
		output_size, model, transcript, freshness, content_hash, content_size, member)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (event_id) DO UPDATE SET
			ts = min(ts, excluded.ts),
			type = CASE WHEN type = 'unknown' THEN excluded.type ELSE type END,
			tool = coalesce(nullif(tool, ''), excluded.tool),
			target = coalesce(nullif(target, ''), excluded.target),
			message_id = coalesce(nullif(message_id, ''), excluded.message_id),
			request_id = coalesce(nullif(request_id, ''), excluded.request_id),
			model = coalesce(nullif(model, ''), excluded.model),
			success = coalesce(excluded.success, success),
			error = coalesce(nullif(excluded.error, ''), error),
			duration_ms = max(duration_ms, excluded.duration_ms),
			output_size = max(output_size, excluded.output_size),
			freshness = coalesce(nullif(freshness, ''), excluded.freshness),
			content_size = CASE WHEN content_hash = '' THEN excluded.content_size ELSE content_size END,
			content_hash = coalesce(nullif(content_hash, ''), excluded.content_hash)
		WHERE (type = 'unknown' AND excluded.type != 'unknown')
			OR (success IS NULL AND excluded.success IS NOT NULL)
			OR (target = '' AND excluded.target != '')
			OR excluded.duration_ms > duration_ms OR excluded.output_size > output_size
			OR (error = '' AND excluded.error != '')
			OR (freshness = '' AND excluded.freshness != '')
			OR (content_hash = '' AND excluded.content_hash != '')`,
	// One row per model message: a later event of the same message (a client writes one line per
	// content block, and its output count grows) replaces the figures when its output is larger.
	event.KindTokenUsage: `INSERT INTO token_usage (event_id, ts, client, session_id, project, source,
		message_id, request_id, model, agent_id, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
		cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability, origin, member) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (event_id) DO UPDATE SET
			input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
			cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens,
			cache_creation_1h_tokens = excluded.cache_creation_1h_tokens, reasoning_tokens = excluded.reasoning_tokens,
			cost_usd = excluded.cost_usd
		WHERE excluded.output_tokens > output_tokens`,
	event.KindAPITurn: `INSERT OR IGNORE INTO api_turns (event_id, ts, client, session_id, project, provider, endpoint,
		model, message_id, request_id, stream, status, error_class, error_message, stop_reason, latency_ms, ttfb_ms,
		input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens,
		reasoning_tokens, cost_usd, reliability, messages, tools, bytes_in, bytes_out, partial,
		compressed_bytes_before, compressed_bytes_after, compression_tokens_saved, origin, member)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	event.KindCompression: `INSERT OR IGNORE INTO compression_events (event_id, ts, client, session_id, project,
		mechanism, provider, model, bytes_before, bytes_after, tokens_before, tokens_after, mode, turn_event_id,
		message_index, count, score, saved_usd, stash_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	event.KindSession: `INSERT OR IGNORE INTO session_events (event_id, ts, client, session_id, project, source, state,
		cwd, transcript_path, parent_session_id, epoch, model, git_branch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	event.KindHook: `INSERT OR IGNORE INTO hook_events (event_id, ts, client, session_id, project, event, cwd,
		transcript_path, tool_name, tool_use_id, matcher, payload_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
	event.KindMCPCall: `INSERT OR IGNORE INTO mcp_calls (event_id, ts, client, session_id, project, server, tool,
		request_id, input_bytes, output_bytes, input_hash, output_hash, duration_ms, error, token_estimate)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	// A message read again with more text (a reply a client rewrites as it streams) keeps the
	// longer text; its full-text entry follows it (migration 0019's trigger).
	event.KindMessage: `INSERT INTO messages (event_id, ts, seq, client, session_id, project, role, text,
		message_id, tool_use_id, tool, agent_id, sidechain, model, member) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (event_id) DO UPDATE SET text = excluded.text, model = CASE WHEN excluded.model != '' THEN excluded.model ELSE model END
		WHERE length(unpack(excluded.text)) > length(unpack(text))`,
	// One row per distinct snapshot of a window: the same figures seen again move its times.
	event.KindLimit: `INSERT INTO limit_snapshots (event_id, ts, last_seen, provider, window, window_minutes, used_pct,
		status, resets_at, plan, client, source, member) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (provider, window, member, resets_at, used_pct, status) DO UPDATE SET
			ts = min(ts, excluded.ts), last_seen = max(last_seen, excluded.last_seen),
			plan = CASE WHEN excluded.plan != '' THEN excluded.plan ELSE plan END
		WHERE excluded.ts < ts OR excluded.last_seen > last_seen`,
}

// args are the insert's arguments for e; text is its message's text as stored (Pack).
func args(e *event.Event, text any) []any {
	ts := e.Time.UnixMilli()
	switch e.Kind {
	case event.KindAction:
		a := e.Action
		var success any
		if a.Success != nil {
			success = *a.Success
		}
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, e.Source, string(a.Type), a.Tool, a.Target,
			a.ToolUseID, a.MessageID, a.RequestID, a.AgentID, a.Sidechain, success, a.Error, a.DurationMs,
			a.InputHash, a.OutputSize, a.Model, a.Transcript, a.Freshness, a.ContentHash, a.ContentSize, e.Member}
	case event.KindTokenUsage:
		u := e.TokenUsage
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, e.Source, u.MessageID, u.RequestID, u.Model,
			u.AgentID, u.Input, u.Output, u.CacheRead, u.CacheCreation, u.CacheCreation1h, u.Reasoning, u.CostUSD,
			string(u.Reliability), u.Origin, e.Member}
	case event.KindAPITurn:
		t := e.APITurn
		var cb, ca, cs int64
		if c := t.Compression; c != nil {
			cb, ca, cs = c.BytesBefore, c.BytesAfter, c.TokensSaved
		}
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, t.Provider, t.Endpoint, t.Model, t.MessageID,
			t.RequestID, t.Stream, t.Status, t.ErrorClass, t.ErrorMessage, t.StopReason, t.LatencyMs, t.TTFBMs,
			t.Input, t.Output, t.CacheRead, t.CacheCreation, t.CacheCreation1h, t.Reasoning, t.CostUSD,
			string(t.Reliability), t.Messages, t.Tools, t.BytesIn, t.BytesOut, t.Partial, cb, ca, cs, t.Origin, e.Member}
	case event.KindCompression:
		c := e.Compression
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, c.Mechanism, c.Provider, c.Model, c.BytesBefore,
			c.BytesAfter, c.TokensBefore, c.TokensAfter, c.Mode, c.TurnID, c.MessageIndex, c.Count, c.Score,
			c.SavedUSD, c.StashID}
	case event.KindSession:
		s := e.Session
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, e.Source, s.State, s.Cwd, s.TranscriptPath,
			s.ParentSessionID, s.Epoch, s.Model, s.GitBranch}
	case event.KindHook:
		h := e.Hook
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, h.Event, h.Cwd, h.TranscriptPath, h.ToolName,
			h.ToolUseID, h.Matcher, h.PayloadBytes}
	case event.KindMCPCall:
		m := e.MCPCall
		return []any{e.ID, ts, e.Client, e.SessionID, e.Project, m.Server, m.Tool, m.RequestID, m.InputBytes,
			m.OutputBytes, m.InputHash, m.OutputHash, m.DurationMs, m.Error, m.TokenEstimate}
	case event.KindMessage:
		m := e.Message
		return []any{e.ID, ts, m.Seq, e.Client, e.SessionID, e.Project, m.Role, text, m.MessageID, m.ToolUseID, m.Tool,
			m.AgentID, m.Sidechain, m.Model, e.Member}
	case event.KindLimit:
		l := e.Limit
		var resets int64
		if !l.ResetsAt.IsZero() {
			resets = l.ResetsAt.UnixMilli()
		}
		return []any{e.ID, ts, ts, l.Provider, l.Window, l.WindowMinutes, l.UsedPercent, l.Status, resets, l.Plan,
			e.Client, e.Source, e.Member}
	}
	return nil
}

type sessionKey struct{ client, id string }

type sessionAgg struct {
	project          string
	first, last      int64
	events           int
	state, cwd, path string
	stateAt          int64 // time of the session event whose state this is
	parent, model    string
	epoch            int
	// usageModels counts the batch's main-thread usage rows per model, for a session whose
	// client names no model of its own (sessions.model takes the most used).
	usageModels map[string]int
	// title is the batch's best title for the session (titleBeats): the user's, the client's,
	// else its first recognisable prompt, else its first slash command.
	title, titleSource string
	titleAt            int64
	// member, host and user are a team hub's (the verified member, the machine it reported).
	member, host, user string
}

// offerTitle keeps title, from source at ts, if it beats the aggregate's.
func (a *sessionAgg) offerTitle(title, source string, ts int64) {
	if titleBeats(source, ts, a.titleSource, a.titleAt) {
		a.title, a.titleSource, a.titleAt = title, source, ts
	}
}

// titleBeats reports whether a title from source at ts replaces one from cur at curAt: a title the
// user gave ("user") beats one the client made ("client"), which beats a prompt ("prompt"), which
// beats a bare slash command ("command": a session begun with /init and nothing typed since is
// titled "/init", as the client's own session list does); among titles of one source the newest
// wins, among prompts and among commands the earliest.
func titleBeats(source string, ts int64, cur string, curAt int64) bool {
	r, c := titleRank[source], titleRank[cur]
	if r == 0 || r != c {
		return r > c
	}
	if source == "prompt" || source == "command" {
		return ts < curAt
	}
	return ts >= curAt
}

var titleRank = map[string]int{"command": 1, "prompt": 2, "client": 3, "user": 4}

// titleRankSQL is titleRank of the column or parameter x.
func titleRankSQL(x string) string {
	return "(CASE " + x + " WHEN 'user' THEN 4 WHEN 'client' THEN 3 WHEN 'prompt' THEN 2 WHEN 'command' THEN 1 ELSE 0 END)"
}

func (a *sessionAgg) countModel(m string) {
	if a.usageModels == nil {
		a.usageModels = map[string]int{}
	}
	a.usageModels[m]++
}

// mainModel is the model of most of the batch's usage rows (ties: the first by name).
func (a *sessionAgg) mainModel() string {
	best, n := "", 0
	for m, c := range a.usageModels {
		if c > n || c == n && m < best {
			best, n = m, c
		}
	}
	return best
}

// stateRank orders the states of session events that carry the same time: the watcher reports
// active, idle and finalized at the time of the same last record, in that order.
func stateRank(state string) int {
	switch state {
	case event.SessionStarted:
		return 1
	case event.SessionActive:
		return 2
	case event.SessionIdle:
		return 3
	case event.SessionFinalized:
		return 4
	}
	return 0
}

// stateRankSQL is stateRank in SQL, for the column or value x.
func stateRankSQL(x string) string {
	return fmt.Sprintf(`(CASE %[1]s WHEN 'started' THEN 1 WHEN 'active' THEN 2 WHEN 'idle' THEN 3
		WHEN 'finalized' THEN 4 ELSE 0 END)`, x)
}

// newerState reports whether a session state reported at ts replaces the state cur reported at
// curAt: the later time wins; at the same time, the state further along the lifecycle.
func newerState(state string, ts int64, cur string, curAt int64) bool {
	return cur == "" || ts > curAt || ts == curAt && stateRank(state) >= stateRank(cur)
}

// sessionUpsertSQL upserts a session row from a batch's aggregate. The state follows newerState
// against the stored state_at, so session events that arrive out of order leave the newest state.
var sessionUpsertSQL = `INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state,
	state_at, cwd, transcript_path, parent_session_id, epoch, model, events, title, title_source, title_at,
	member, host, os_user)
	VALUES (?1, ?2, ?3, ?4, ?5, coalesce(nullif(?6, ''), 'active'), ?7, ?8, ?9, ?10, ?11, coalesce(nullif(?12, ''), ?14), ?13,
		?15, ?16, ?17, ?18, ?19, ?20)
	ON CONFLICT (client, session_id) DO UPDATE SET
		project = coalesce(nullif(excluded.project, ''), project),
		first_seen = min(first_seen, excluded.first_seen),
		last_seen = max(last_seen, excluded.last_seen),
		state = CASE WHEN ?6 != '' AND ` + newerStateSQL + ` THEN excluded.state ELSE state END,
		state_at = CASE WHEN ?6 != '' AND ` + newerStateSQL + ` THEN excluded.state_at ELSE state_at END,
		cwd = coalesce(nullif(excluded.cwd, ''), cwd),
		transcript_path = coalesce(nullif(excluded.transcript_path, ''), transcript_path),
		parent_session_id = coalesce(nullif(excluded.parent_session_id, ''), parent_session_id),
		epoch = max(epoch, excluded.epoch),
		model = CASE WHEN ?12 != '' THEN ?12 WHEN model = '' THEN ?14 ELSE model END,
		events = events + excluded.events,
		title = CASE WHEN ` + titleBeatsSQL + ` THEN ?15 ELSE title END,
		title_at = CASE WHEN ` + titleBeatsSQL + ` THEN ?17 ELSE title_at END,
		title_source = CASE WHEN ` + titleBeatsSQL + ` THEN ?16 ELSE title_source END,
		member = coalesce(nullif(member, ''), excluded.member),
		host = coalesce(nullif(excluded.host, ''), host),
		os_user = coalesce(nullif(excluded.os_user, ''), os_user)`

// titleBeatsSQL is titleBeats against the stored row (?16 the batch's title source, ?17 its time).
var titleBeatsSQL = `(` + titleRankSQL("?16") + ` > 0 AND (` + titleRankSQL("?16") + ` > ` + titleRankSQL("title_source") + `
		OR ?16 = title_source AND (?16 IN ('prompt', 'command') AND ?17 < title_at OR ?16 NOT IN ('prompt', 'command') AND ?17 >= title_at)))`

var newerStateSQL = `(excluded.state_at > state_at OR (excluded.state_at = state_at AND ` +
	stateRankSQL("excluded.state") + ` >= ` + stateRankSQL("state") + `))`

// fileStateSQL keeps, per project, path and session, the content the session last saw of a file
// (the hash observer-watch took at its last read, edit or write); an older event never replaces a
// newer one.
const fileStateSQL = `INSERT INTO file_state (project, path, session_id, hash, size, seen_at, event_id)
	VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (project, path, session_id) DO UPDATE SET
		hash = excluded.hash, size = excluded.size, seen_at = excluded.seen_at, event_id = excluded.event_id
	WHERE excluded.seen_at >= seen_at`

// analysisDirtySQL marks a session for the writer's analysis loop (internal/analysis): since_ts is
// the earliest action time to look at again, gen tells the loop whether a batch came in meanwhile.
const analysisDirtySQL = `INSERT INTO analysis_dirty (client, session_id, since_ts) VALUES (?, ?, ?)
	ON CONFLICT (client, session_id) DO UPDATE SET since_ts = min(since_ts, excluded.since_ts), gen = gen + 1`

// WriteBatch stores valid events and quarantined messages in one transaction. Events already
// stored are counted as duplicates and left as they are, except that an action's result merges
// into its call and a message's usage keeps its largest output (see insertSQL); such a merge
// counts as inserted. Sessions and projects seen in the batch are upserted once each; a session's
// state is that of its newest session event (by event time, see newerState), whatever order the
// events arrive in. An action that carries a content hash (or a missing file) updates file_state.
func (s *Store) WriteBatch(ctx context.Context, evs []event.Event, rejected []Rejected) (WriteResult, error) {
	return s.WriteBatchWith(ctx, evs, rejected, WriteOptions{})
}

// WriteOptions choose how WriteBatchWith stores a batch.
type WriteOptions struct {
	// Bulk is for a batch of a bulk load (a backlog of history on the bus): the rollups of the
	// hours the batch touched are left to CatchUpRollups, and the WAL is checkpointed less often.
	// The hours are recorded in rollup_pending in the batch's transaction, so a writer killed
	// before the catch-up finds them at its next start; until the catch-up, the rollups of those
	// hours lag behind the raw rows (RollupsPending says how many). Checkpoints every bulkWALPages
	// instead of SQLite's 1,000 pages copy each page the load rewrites batch after batch (its
	// indexes) fewer times, and sync the files fewer times; the next batch that is not bulk goes
	// back to the default.
	Bulk bool
}

// bulkWALPages is the WAL's auto-checkpoint size (pages of 4 KiB) while bulk batches come in.
const bulkWALPages = 10000

// walMode sets the writer connection's auto-checkpoint for bulk or live batches, when it changes.
func (s *Store) walMode(ctx context.Context, bulk bool) error {
	if s.bulkWAL == bulk {
		return nil
	}
	pages := 1000 // SQLite's default
	if bulk {
		pages = bulkWALPages
	}
	if _, err := s.DB.ExecContext(ctx, "PRAGMA wal_autocheckpoint = "+strconv.Itoa(pages)); err != nil {
		return err
	}
	s.bulkWAL = bulk
	return nil
}

// WriteBatchWith is WriteBatch with options.
func (s *Store) WriteBatchWith(ctx context.Context, evs []event.Event, rejected []Rejected, o WriteOptions) (WriteResult, error) {
	var res WriteResult
	if err := s.walMode(ctx, o.Bulk); err != nil {
		return res, fmt.Errorf("checkpoint mode: %w", err)
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()

	stmt := txStmt(tx)
	sessions := map[sessionKey]*sessionAgg{}
	projects := map[string][2]int64{}
	dirty := newDirtyHours()
	analyse := map[sessionKey]int64{} // sessions whose actions changed: the earliest time touched
	unlinked := unlinkedTurns(evs)
	// A merge can move an action to an earlier time, and a message's usage keeps the time of its
	// first line: the rollups must recompute the hour the row was in as well. The stored times
	// of the batch's ids are read in one query per table, then kept as the batch changes them.
	prior, err := priorTimes(ctx, tx, evs)
	if err != nil {
		return res, err
	}
	packed := startPack(evs) // compressing the texts beside the inserts, on another core
	turnMessages, turnRequests := map[string]bool{}, map[string]bool{}
	for i := range evs {
		e := &evs[i]
		st := stmt(insertSQL[e.Kind], e.Kind)
		ts := e.Time.UnixMilli()
		oldTs := int64(-1)
		known := prior[e.Kind]
		// The session a merge keeps: the one the row was first stored under.
		sk := sessionKey{e.Client, e.SessionID}
		if p, ok := known[e.ID]; ok {
			oldTs, sk = p.ts, p.session
		}
		r, err := st.ExecContext(ctx, args(e, packed.get(i))...)
		if err != nil {
			return res, fmt.Errorf("insert %s %s: %w", e.Kind, e.ID, err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			res.Duplicates++
			continue
		}
		res.Inserted++
		if known != nil {
			// The row's time now: an action's merge keeps the earlier one (insertSQL), a usage
			// row keeps its first.
			switch {
			case oldTs < 0:
				known[e.ID] = priorRow{ts, sk}
			case e.Kind == event.KindAction:
				known[e.ID] = priorRow{min(oldTs, ts), sk}
			}
		}
		switch e.Kind {
		case event.KindAction:
			dirty.actionOf(ts, sk)
			since := ts
			if oldTs >= 0 {
				dirty.actionOf(oldTs, sk)
				since = min(since, oldTs)
			}
			if e.SessionID != "" {
				k := sessionKey{e.Client, e.SessionID}
				if cur, ok := analyse[k]; !ok || since < cur {
					analyse[k] = since
				}
			}
		case event.KindTokenUsage:
			dirty.turnOf(ts, sk.id)
			if oldTs >= 0 {
				dirty.turnOf(oldTs, sk.id)
			}
			if u := e.TokenUsage; u.MessageID != "" && e.SessionID != "" {
				near, err := unlinked.any(ctx, stmt)
				if err != nil {
					return res, err
				}
				if near {
					if err := linkUsage(ctx, stmt, dirty, e); err != nil {
						return res, err
					}
				}
			}
		case event.KindAPITurn:
			if e.APITurn.Origin == "" && e.SessionID != "" {
				dirty.proxyTurn(ts, e.SessionID, e.ID)
			} else {
				dirty.turnOf(ts, e.SessionID)
			}
			// The transcript rows of the same message stop counting, wherever their hour; so do
			// the transcript rows and the OTLP turn of the same request. Their hours are marked
			// after the loop, in one query for the batch's messages and one for its requests.
			if m := e.APITurn.MessageID; m != "" {
				turnMessages[m] = true
			}
			if r := e.APITurn.RequestID; r != "" {
				turnRequests[r] = true
			}
			if e.SessionID == "" {
				unlinked.found = true
				if err := linkTurn(ctx, stmt, dirty, e); err != nil {
					return res, err
				}
			} else if e.APITurn.Origin == "" {
				// A session-less turn just before it (a router call) takes its session.
				near, err := unlinked.any(ctx, stmt)
				if err != nil {
					return res, err
				}
				if near {
					if err := attachPrevious(ctx, stmt, dirty, e.ID, e.Client, e.Member, ts, e.SessionID, e.Project); err != nil {
						return res, err
					}
				}
			}
		}
		if e.Kind == event.KindAction && (e.Action.ContentHash != "" || e.Action.Freshness == event.FreshnessMissing) &&
			e.Action.Target != "" {
			st := stmt(fileStateSQL, "file_state")
			a := e.Action
			if _, err := st.ExecContext(ctx, e.Project, a.Target, e.SessionID, a.ContentHash, a.ContentSize,
				e.Time.UnixMilli(), e.ID); err != nil {
				return res, fmt.Errorf("file state %s: %w", e.ID, err)
			}
		}
		if e.Kind == event.KindCompression && e.Compression.StashID != "" && e.Compression.Original != "" {
			// The original of a compressed output, once however many requests carried it.
			st := stmt(`INSERT OR IGNORE INTO compression_stash (stash_id, ts, session_id, mechanism, content)
				VALUES (?, ?, ?, ?, ?)`, "compression_stash")
			c := e.Compression
			if _, err := st.ExecContext(ctx, c.StashID, ts, e.SessionID, c.Mechanism, c.Original); err != nil {
				return res, fmt.Errorf("stash %s: %w", c.StashID, err)
			}
		}
		if e.Kind == event.KindAction && e.Action.Output != "" {
			st := stmt(`INSERT OR IGNORE INTO action_outputs (event_id, output) VALUES (?, ?)`, "action_output")
			if _, err := st.ExecContext(ctx, e.ID, packed.get(i)); err != nil {
				return res, fmt.Errorf("insert output %s: %w", e.ID, err)
			}
		}
		if e.SessionID != "" {
			k := sessionKey{e.Client, e.SessionID}
			a := sessions[k]
			if a == nil {
				a = &sessionAgg{first: ts, last: ts}
				sessions[k] = a
			}
			a.first, a.last = min(a.first, ts), max(a.last, ts)
			if e.Kind != event.KindMessage {
				// Its events count what it did; a message is its time only (the final reply
				// after the last tool call is when the session was last active).
				a.events++
			}
			a.member, a.host, a.user = cmp.Or(e.Member, a.member), cmp.Or(e.Host, a.host), cmp.Or(e.User, a.user)
			if e.Project != "" {
				a.project = e.Project
			}
			// Within a batch the same rules hold as across batches (the upsert below): a later
			// value replaces an earlier one only when it is set, and the epoch only grows.
			switch {
			case e.Session != nil:
				if e.Session.State != "" && newerState(e.Session.State, ts, a.state, a.stateAt) {
					a.state, a.stateAt = e.Session.State, ts
				}
				a.cwd, a.path = cmp.Or(e.Session.Cwd, a.cwd), cmp.Or(e.Session.TranscriptPath, a.path)
				a.parent, a.model = cmp.Or(e.Session.ParentSessionID, a.parent), cmp.Or(e.Session.Model, a.model)
				a.epoch = max(a.epoch, e.Session.Epoch)
				if e.Session.Title != "" {
					a.offerTitle(e.Session.Title, map[bool]string{true: "user", false: "client"}[e.Session.TitleByUser], ts)
				}
			case e.Action != nil && e.Action.Type == event.ActionUserPrompt && !e.Action.Sidechain && e.Action.AgentID == "":
				if title, ok := event.CleanTitle(e.Action.Target); ok {
					a.offerTitle(title, "prompt", ts)
				} else if title, ok := event.CommandTitle(e.Action.Target); ok {
					a.offerTitle(title, "command", ts)
				}
			case e.TokenUsage != nil && e.TokenUsage.AgentID == "" && e.TokenUsage.Model != "":
				a.countModel(e.TokenUsage.Model)
			case e.APITurn != nil && e.APITurn.Model != "":
				a.countModel(e.APITurn.Model)
			case e.Hook != nil:
				if e.Hook.Cwd != "" {
					a.cwd = e.Hook.Cwd
				}
				if e.Hook.TranscriptPath != "" {
					a.path = e.Hook.TranscriptPath
				}
			}
		}
		if e.Project != "" {
			p, ok := projects[e.Project]
			if !ok {
				p = [2]int64{ts, ts}
			}
			projects[e.Project] = [2]int64{min(p[0], ts), max(p[1], ts)}
		}
	}
	for k, a := range sessions {
		// A proxy turn without a project is reported under its session's: when the session's
		// project changes, so do the rollups of its proxy turns.
		if a.project != "" {
			if err := markProjectChange(ctx, stmt, dirty, k, a.project); err != nil {
				return res, err
			}
		}
		st := stmt(sessionUpsertSQL, "session_upsert")
		_, err = st.ExecContext(ctx, k.client, k.id, a.project, a.first, a.last, a.state, a.stateAt, a.cwd, a.path,
			a.parent, a.epoch, a.model, a.events, a.mainModel(), a.title, a.titleSource, a.titleAt, a.member, a.host, a.user)
		if err != nil {
			return res, fmt.Errorf("upsert session %s: %w", k.id, err)
		}
	}
	for path, p := range projects {
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (path, name, first_seen, last_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT (path) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
				last_seen = max(last_seen, excluded.last_seen)`, path, filepath.Base(path), p[0], p[1])
		if err != nil {
			return res, fmt.Errorf("upsert project %s: %w", path, err)
		}
	}
	if err := markMessages(ctx, stmt, dirty, turnMessages); err != nil {
		return res, err
	}
	if err := markRequests(ctx, stmt, dirty, turnRequests); err != nil {
		return res, err
	}
	if o.Bulk {
		if err := deferRollups(ctx, tx, dirty); err != nil {
			return res, err
		}
	} else if err := refreshRollups(ctx, tx, dirty); err != nil {
		return res, err
	}
	for k, since := range analyse {
		st := stmt(analysisDirtySQL, "analysis_dirty")
		if _, err := st.ExecContext(ctx, k.client, k.id, since); err != nil {
			return res, fmt.Errorf("mark session %s for analysis: %w", k.id, err)
		}
	}
	now := s.Now().UnixMilli()
	for _, r := range rejected {
		if _, err := tx.ExecContext(ctx, `INSERT INTO quarantine (received_at, subject, reason, data) VALUES (?, ?, ?, ?)`,
			now, r.Subject, r.Reason, r.Data); err != nil {
			return res, fmt.Errorf("quarantine: %w", err)
		}
		res.Quarantined++
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("commit: %w", err)
	}
	return res, nil
}

// IndexOutputs adds tool outputs stored since the last call to the full-text index, at most limit
// of them, in a transaction of its own. It returns how many it indexed.
func (s *Store) IndexOutputs(ctx context.Context, limit int) (int, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRowContext(ctx, `SELECT last_id FROM fts_progress WHERE name = 'tool_output'`).Scan(&last)
	if err != nil && err != sql.ErrNoRows {
		return 0, err
	}
	var upto sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(rowid) FROM (SELECT rowid FROM action_outputs WHERE rowid > ? ORDER BY rowid LIMIT ?)`,
		last, limit).Scan(&upto); err != nil {
		return 0, err
	}
	if !upto.Valid {
		return 0, nil
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO tool_output_fts (rowid, output)
		SELECT rowid, `+unpacked("output")+` FROM action_outputs WHERE rowid > ? AND rowid <= ?`, last, upto.Int64)
	if err != nil {
		return 0, fmt.Errorf("index outputs: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fts_progress (name, last_id) VALUES ('tool_output', ?)
		ON CONFLICT (name) DO UPDATE SET last_id = excluded.last_id`, upto.Int64); err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), tx.Commit()
}

// IndexMessages adds the messages stored since the last call to the full-text index, at most
// limit of them, in a transaction of its own. It returns how many it went through (those without
// text are not indexed).
func (s *Store) IndexMessages(ctx context.Context, limit int) (int, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRowContext(ctx, `SELECT last_id FROM fts_progress WHERE name = 'message'`).Scan(&last)
	if err != nil && err != sql.ErrNoRows {
		return 0, err
	}
	var upto sql.NullInt64
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT max(id), count(*) FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)`,
		last, limit).Scan(&upto, &n); err != nil {
		return 0, err
	}
	if !upto.Valid {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO message_fts (rowid, text)
		SELECT id, `+unpacked("text")+` FROM messages WHERE id > ? AND id <= ? AND text != ''`, last, upto.Int64); err != nil {
		return 0, fmt.Errorf("index messages: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fts_progress (name, last_id) VALUES ('message', ?)
		ON CONFLICT (name) DO UPDATE SET last_id = excluded.last_id`, upto.Int64); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// Counts returns the number of rows per event table, for status and tests.
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range []string{"actions", "token_usage", "api_turns", "compression_events", "session_events",
		"hook_events", "mcp_calls", "sessions", "projects", "quarantine"} {
		var n int64
		if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// priorTsSQL reads the stored times and sessions of the rows of a batch's event ids (a JSON
// array) before its upserts may change them.
var priorTsSQL = map[event.Kind]string{
	event.KindAction:     `SELECT event_id, ts, client, session_id FROM actions WHERE event_id IN (SELECT value FROM json_each(?))`,
	event.KindTokenUsage: `SELECT event_id, ts, client, session_id FROM token_usage WHERE event_id IN (SELECT value FROM json_each(?))`,
}

// priorRow is what a merge needs of a stored row: its time, and the session it keeps.
type priorRow struct {
	ts      int64
	session sessionKey
}

// priorTimes reads the stored time and session of every row the batch's actions and usage events
// may merge into, by kind and event id. Each kind present in the batch has a map, empty when none
// is stored.
func priorTimes(ctx context.Context, tx *sql.Tx, evs []event.Event) (map[event.Kind]map[string]priorRow, error) {
	ids := map[event.Kind][]string{}
	for i := range evs {
		if _, ok := priorTsSQL[evs[i].Kind]; ok {
			ids[evs[i].Kind] = append(ids[evs[i].Kind], evs[i].ID)
		}
	}
	out := make(map[event.Kind]map[string]priorRow, len(ids))
	for kind, list := range ids {
		arg, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		m := make(map[string]priorRow)
		rows, err := tx.QueryContext(ctx, priorTsSQL[kind], string(arg))
		if err != nil {
			return nil, fmt.Errorf("read stored %s times: %w", kind, err)
		}
		for rows.Next() {
			var id string
			var p priorRow
			if err := rows.Scan(&id, &p.ts, &p.session.client, &p.session.id); err != nil {
				rows.Close()
				return nil, err
			}
			m[id] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read stored %s times: %w", kind, err)
		}
		out[kind] = m
	}
	return out, nil
}

type stmtFunc func(query string, kind event.Kind) *txQuery

// txStmt gives the statements of a batch's transaction, one per kind.
func txStmt(tx *sql.Tx) stmtFunc {
	stmts := map[event.Kind]*txQuery{}
	return func(query string, kind event.Kind) *txQuery {
		st, ok := stmts[kind]
		if !ok {
			st = prepare(tx, query)
			stmts[kind] = st
		}
		return st
	}
}

// markMessages marks the hours of the transcript rows of the messages ids for their rollups to be
// recomputed (a proxy turn of the same message stops them counting, a turn pruned lets them count
// again), in one query.
func markMessages(ctx context.Context, stmt stmtFunc, d *dirtyHours, ids map[string]bool) error {
	if len(ids) == 0 {
		return nil
	}
	return markHours(ctx, stmt, d, `SELECT ts, session_id FROM token_usage WHERE message_id IN (SELECT value FROM json_each(?))`,
		"turn_messages", jsonKeys(ids))
}

// markRequests marks the hours of the rows of the API requests ids (transcript rows, OTLP turns)
// for their rollups to be recomputed: a turn of the same request, from the proxy or OTLP, changes
// which of them count (a proxy turn always counts: its own hours are marked as it is stored). One
// query.
func markRequests(ctx context.Context, stmt stmtFunc, d *dirtyHours, ids map[string]bool) error {
	if len(ids) == 0 {
		return nil
	}
	return markHours(ctx, stmt, d, `SELECT ts, session_id FROM token_usage WHERE request_id IN (SELECT value FROM json_each(?1)) AND request_id != ''
		UNION ALL SELECT ts, session_id FROM api_turns WHERE request_id IN (SELECT value FROM json_each(?1)) AND request_id != ''
		                                                AND origin != ''`,
		"turn_requests", jsonKeys(ids))
}

// jsonKeys is a set's keys as a JSON array, for json_each.
func jsonKeys(set map[string]bool) string {
	b, _ := json.Marshal(slices.Collect(maps.Keys(set)))
	return string(b)
}

// markHours marks the hour and session of every row query (a prepared statement named name)
// returns for key, as its time and session id.
func markHours(ctx context.Context, stmt stmtFunc, d *dirtyHours, query string, name event.Kind, key string) error {
	st := stmt(query, name)
	rows, err := st.QueryContext(ctx, key)
	if err != nil {
		return fmt.Errorf("rollup %s %s: %w", name, key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ts int64
		var session string
		if err := rows.Scan(&ts, &session); err != nil {
			return err
		}
		d.turnOf(ts, session)
	}
	return rows.Err()
}

// Session-less proxy turns. Gemini CLI, Qwen Code and Cline send no session id with their API
// requests, so their proxy turns cannot be joined to the client's transcript by session or by a
// message id the two share (Gemini's responseId is not in Gemini CLI's records). The writer links
// them after the fact: a proxy turn without a session and a transcript message of the same client
// and model with the same input, output and cache-read figures, within JoinWindowMs of each
// other, are one turn. Each is linked at most once (the nearest in time first), whichever of the
// two is stored first; the turn takes the message's session (and its project, when it has none),
// and the message's id goes into api_turns.transcript_message_id, so that TurnsSQL counts the
// turn once, at the proxy's figures. Both hours are recomputed.
//
// A message whose id is the proxy turn's own response id (Pi keeps chatcmpl-..., resp_...) is that
// turn whatever the figures and the time: TurnsSQL already counts it once, and the link gives the
// turn the message's session. Such a client may send no mark the proxy knows (Pi sends only the
// OpenAI SDK's), so a turn of client "unknown" also takes the message's client; a turn the proxy
// named keeps its client and is linked by id only to a message of that client.
//
// Requests a client makes for itself have no message in its records: Gemini CLI's model router
// asks a flash-lite model which model should answer before every prompt, and the answer is no
// message of the chat. Such a turn would stay under no session and no project. The writer gives it
// the session of the request that follows it: a session-less proxy turn that no message claims
// takes the session (and project) of the next proxy turn of the same client (and team member, on a
// hub), when that one starts within NextTurnWindowMs and has a session (its own or its message's),
// and transcript_message_id NextTurnMark says where the session came from. Whichever is stored or linked first, the other
// completes the pair: a session-less turn looks at its successor when it is stored, a turn looks at
// its predecessor when it gets its session (stored with one, or linked to its message). Only the
// immediate neighbour counts, so a turn is never carried across another request of the client.
// The choice is the writer's, not the proxy's: the proxy cannot know Gemini CLI's session (the
// client sends none), while the writer sees the session its records give the next turn. Two
// sessions of one client running at once may lend a router call to the wrong one of them; a turn
// so attached still yields to a message with its own figures, which takes it as any session-less
// turn (so a turn whose message came late is never counted twice). A client's last request, with
// no request after it, keeps no session.

// A turn the proxy could not name (client unknown) matches a message of any client by the whole
// prompt (input, cache reads and cache writes together) rather than by its split: a client that
// sends no mark of its own may also keep no cache figures (Continue's CLI records prompt_tokens,
// cached tokens included, and drops the cached count), while the proxy stores the split.
const linkTurnSQL = `SELECT t.message_id, t.session_id, t.project, t.ts, t.client FROM token_usage t
 WHERE t.ts BETWEEN ? AND ? AND t.model = ? AND t.output_tokens = ?
   AND ((t.client = ? AND t.input_tokens = ? AND t.cache_read_tokens = ?)
     OR (? = 'unknown' AND t.input_tokens + t.cache_read_tokens + t.cache_creation_tokens = ?))
   AND t.message_id != '' AND t.session_id != ''
   AND NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.message_id = t.message_id)
   AND NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.transcript_message_id = t.message_id)
 ORDER BY abs(t.ts - ?) LIMIT 1`

const linkUsageSQL = `SELECT a.event_id, a.ts FROM api_turns a
 WHERE a.session_id = '' AND a.ts BETWEEN ? AND ? AND a.model = ? AND a.output_tokens = ?
   AND ((a.client = ? AND a.input_tokens = ? AND a.cache_read_tokens = ?)
     OR (a.client = 'unknown' AND a.input_tokens + a.cache_read_tokens + a.cache_creation_tokens = ?))
   AND a.transcript_message_id = ''
   AND NOT EXISTS (SELECT 1 FROM api_turns x WHERE x.message_id = ?)
   AND NOT EXISTS (SELECT 1 FROM api_turns x WHERE x.transcript_message_id = ?)
 ORDER BY abs(a.ts - ?) LIMIT 1`

const linkTurnByIDSQL = `SELECT t.message_id, t.session_id, t.project, t.ts, t.client FROM token_usage t
 WHERE t.message_id = ? AND t.session_id != '' AND (t.client = ? OR ? = 'unknown')
 ORDER BY t.ts LIMIT 1`

// linkUsageByIDSQL runs for every transcript message stored: the unary + keeps SQLite on the
// message-id index, not on (session_id, ts), which would read every session-less turn.
const linkUsageByIDSQL = `SELECT a.event_id, a.ts FROM api_turns a
 WHERE a.message_id = ? AND +a.session_id = '' AND (a.client = ? OR a.client = 'unknown')
 ORDER BY a.ts LIMIT 1`

const linkSQL = `UPDATE api_turns SET session_id = ?, transcript_message_id = ?,
       project = CASE WHEN project = '' THEN ? ELSE project END,
       client = CASE WHEN client = 'unknown' THEN ? ELSE client END WHERE event_id = ?`

// NextTurnMark is the transcript_message_id of a proxy turn that took its session from the next
// turn of its client (see above), not from a message of its own.
const NextTurnMark = "~next-turn"

// NextTurnWindowMs is how long after a session-less turn starts the next turn of its client may
// start and still lend it its session: Gemini CLI's router call takes a second or two before the
// request it routes.
const NextTurnWindowMs int64 = 30_000

// linkAttachedSQL finds, for a transcript message no session-less turn matched, a turn attached
// to a neighbour's session with the message's figures: the message is that turn (on the partial
// index api_turns_next_turn, migration 0017).
const linkAttachedSQL = `SELECT a.event_id, a.ts FROM api_turns a INDEXED BY api_turns_next_turn
 WHERE a.transcript_message_id = '` + NextTurnMark + `' AND a.ts BETWEEN ? AND ? AND a.model = ? AND a.output_tokens = ?
   AND ((a.client = ? AND a.input_tokens = ? AND a.cache_read_tokens = ?)
     OR (a.client = 'unknown' AND a.input_tokens + a.cache_read_tokens + a.cache_creation_tokens = ?))
   AND NOT EXISTS (SELECT 1 FROM api_turns x WHERE x.message_id = ?)
   AND NOT EXISTS (SELECT 1 FROM api_turns x WHERE x.transcript_message_id = ?)
 ORDER BY abs(a.ts - ?) LIMIT 1`

// neighbourSQL is the proxy turn of a client (and team member, on a hub) just before
// (prevTurnSQL) or after (nextTurnSQL) a time, within NextTurnWindowMs.
const (
	prevTurnSQL = `SELECT event_id, ts, session_id, project, transcript_message_id FROM api_turns
 WHERE ts < ?1 AND ts >= ?1 - ?2 AND client = ?3 AND member = ?5 AND origin = '' AND event_id != ?4 ORDER BY ts DESC LIMIT 1`
	nextTurnSQL = `SELECT event_id, ts, session_id, project, transcript_message_id FROM api_turns
 WHERE ts > ?1 AND ts <= ?1 + ?2 AND client = ?3 AND member = ?5 AND origin = '' AND event_id != ?4 ORDER BY ts LIMIT 1`
)

const attachSQL = `UPDATE api_turns SET session_id = ?, transcript_message_id = '` + NextTurnMark + `',
       project = CASE WHEN project = '' THEN ? ELSE project END
 WHERE event_id = ? AND session_id = '' AND transcript_message_id = ''`

// neighbour is a proxy turn next to another.
type neighbour struct {
	id, session, project, message string
	ts                            int64
}

// turnNear reads the turn of client and member just before (q prevTurnSQL) or after (nextTurnSQL) ts.
func turnNear(ctx context.Context, stmt stmtFunc, q, name, client, member, self string, ts int64) (neighbour, bool, error) {
	st := stmt(q, event.Kind(name))
	var n neighbour
	err := st.QueryRowContext(ctx, ts, NextTurnWindowMs, client, self, member).Scan(&n.id, &n.ts, &n.session, &n.project, &n.message)
	if errors.Is(err, sql.ErrNoRows) {
		return n, false, nil
	}
	if err != nil {
		return n, false, fmt.Errorf("turn next to %s: %w", self, err)
	}
	return n, true, nil
}

// attach gives the session-less turn turnID the session and project of the next turn of its client.
func attach(ctx context.Context, stmt stmtFunc, d *dirtyHours, turnID string, turnTs int64, session, project string) error {
	st := stmt(attachSQL, "attach_turn")
	if _, err := st.ExecContext(ctx, session, project, turnID); err != nil {
		return fmt.Errorf("attach proxy turn %s to session %s: %w", turnID, session, err)
	}
	d.turn(turnTs)
	return nil
}

// attachPrevious attaches the turn just before a turn of client that has session (from ts) to it,
// when that one has no session and no message.
func attachPrevious(ctx context.Context, stmt stmtFunc, d *dirtyHours, self, client, member string, ts int64, session, project string) error {
	if client == "unknown" || session == "" {
		return nil
	}
	p, ok, err := turnNear(ctx, stmt, prevTurnSQL, "prev_turn", client, member, self, ts)
	if err != nil || !ok || p.session != "" || p.message != "" {
		return err
	}
	return attach(ctx, stmt, d, p.id, p.ts, session, project)
}

// attachToNext attaches the session-less turn e, which no message claimed, to the next turn of its
// client, when that one has a session.
func attachToNext(ctx context.Context, stmt stmtFunc, d *dirtyHours, e *event.Event) error {
	if e.Client == "unknown" || e.APITurn.Origin != "" {
		return nil
	}
	n, ok, err := turnNear(ctx, stmt, nextTurnSQL, "next_turn", e.Client, e.Member, e.ID, e.Time.UnixMilli())
	if err != nil || !ok || n.session == "" {
		return err
	}
	return attach(ctx, stmt, d, e.ID, e.Time.UnixMilli(), n.session, n.project)
}

// unlinkedWindowMs widens a batch's time range when looking for session-less proxy turns: a
// transcript message is stored with its own time, within seconds of the proxy's turn.
const unlinkedWindowMs = 10 * 60_000

// batchTurns says whether session-less proxy turns (or turns lent a neighbour's session) lie near
// a batch, so that the batch's transcript messages (every Claude Code usage row) look for a turn to
// link only then: one indexed query per batch instead of two per message.
type batchTurns struct {
	from, to int64
	checked  bool
	found    bool
}

func unlinkedTurns(evs []event.Event) *batchTurns {
	b := &batchTurns{from: math.MaxInt64, to: math.MinInt64}
	for i := range evs {
		ts := evs[i].Time.UnixMilli()
		b.from, b.to = min(b.from, ts), max(b.to, ts)
	}
	return b
}

func (b *batchTurns) any(ctx context.Context, stmt stmtFunc) (bool, error) {
	if b.found || b.checked {
		return b.found, nil
	}
	q := stmt(`SELECT EXISTS (SELECT 1 FROM api_turns WHERE session_id = '' AND ts BETWEEN ?1 AND ?2)
		OR EXISTS (SELECT 1 FROM api_turns INDEXED BY api_turns_next_turn
			WHERE transcript_message_id = '`+NextTurnMark+`' AND ts BETWEEN ?1 AND ?2)`, "unlinked_turns")
	if err := q.QueryRowContext(ctx, b.from-unlinkedWindowMs, b.to+unlinkedWindowMs).Scan(&b.found); err != nil {
		return false, fmt.Errorf("look for session-less proxy turns: %w", err)
	}
	b.checked = true
	return b.found, nil
}

// linkTurn links the session-less proxy turn e to its transcript message, when one is stored, else
// to the session of the next turn of its client.
func linkTurn(ctx context.Context, stmt stmtFunc, d *dirtyHours, e *event.Event) error {
	q := stmt(linkTurnSQL, "link_turn")
	t, ts := e.APITurn, e.Time.UnixMilli()
	var msg, session, project string
	var uts int64
	client := e.Client
	if t.MessageID != "" {
		byID := stmt(linkTurnByIDSQL, "link_turn_id")
		err := byID.QueryRowContext(ctx, t.MessageID, e.Client, e.Client).Scan(&msg, &session, &project, &uts, &client)
		if err == nil {
			return link(ctx, stmt, d, e.ID, ts, session, msg, project, client, uts)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("link proxy turn %s: %w", e.ID, err)
		}
	}
	client = e.Client
	err := q.QueryRowContext(ctx, ts-JoinWindowMs, ts+JoinWindowMs, t.Model, t.Output, e.Client, t.Input, t.CacheRead,
		e.Client, t.Input+t.CacheRead+t.CacheCreation, ts).Scan(&msg, &session, &project, &uts, &client)
	if errors.Is(err, sql.ErrNoRows) {
		return attachToNext(ctx, stmt, d, e)
	}
	if err != nil {
		return fmt.Errorf("link proxy turn %s: %w", e.ID, err)
	}
	return link(ctx, stmt, d, e.ID, ts, session, msg, project, client, uts)
}

// linkUsage links the transcript message e to a session-less proxy turn, when one is stored.
func linkUsage(ctx context.Context, stmt stmtFunc, d *dirtyHours, e *event.Event) error {
	q := stmt(linkUsageSQL, "link_usage")
	u, ts := e.TokenUsage, e.Time.UnixMilli()
	var turnID string
	var ats int64
	byID := stmt(linkUsageByIDSQL, "link_usage_id")
	switch err := byID.QueryRowContext(ctx, u.MessageID, e.Client).Scan(&turnID, &ats); {
	case err == nil:
		return link(ctx, stmt, d, turnID, ats, e.SessionID, u.MessageID, e.Project, e.Client, ts)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("link transcript message %s: %w", u.MessageID, err)
	}
	prompt := u.Input + u.CacheRead + u.CacheCreation
	err := q.QueryRowContext(ctx, ts-JoinWindowMs, ts+JoinWindowMs, u.Model, u.Output, e.Client, u.Input, u.CacheRead, prompt,
		u.MessageID, u.MessageID, ts).Scan(&turnID, &ats)
	if errors.Is(err, sql.ErrNoRows) {
		// A turn lent a neighbour's session may be this message's own.
		att := stmt(linkAttachedSQL, "link_attached")
		err = att.QueryRowContext(ctx, ts-JoinWindowMs, ts+JoinWindowMs, u.Model, u.Output, e.Client, u.Input, u.CacheRead, prompt,
			u.MessageID, u.MessageID, ts).Scan(&turnID, &ats)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("link transcript message %s: %w", u.MessageID, err)
	}
	return link(ctx, stmt, d, turnID, ats, e.SessionID, u.MessageID, e.Project, e.Client, ts)
}

// link gives the proxy turn turnID the session, message and project of a transcript message of
// client (which replaces the turn's client only when the proxy could not name it).
func link(ctx context.Context, stmt stmtFunc, d *dirtyHours, turnID string, turnTs int64, session, msg, project, client string, usageTs int64) error {
	up := stmt(linkSQL, "link")
	if _, err := up.ExecContext(ctx, session, msg, project, client, turnID); err != nil {
		return fmt.Errorf("link proxy turn %s to message %s: %w", turnID, msg, err)
	}
	d.turn(turnTs)
	d.turn(usageTs)
	// The turn before it (a router call) may wait for this session. The turn's client now.
	cl := stmt(`SELECT client, member, project FROM api_turns WHERE event_id = ?`, "turn_client")
	var member string
	if err := cl.QueryRowContext(ctx, turnID).Scan(&client, &member, &project); err != nil {
		return fmt.Errorf("link proxy turn %s: %w", turnID, err)
	}
	return attachPrevious(ctx, stmt, d, turnID, client, member, turnTs, session, project)
}

// markProjectChange notes the hours of a session's proxy turns when its project is about to
// change to project.
func markProjectChange(ctx context.Context, stmt stmtFunc, d *dirtyHours, k sessionKey, project string) error {
	st := stmt(`SELECT project FROM sessions WHERE client = ? AND session_id = ?`, "session_project")
	var old string
	switch err := st.QueryRowContext(ctx, k.client, k.id).Scan(&old); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("rollup session %s: %w", k.id, err)
	case old == project:
		return nil
	}
	st = stmt(`SELECT DISTINCT ts - ts % 3600000 FROM api_turns WHERE session_id = ? AND client = ? AND project = ''`, "session_turn_hours")
	rows, err := st.QueryContext(ctx, k.id, k.client)
	if err != nil {
		return fmt.Errorf("rollup session %s: %w", k.id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h int64
		if err := rows.Scan(&h); err != nil {
			return err
		}
		d.sessionHour(h, k.id)
	}
	return rows.Err()
}
