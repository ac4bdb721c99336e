package query

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ConversationItem is one message of a session's conversation (event.Message), in (time, seq)
// order: a prompt, a reply, thinking, a compaction summary, or a tool call with its result (the
// call's action, joined by its tool use id). An assistant message's first item carries its model
// turn's tokens and cost.
type ConversationItem struct {
	// ID is the message's row: the anchor of a link to it (#m<ID>).
	ID            int64  `json:"id"`
	T             int64  `json:"t"` // ms
	Seq           int64  `json:"seq"`
	Role          string `json:"role"`
	Text          string `json:"text,omitempty"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	Model         string `json:"model,omitempty"`
	AgentID       string `json:"agent_id,omitempty"`
	Sidechain     bool   `json:"sidechain,omitempty"`
	// A tool call's.
	Tool            string `json:"tool,omitempty"`
	ToolUseID       string `json:"tool_use_id,omitempty"`
	Type            string `json:"type,omitempty"` // the action's normalized type (run_command, read_file, ...)
	Success         *bool  `json:"success,omitempty"`
	Error           string `json:"error,omitempty"`
	DurationMs      int64  `json:"duration_ms,omitempty"`
	OutputSize      int64  `json:"output_size,omitempty"`
	Output          string `json:"output,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	// Usage is the model turn the message belongs to, on its first item.
	Usage  *TurnUsage `json:"usage,omitempty"`
	Cursor string     `json:"cursor"`
}

// TurnUsage is one model turn's tokens and dollars: the proxy's figures where it saw the turn,
// else the transcript's.
type TurnUsage struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_creation_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	Reliability      string  `json:"reliability,omitempty"`
	Proxy            bool    `json:"proxy,omitempty"`
}

// ConversationPage is limit items of a conversation; NextCursor continues after them ("" at the
// end).
type ConversationPage struct {
	Items      []ConversationItem `json:"items"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

// ConversationQuery says which part of which session to read.
type ConversationQuery struct {
	Client, SessionID string
	// After is a cursor of a previous page ("" from the start).
	After string
	Limit int // 0: all
	// MaxText and MaxOutput cut texts and tool outputs at that many characters (0: whole).
	MaxText, MaxOutput int
}

// A conversation cursor is its last item's "<ms>.<seq>.<row id>".
var conversationCursorRe = regexp.MustCompile(`^([0-9]{1,15})\.(-?[0-9]{1,19})\.([0-9]{1,18})$`)

// HasConversation reports whether the store has the messages table (a writer that has not
// migrated yet does not): without it every conversation is empty.
func HasConversation(ctx context.Context, db Querier) (bool, error) {
	return hasTable(ctx, db, "messages")
}

// Conversation reads a session's messages in order, with each tool call's result and each model
// turn's usage.
func Conversation(ctx context.Context, db Querier, q ConversationQuery) (*ConversationPage, error) {
	page := &ConversationPage{Items: []ConversationItem{}}
	if ok, err := HasConversation(ctx, db); err != nil || !ok {
		return page, err
	}
	var cts, cseq, cid int64 = -1, 0, 0
	if q.After != "" {
		m := conversationCursorRe.FindStringSubmatch(q.After)
		if m == nil {
			return nil, fmt.Errorf("bad conversation cursor %q", q.After)
		}
		cts, _ = strconv.ParseInt(m[1], 10, 64)
		cseq, _ = strconv.ParseInt(m[2], 10, 64)
		cid, _ = strconv.ParseInt(m[3], 10, 64)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 1 << 30
	}
	big := func(n int) int {
		if n <= 0 {
			return 1 << 30
		}
		return n
	}
	rows, err := db.QueryContext(ctx, `SELECT id, ts, seq, role, substr(unpack(text), 1, :mt), length(unpack(text)) > :mt, message_id,
		model, agent_id, sidechain, tool, tool_use_id
	FROM messages
	WHERE session_id = :sid AND client = :client
	  AND (ts > :cts OR (ts = :cts AND (seq > :cseq OR (seq = :cseq AND id > :cid))))
	ORDER BY ts, seq, id LIMIT :limit`,
		sql.Named("sid", q.SessionID), sql.Named("client", q.Client), sql.Named("cts", cts), sql.Named("cseq", cseq),
		sql.Named("cid", cid), sql.Named("limit", limit+1), sql.Named("mt", big(q.MaxText)))
	if err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var it ConversationItem
		if err := rows.Scan(&it.ID, &it.T, &it.Seq, &it.Role, &it.Text, &it.TextTruncated, &it.MessageID, &it.Model, &it.AgentID,
			&it.Sidechain, &it.Tool, &it.ToolUseID); err != nil {
			return nil, err
		}
		it.Cursor = fmt.Sprintf("%d.%d.%d", it.T, it.Seq, it.ID)
		page.Items = append(page.Items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.NextCursor = page.Items[limit-1].Cursor
	}
	if err := toolResults(ctx, db, q, big(q.MaxOutput), page.Items); err != nil {
		return nil, err
	}
	return page, turnUsage(ctx, db, q, page.Items)
}

// toolResults joins each tool call on the page to its action (the first of the session with its
// tool use id): type, success, error, duration and output, cut at maxOutput characters.
func toolResults(ctx context.Context, db Querier, q ConversationQuery, maxOutput int, items []ConversationItem) error {
	at := map[string][]int{}
	var ids []any
	for i, it := range items {
		if it.ToolUseID == "" {
			continue
		}
		if _, ok := at[it.ToolUseID]; !ok {
			ids = append(ids, it.ToolUseID)
		}
		at[it.ToolUseID] = append(at[it.ToolUseID], i)
	}
	if len(ids) == 0 {
		return nil
	}
	args := append([]any{maxOutput, maxOutput, q.SessionID, q.Client}, ids...)
	rows, err := db.QueryContext(ctx, `SELECT a.tool_use_id, a.type, a.success, a.error, a.duration_ms, a.output_size,
		coalesce(substr(unpack(o.output), 1, ?), ''), coalesce(length(unpack(o.output)) > ?, 0)
		FROM actions a LEFT JOIN action_outputs o ON o.event_id = a.event_id
		WHERE a.session_id = ? AND a.client = ? AND a.tool_use_id IN (`+strings.Repeat("?, ", len(ids)-1)+`?)
		ORDER BY a.id DESC`, args...)
	if err != nil {
		return fmt.Errorf("conversation tool results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r ConversationItem
		var success sql.NullBool
		if err := rows.Scan(&id, &r.Type, &success, &r.Error, &r.DurationMs, &r.OutputSize, &r.Output, &r.OutputTruncated); err != nil {
			return err
		}
		for _, i := range at[id] { // by id descending: the first action of the id is written last
			it := &items[i]
			it.Type, it.Success, it.Error, it.DurationMs, it.OutputSize = r.Type, boolOf(success), r.Error, r.DurationMs, r.OutputSize
			it.Output, it.OutputTruncated = r.Output, r.OutputTruncated
		}
	}
	return rows.Err()
}

// turnUsage puts each model turn's usage on the first item of its message on the page: the
// proxy's figures where it measured the turn, else the transcript's row.
func turnUsage(ctx context.Context, db Querier, q ConversationQuery, items []ConversationItem) error {
	first := map[string]int{}
	var ids []any
	var ph []string
	for i, it := range items {
		if it.MessageID == "" || it.Role == "user" || it.Role == "summary" {
			continue
		}
		if _, ok := first[it.MessageID]; !ok {
			first[it.MessageID] = i
			ids = append(ids, it.MessageID)
			ph = append(ph, "?")
		}
	}
	if len(ids) == 0 {
		return nil
	}
	in := strings.Join(ph, ", ")
	rows, err := db.QueryContext(ctx, `SELECT message_id, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
		cost_usd, reliability, 1 FROM api_turns WHERE message_id IN (`+in+`) AND origin = ''
		UNION ALL
		SELECT message_id, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, reliability, 0
		FROM token_usage WHERE session_id = ? AND message_id IN (`+in+`)`,
		append(append(append([]any{}, ids...), q.SessionID), ids...)...)
	if err != nil {
		return fmt.Errorf("conversation usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var u TurnUsage
		if err := rows.Scan(&id, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.CostUSD,
			&u.Reliability, &u.Proxy); err != nil {
			return err
		}
		it := &items[first[id]]
		if it.Usage == nil || u.Proxy && !it.Usage.Proxy {
			it.Usage = &u
		}
	}
	return rows.Err()
}
