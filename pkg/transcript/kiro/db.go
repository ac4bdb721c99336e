package kiro

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// DBName is the CLI's database in its data directory.
const DBName = "data.sqlite3"

// convState is what the database reader reported of one conversation.
type convState struct {
	U int64  `json:"u"`           // updated_at of the row read (the value's length for the old table)
	N int    `json:"n,omitempty"` // history entries reported
	H string `json:"h,omitempty"` // key of entry N-1
	S bool   `json:"s,omitempty"` // started reported
	C string `json:"c,omitempty"` // hash of the compaction summary reported
}

// dbState is the database reader's State: per conversation, what was reported.
type dbState struct {
	Convs map[string]convState `json:"convs,omitempty"`
}

func (s dbState) clone() dbState {
	s.Convs = maps.Clone(s.Convs)
	return s
}

// DBParser reads a CLI database (a transcript.StreamPoller).
type DBParser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     dbState
	stats  transcript.Stats
}

var (
	_ transcript.Parser       = (*DBParser)(nil)
	_ transcript.StreamPoller = (*DBParser)(nil)
)

func newDBParser(src transcript.Source, raw []byte, prices func() *pricing.Table) *DBParser {
	p := &DBParser{src: src, prices: prices}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *DBParser) Record(int64, []byte) ([]event.Event, error) {
	p.stats.Count(0, transcript.ErrMalformed)
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns what was reported, as JSON.
func (p *DBParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the conversations read (Lines) and those that did not decode (Malformed).
func (p *DBParser) Stats() transcript.Stats { return p.stats.Clone() }

// Poll reads the conversations changed since the last pass, all at once.
func (p *DBParser) Poll(ctx context.Context) ([]event.Event, error) {
	return sqliteread.Collect(ctx, p.PollEach)
}

// PollEach reads like Poll and hands the events over at most max at a time, one conversation's
// value in memory at once. A batch is handed over only while the database is the one being read
// (sqliteread.Unchanged); the state is committed when the pass ends without an error.
func (p *DBParser) PollEach(ctx context.Context, max int, emit func([]event.Event) error) error {
	return sqliteread.PassEach(ctx, p.src.Path, &p.st, dbState.clone, &p.stats, max, emit, p.read)
}

// convRow is a conversation's newest row, as listed.
type convRow struct {
	id, key string
	updated int64
}

// read lists the conversations and reads the changed ones, in one read transaction; st loses the
// conversations that are gone.
func (p *DBParser) read(ctx context.Context, db *sql.DB, st *dbState, b *sqliteread.Batcher) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v2, err := sqliteread.Columns(ctx, tx, "conversations_v2")
	if err != nil {
		return err
	}
	legacy := len(v2) == 0
	var list, get string
	if legacy {
		cols, err := sqliteread.Columns(ctx, tx, "conversations")
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return nil // a database of the CLI's that holds no conversation table yet
		}
		// The table before migration 8: one conversation per directory, no times.
		list = `SELECT CAST(key AS TEXT), CAST(key AS TEXT), length(value) FROM conversations`
		get = `SELECT CAST(value AS TEXT), 0 FROM conversations WHERE key = ?`
	} else {
		list = `SELECT CAST(conversation_id AS TEXT), CAST(key AS TEXT), updated_at FROM conversations_v2`
		get = `SELECT CAST(value AS TEXT), created_at FROM conversations_v2 WHERE conversation_id = ? AND key = ?`
	}
	q, err := tx.QueryContext(ctx, list)
	if err != nil {
		return err
	}
	newest := map[string]convRow{}
	for q.Next() {
		var r convRow
		var upd sql.NullInt64
		if err := q.Scan(&r.id, &r.key, &upd); err != nil {
			q.Close()
			return err
		}
		r.updated = upd.Int64
		if old, ok := newest[r.id]; !ok || r.updated > old.updated || (r.updated == old.updated && r.key > old.key) {
			newest[r.id] = r
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return err
	}
	for id := range st.Convs {
		if _, ok := newest[id]; !ok {
			delete(st.Convs, id)
		}
	}
	var changed []convRow
	for id, r := range newest {
		if cs, ok := st.Convs[id]; !ok || cs.U != r.updated {
			changed = append(changed, r)
		}
	}
	slices.SortFunc(changed, func(a, b convRow) int {
		if a.updated != b.updated {
			return cmpInt(a.updated, b.updated)
		}
		return strings.Compare(a.id, b.id)
	})
	stmt, err := tx.PrepareContext(ctx, get)
	if err != nil {
		return err
	}
	defer stmt.Close()
	if st.Convs == nil {
		st.Convs = map[string]convState{}
	}
	for _, r := range changed {
		var value string
		var created sql.NullInt64
		var row *sql.Row
		if legacy {
			row = stmt.QueryRowContext(ctx, r.key)
		} else {
			row = stmt.QueryRowContext(ctx, r.id, r.key)
		}
		if err := row.Scan(&value, &created); err == sql.ErrNoRows {
			continue // deleted since the listing
		} else if err != nil {
			return err
		}
		p.stats.Lines++
		prev := st.Convs[r.id]
		evs, next, err := p.conversation(r, []byte(value), created.Int64, prev)
		if err != nil {
			p.stats.Malformed++
			prev.U = r.updated // read again only when it changes
			next = prev
		}
		st.Convs[r.id] = next
		if err := b.Add(evs...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// v1Conv is a conversation's value: the CLI's ConversationState as JSON.
type v1Conv struct {
	ConversationID string            `json:"conversation_id"`
	History        []json.RawMessage `json:"history"`
	ModelInfo      *struct {
		ModelID string `json:"model_id"`
	} `json:"model_info"`
	Model         json.RawMessage `json:"model"`
	LatestSummary json.RawMessage `json:"latest_summary"`
}

// v1Entry is a history entry: {user, assistant, request_metadata} (or, in the oldest releases, a
// [user, assistant] pair).
type v1Entry struct {
	User     *v1User        `json:"user"`
	Asst     *v1Assistant   `json:"assistant"`
	Metadata *v1RequestMeta `json:"request_metadata"`
}

type v1User struct {
	Content   map[string]json.RawMessage `json:"content"`
	Timestamp json.RawMessage            `json:"timestamp"`
	Env       *struct {
		State *struct {
			Cwd string `json:"current_working_directory"`
		} `json:"env_state"`
	} `json:"env_context"`
}

type v1Assistant struct {
	Response *v1Reply `json:"Response"`
	ToolUse  *v1Reply `json:"ToolUse"`
}

type v1Reply struct {
	MessageID string      `json:"message_id"`
	Content   string      `json:"content"`
	ToolUses  []v1ToolUse `json:"tool_uses"`
	Thinking  *struct {
		Text string `json:"text"`
	} `json:"thinking"`
}

type v1ToolUse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	OrigName string          `json:"orig_name"`
	Args     json.RawMessage `json:"args"`
}

type v1RequestMeta struct {
	MessageID string `json:"message_id"`
	RequestID string `json:"request_id"`
	Start     int64  `json:"request_start_timestamp_ms"`
	End       int64  `json:"stream_end_timestamp_ms"`
	ModelID   string `json:"model_id"`
}

type v1Results struct {
	Prompt  string         `json:"prompt"`
	Results []v1ToolResult `json:"tool_use_results"`
}

type v1ToolResult struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Status    string          `json:"status"`
}

// cancelledPrompt is the text the CLI puts in place of a prompt when the user interrupts a tool.
const cancelledPrompt = "The user interrupted the tool execution."

func (e *v1Entry) UnmarshalJSON(b []byte) error {
	type plain v1Entry
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var pair []json.RawMessage
		if err := json.Unmarshal(b, &pair); err != nil {
			return err
		}
		*e = v1Entry{}
		if len(pair) > 0 {
			_ = json.Unmarshal(pair[0], &e.User)
		}
		if len(pair) > 1 {
			_ = json.Unmarshal(pair[1], &e.Asst)
		}
		return nil
	}
	return json.Unmarshal(b, (*plain)(e))
}

func (e *v1Entry) reply() *v1Reply {
	if e.Asst == nil {
		return nil
	}
	if e.Asst.ToolUse != nil {
		return e.Asst.ToolUse
	}
	return e.Asst.Response
}

// key is an entry's key: its assistant message's id, else its place.
func (e *v1Entry) key(i int) string {
	if r := e.reply(); r != nil && r.MessageID != "" {
		return keyOf(r.MessageID)
	}
	if e.Metadata != nil && e.Metadata.MessageID != "" {
		return keyOf(e.Metadata.MessageID)
	}
	return "#" + strconv.Itoa(i)
}

// conversation turns a changed conversation into events.
func (p *DBParser) conversation(r convRow, value []byte, created int64, prev convState) ([]event.Event, convState, error) {
	var c v1Conv
	if err := transcript.DecodeDocument(value, &c); err != nil {
		return nil, prev, err
	}
	entries := make([]v1Entry, len(c.History))
	for i, raw := range c.History {
		_ = json.Unmarshal(raw, &entries[i]) // an entry that does not decode is read empty
	}
	sc := scope{path: p.src.Path, session: transcript.FirstNonEmpty(c.ConversationID, r.id)}
	sc.setCwd(r.key)
	for i := 0; i < len(entries) && sc.cwd == ""; i++ {
		if u := entries[i].User; u != nil && u.Env != nil && u.Env.State != nil {
			sc.setCwd(u.Env.State.Cwd)
		}
	}
	next := prev
	next.U = r.updated
	start := prev.N
	if start > len(entries) || (start > 0 && entries[start-1].key(start-1) != prev.H) {
		start = 0 // the history was cut (a compaction, /clear) or replaced: read again from its start
	}
	convModel := ""
	if c.ModelInfo != nil {
		convModel = strings.TrimSpace(c.ModelInfo.ModelID)
	}
	if convModel == "" {
		var s string
		if json.Unmarshal(c.Model, &s) == nil {
			convModel = strings.TrimSpace(s)
		}
	}
	// Every call of the history, and the entry that made it: a result names its call.
	calls := map[string]int{}
	uses := map[string]*v1ToolUse{}
	results := map[string]*v1ToolResult{}
	for i := range entries {
		if rp := entries[i].reply(); rp != nil {
			for j := range rp.ToolUses {
				if id := rp.ToolUses[j].ID; id != "" {
					calls[id], uses[id] = i, &rp.ToolUses[j]
				}
			}
		}
		for _, res := range entries[i].results() {
			if res.ToolUseID != "" {
				results[res.ToolUseID] = res
			}
		}
	}
	updated, hasUpdated := msTime(r.updated)
	var evs []event.Event
	var models []string
	t, _ := msTime(created)
	for i := range entries {
		e := &entries[i]
		ut, ok := time.Time{}, false
		if e.User != nil {
			ut, ok = anyTime(e.User.Timestamp)
		}
		if !ok && e.Metadata != nil {
			ut, ok = msTime(e.Metadata.Start)
		}
		if !ok && !t.IsZero() {
			ut, ok = t, true
		}
		if !ok && hasUpdated {
			ut, ok = updated, true
		}
		if !ok {
			continue // no time for it (nor for any before it)
		}
		at := ut
		if e.Metadata != nil {
			if tt, ok := msTime(e.Metadata.End); ok && !tt.Before(ut) {
				at = tt
			}
		}
		t = at
		if !next.S {
			next.S = true
			st := ut
			if ct, ok := msTime(created); ok && ct.Before(st) {
				st = ct
			}
			evs = append(evs, sc.sessionEvent(event.SessionStarted, "", "", st))
		}
		model := convModel
		if e.Metadata != nil && e.Metadata.ModelID != "" {
			model = e.Metadata.ModelID
		}
		if i < start {
			continue
		}
		key := e.key(i)
		seq := int64(i) * 64
		evs = append(evs, p.entry(&sc, e, key, seq, ut, at, model, uses, results, calls, i, start, &models)...)
	}
	if n := len(entries); n > 0 {
		next.N, next.H = n, entries[n-1].key(n-1)
	} else {
		next.N, next.H = 0, ""
	}
	if text := summaryText(c.LatestSummary); text != "" && hashText(text) != prev.C && hasUpdated {
		next.C = hashText(text)
		evs = append(evs, sc.summary(text, int64(len(entries))*64, updated)...)
	}
	return evs, next, nil
}

// results are the tool results an entry's user message carries.
func (e *v1Entry) results() []*v1ToolResult {
	if e.User == nil {
		return nil
	}
	var out []*v1ToolResult
	for _, k := range []string{"ToolUseResults", "CancelledToolUses"} {
		var r v1Results
		if raw := e.User.Content[k]; raw != nil && json.Unmarshal(raw, &r) == nil {
			for j := range r.Results {
				out = append(out, &r.Results[j])
			}
		}
	}
	return out
}

// entry turns one history entry into events: its prompt or the results it carries, then the
// reply, its thinking and its tool calls.
func (p *DBParser) entry(sc *scope, e *v1Entry, key string, seq int64, ut, at time.Time, model string,
	uses map[string]*v1ToolUse, results map[string]*v1ToolResult, calls map[string]int, i, start int, models *[]string) []event.Event {
	var evs []event.Event
	if e.User != nil {
		var prompt struct {
			Prompt string `json:"prompt"`
		}
		if raw := e.User.Content["Prompt"]; raw != nil && json.Unmarshal(raw, &prompt) == nil {
			evs = append(evs, sc.prompt("u:"+key, seq, ut, prompt.Prompt, "", false)...)
		}
		var cancelled v1Results
		if raw := e.User.Content["CancelledToolUses"]; raw != nil && json.Unmarshal(raw, &cancelled) == nil &&
			strings.TrimSpace(cancelled.Prompt) != cancelledPrompt {
			evs = append(evs, sc.prompt("u:"+key, seq, ut, cancelled.Prompt, "", false)...)
		}
		// Results whose call was reported in an earlier pass: the call's action again, with them.
		for _, res := range e.results() {
			if ci, ok := calls[res.ToolUseID]; ok && ci >= start && ci < i {
				continue // reported with its call in this pass
			}
			c := v1Call(uses[res.ToolUseID], res.ToolUseID, "", model)
			c.Result = v1Outcome(res)
			evs = append(evs, sc.action(c, ut))
		}
	}
	rp := e.reply()
	if rp == nil {
		return evs
	}
	msgID := keyOf(rp.MessageID)
	evs = append(evs, sc.modelEvent(models, model, at)...)
	if rp.Thinking != nil {
		evs = append(evs, sc.textMessage(event.RoleThinking, "a:"+key, 0, seq+1, at, rp.Thinking.Text, msgID, model)...)
	}
	evs = append(evs, sc.textMessage(event.RoleAssistant, "a:"+key, 1, seq+2, at, rp.Content, msgID, model)...)
	for j := range rp.ToolUses {
		tu := &rp.ToolUses[j]
		if tu.ID == "" {
			continue
		}
		c := v1Call(tu, tu.ID, msgID, model)
		if res := results[tu.ID]; res != nil {
			c.Result = v1Outcome(res)
		}
		ev := sc.action(c, at)
		part := min(j+2, maxPart)
		evs = append(evs, ev, sc.callMessage(c, "a:"+key, part, seq+int64(part), at, ev.Action.Target))
	}
	return evs
}

// v1Call is the call of a tool use (nil: a result whose call is not in the history). A tool the
// model called under a name the CLI did not offer is "dummy" with the name it used in orig_name.
func v1Call(tu *v1ToolUse, id, msgID, model string) *call {
	c := &call{ID: id, Msg: msgID, Model: model}
	if tu != nil {
		c.Name, c.Input = tu.Name, tu.Args
		if (c.Name == "" || c.Name == "dummy") && tu.OrigName != "" {
			c.Name = tu.OrigName
		}
	}
	return c
}

func v1Outcome(res *v1ToolResult) *result {
	out, failed, stderr := resultText(res.Content)
	r := &result{Known: true, OK: !failed && !strings.EqualFold(res.Status, "error"), Output: out, Size: int64(len(out))}
	if !r.OK {
		r.Error = transcript.FirstNonEmpty(stderr, out)
	}
	return r
}

// summaryText reads latest_summary: a string, or a list whose first element is one.
func summaryText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 && json.Unmarshal(list[0], &s) == nil {
		return s
	}
	return ""
}
