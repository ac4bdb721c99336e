package query

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
)

// TimelineItem is one step of a session: an action (a prompt, a tool call with its result) or a
// model turn's usage.
type TimelineItem struct {
	Kind   string `json:"kind"` // action or usage
	Cursor string `json:"cursor"`
	T      int64  `json:"t"` // ms
	// Actions.
	Type            string `json:"type,omitempty"`
	Tool            string `json:"tool,omitempty"`
	Target          string `json:"target,omitempty"`
	TargetTruncated bool   `json:"target_truncated,omitempty"`
	Success         *bool  `json:"success,omitempty"`
	Error           string `json:"error,omitempty"`
	DurationMs      int64  `json:"duration_ms,omitempty"`
	OutputSize      int64  `json:"output_size,omitempty"`
	Output          string `json:"output,omitempty"` // the stored output's first OutputPreview characters
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	AgentID         string `json:"agent_id,omitempty"`
	Sidechain       bool   `json:"sidechain,omitempty"`
	Freshness       string `json:"freshness,omitempty"`
	ToolUseID       string `json:"tool_use_id,omitempty"`
	// Both.
	Model     string `json:"model,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	// Usage.
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_creation_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	Reliability      string  `json:"reliability,omitempty"`
}

// The characters of a target, an error or an output that lists and timelines show.
const (
	TargetPreview = 2000
	OutputPreview = 4000
)

// A timeline cursor is the last item's "<ms>.<0 action | 1 usage>.<row id>"; the next page
// starts after it in (time, kind, id) order.
var timelineCursorRe = regexp.MustCompile(`^([0-9]{1,15})\.([01])\.([0-9]{1,18})$`)

// TimelineCursor is where a timeline page starts: after this (time, kind, id).
type TimelineCursor struct{ TS, Kind, ID int64 }

// TimelineStart is the cursor of a timeline's first page.
var TimelineStart = TimelineCursor{-1, 0, 0}

// ParseTimelineCursor reads an item's Cursor; ok is false when v is not one.
func ParseTimelineCursor(v string) (c TimelineCursor, ok bool) {
	m := timelineCursorRe.FindStringSubmatch(v)
	if m == nil {
		return TimelineCursor{}, false
	}
	ts, _ := strconv.ParseInt(m[1], 10, 64)
	k, _ := strconv.ParseInt(m[2], 10, 64)
	id, _ := strconv.ParseInt(m[3], 10, 64)
	return TimelineCursor{ts, k, id}, true
}

// afterCursor is the condition "(ts, kind, id) > cursor" for the rows of one kind; p prefixes the
// columns ("a." for an aliased table).
func afterCursor(p string, kind int64) string {
	return fmt.Sprintf("(%[1]sts > :cts OR (%[1]sts = :cts AND (%[2]d > :ck OR (%[2]d = :ck AND %[1]sid > :cid))))", p, kind)
}

// TimelinePage is limit items of a timeline; NextCursor continues after them, and is empty at
// the end.
type TimelinePage struct {
	Items      []TimelineItem
	NextCursor string
}

// Timeline reads a session's actions and model turns in time order, limit of them after cur.
// Targets and errors are cut at TargetPreview characters, outputs at OutputPreview.
func Timeline(ctx context.Context, db Querier, client, id string, cur TimelineCursor, limit int) (*TimelinePage, error) {
	args := []any{sql.Named("sid", id), sql.Named("client", client),
		sql.Named("cts", cur.TS), sql.Named("ck", cur.Kind), sql.Named("cid", cur.ID), sql.Named("limit", limit+1),
		sql.Named("tp", TargetPreview), sql.Named("op", OutputPreview)}
	stmt := `
SELECT * FROM (
  SELECT a.ts, 0 AS k, a.id, a.type, a.tool, substr(a.target, 1, :tp), length(a.target) > :tp, a.success, substr(a.error, 1, :tp),
         a.duration_ms, a.output_size, coalesce(substr(unpack(o.output), 1, :op), ''), coalesce(length(unpack(o.output)) > :op, 0),
         a.agent_id, a.sidechain, a.freshness, a.tool_use_id, a.model, a.message_id, 0, 0, 0, 0, 0.0, ''
    FROM actions a LEFT JOIN action_outputs o ON o.event_id = a.event_id
   WHERE a.session_id = :sid AND a.client = :client AND ` + afterCursor("a.", 0) + `
  UNION ALL
  SELECT ts, 1, id, '', '', '', 0, NULL, '', 0, 0, '', 0, agent_id, 0, '', '', model, message_id,
         input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, reliability
    FROM token_usage
   WHERE session_id = :sid AND client = :client AND ` + afterCursor("", 1) + `
) ORDER BY 1, 2, 3 LIMIT :limit`
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []TimelineItem{}
	for rows.Next() {
		var it TimelineItem
		var kind, rowID int64
		var success sql.NullBool
		var side, ttrunc, otrunc bool
		if err := rows.Scan(&it.T, &kind, &rowID, &it.Type, &it.Tool, &it.Target, &ttrunc, &success, &it.Error,
			&it.DurationMs, &it.OutputSize, &it.Output, &otrunc, &it.AgentID, &side, &it.Freshness, &it.ToolUseID,
			&it.Model, &it.MessageID, &it.InputTokens, &it.OutputTokens, &it.CacheReadTokens, &it.CacheWriteTokens,
			&it.CostUSD, &it.Reliability); err != nil {
			return nil, err
		}
		it.Kind = "action"
		if kind == 1 {
			it.Kind = "usage"
		}
		it.Success = boolOf(success)
		it.Sidechain, it.TargetTruncated, it.OutputTruncated = side, ttrunc, otrunc
		it.Cursor = fmt.Sprintf("%d.%d.%d", it.T, kind, rowID)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	page := &TimelinePage{Items: items}
	if len(items) > limit {
		page.Items = items[:limit]
		page.NextCursor = page.Items[limit-1].Cursor
	}
	return page, nil
}
