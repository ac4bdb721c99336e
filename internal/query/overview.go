package query

import (
	"database/sql"
	"strings"
)

// sqlConds builds a WHERE clause from conditions and their named arguments.
type sqlConds struct {
	parts []string
	args  []any
}

func (c *sqlConds) add(cond string, args ...any) {
	c.parts = append(c.parts, cond)
	c.args = append(c.args, args...)
}

func (c *sqlConds) sql() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

// envelopeConds holds f's conditions on a table with the envelope columns (project, client,
// member), its time column named tsCol: since, until, project, client and member (not the
// session). A member filter needs
// the table's member column: sessions, actions, token_usage and api_turns have one, the rollups do
// not.
func envelopeConds(f Filter, tsCol string) *sqlConds {
	c := &sqlConds{}
	if ms := sinceMs(f); ms > 0 {
		c.add(tsCol+" >= :since", sql.Named("since", ms))
	}
	if !f.Until.IsZero() {
		c.add(tsCol+" < :until", sql.Named("until", f.Until.UnixMilli()))
	}
	if f.Project != "" {
		c.add("project = :project", sql.Named("project", f.Project))
	}
	if f.Client != "" {
		c.add("client = :client", sql.Named("client", f.Client))
	}
	if f.Member != "" {
		c.add("member = :member", sql.Named("member", f.Member))
	}
	return c
}

// sinceMs is f's start in ms, 0 for all time.
func sinceMs(f Filter) int64 {
	if f.Since.IsZero() {
		return 0
	}
	return f.Since.UnixMilli()
}
