package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/observerhq/observer/pkg/store"
)

// The kinds of text Search looks through.
const (
	SearchPrompt   = "prompt"   // what the user typed
	SearchReply    = "reply"    // the assistant's replies
	SearchThinking = "thinking" // its reasoning, where recorded
	SearchCommand  = "command"  // a tool call's input: the command, the file path, the pattern
	SearchSummary  = "summary"  // compaction summaries
	SearchOutput   = "output"   // tool outputs
	SearchTitle    = "title"    // session titles
)

// SearchKinds lists them, in the order help text names them.
var SearchKinds = []string{SearchPrompt, SearchReply, SearchThinking, SearchCommand, SearchSummary, SearchOutput, SearchTitle}

// roleKind is the kind of a message of each role.
var roleKind = map[string]string{"user": SearchPrompt, "assistant": SearchReply, "thinking": SearchThinking,
	"tool_call": SearchCommand, "summary": SearchSummary}

// SearchQuery is a search over everything the store holds of the conversations.
type SearchQuery struct {
	// Text is what to look for: words (all of them, in any order, whole or as the start of a word
	// with a trailing *), "quoted phrases", OR between alternatives and NOT before what must not
	// be there. Case and accents do not matter.
	Text string
	Filter
	// Kinds keeps matches of these kinds (SearchKinds); empty is every kind.
	Kinds []string
	// Newest orders sessions by their latest match; otherwise best match first (BM25).
	Newest bool
	// Limit is the most sessions (0: 20); PerSession the most matches shown per session (0: 3).
	Limit, PerSession int
	// Scan bounds the matches read from each full-text index (0: SearchScan).
	Scan int
}

// SearchResult is the sessions that match, best (or newest) first.
type SearchResult struct {
	Query    string          `json:"query"`
	Sessions []SearchSession `json:"sessions"`
	// Capped says the matches looked at were capped (SearchQuery.Scan per index): a rarer
	// wording, or a filter, finds the rest.
	Capped bool `json:"capped,omitempty"`
}

// SearchSession is one session and its matching messages.
type SearchSession struct {
	Session
	Score   float64       `json:"score"`    // the best match's (lower is better, BM25 as FTS5 gives it)
	LastHit int64         `json:"last_hit"` // ms of the newest match
	Hits    int           `json:"hits"`     // matches in the session
	Matches []SearchMatch `json:"matches"`  // the best PerSession of them
}

// SearchMatch is one matching message (or output, or title) with the words highlighted.
type SearchMatch struct {
	Kind string `json:"kind"`
	// MessageID is the message's row (the conversation's #m<id> anchor); 0 for an output or a
	// title. ActionID is an output's action row.
	MessageID int64   `json:"message_id,omitempty"`
	ActionID  int64   `json:"action_id,omitempty"`
	T         int64   `json:"t"`
	Score     float64 `json:"score"`
	// Snippet is the text around the match; Highlights are the [start, end) byte ranges of the
	// matched words in it.
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights,omitempty"`
	// row is the match's row in its full-text index (its snippet is read from there).
	row int64
}

// SearchScan bounds the matches read from each full-text index for one search.
const SearchScan = 500

// Private-use characters mark a match in FTS5's snippets; they are taken out, as Highlights.
const markOpen, markClose = "\uE000", "\uE001"

// ErrBadSearch wraps a search the index cannot run (an empty one, a lone operator).
var ErrBadSearch = errors.New("bad search")

// FTSQuery turns what a person typed into an FTS5 query: each word quoted (so that a path, a
// flag or a word like "and" is looked for as it is), a trailing * kept as a prefix search,
// "phrases" kept, OR and NOT kept as operators. It fails when nothing is left to look for.
func FTSQuery(s string) (string, error) {
	var parts []string
	terms := 0
	rs := []rune(s)
	for i := 0; i < len(rs); {
		switch {
		case unicode.IsSpace(rs[i]):
			i++
		case rs[i] == '"':
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				j++
			}
			if phrase := strings.TrimSpace(string(rs[i+1 : min(j, len(rs))])); phrase != "" {
				parts = append(parts, quote(phrase))
				terms++
			}
			i = j + 1
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && rs[j] != '"' {
				j++
			}
			w := string(rs[i:j])
			i = j
			switch {
			case w == "OR" || w == "NOT":
				parts = append(parts, w)
			case strings.HasSuffix(w, "*") && len(strings.TrimRight(w, "*")) > 0:
				parts = append(parts, quote(strings.TrimRight(w, "*"))+"*")
				terms++
			case strings.Trim(w, "*") != "":
				parts = append(parts, quote(strings.Trim(w, "*")))
				terms++
			}
		}
	}
	// An operator needs a term on each side (NOT: before a term, after one).
	for len(parts) > 0 && (parts[0] == "OR" || parts[0] == "NOT") {
		parts = parts[1:]
	}
	for len(parts) > 0 && (parts[len(parts)-1] == "OR" || parts[len(parts)-1] == "NOT") {
		parts = parts[:len(parts)-1]
	}
	for i := 1; i < len(parts); i++ {
		if (parts[i] == "OR" || parts[i] == "NOT") && (parts[i-1] == "OR" || parts[i-1] == "NOT") {
			parts = append(parts[:i], parts[i+1:]...)
			i--
		}
	}
	if terms == 0 || len(parts) == 0 {
		return "", fmt.Errorf("%w: nothing to look for in %q", ErrBadSearch, s)
	}
	return strings.Join(parts, " "), nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Search looks through the conversations' messages, the tool outputs and the session titles.
func Search(ctx context.Context, db Querier, q SearchQuery) (*SearchResult, error) {
	match, err := FTSQuery(q.Text)
	if err != nil {
		return nil, err
	}
	for _, k := range q.Kinds {
		if !slices.Contains(SearchKinds, k) {
			return nil, fmt.Errorf("%w: kind %q: choose among %s", ErrBadSearch, k, strings.Join(SearchKinds, ", "))
		}
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	if q.PerSession <= 0 {
		q.PerSession = 3
	}
	if q.Scan <= 0 {
		q.Scan = SearchScan
	}
	want := func(k string) bool { return len(q.Kinds) == 0 || slices.Contains(q.Kinds, k) }
	res := &SearchResult{Query: q.Text, Sessions: []SearchSession{}}
	type hit struct {
		key store.SessionKey
		m   SearchMatch
	}
	var hits []hit
	collect := func(stmt string, args []any, kindOf func(string) string) error {
		rows, err := db.QueryContext(ctx, stmt, args...)
		if err != nil {
			if strings.Contains(err.Error(), "fts5") {
				return fmt.Errorf("%w: %v", ErrBadSearch, err)
			}
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var h hit
			var role string
			var id int64
			if err := rows.Scan(&id, &h.m.T, &h.key.Client, &h.key.SessionID, &role, &h.m.Score, &h.m.row); err != nil {
				return err
			}
			h.m.Kind = kindOf(role)
			if h.m.Kind == SearchOutput {
				h.m.ActionID = id
			} else {
				h.m.MessageID = id
			}
			hits = append(hits, h)
			n++
		}
		if n == q.Scan {
			res.Capped = true
		}
		return rows.Err()
	}
	conds := func(p string) (string, []any) {
		var c []string
		var args []any
		if ms := sinceMs(q.Filter); ms > 0 {
			c, args = append(c, p+"ts >= ?"), append(args, ms)
		}
		if !q.Until.IsZero() {
			c, args = append(c, p+"ts < ?"), append(args, q.Until.UnixMilli())
		}
		for _, f := range [][2]string{{"project", q.Project}, {"client", q.Client}, {"session_id", q.SessionID}, {"member", q.Member}} {
			if f[1] != "" {
				c, args = append(c, p+f[0]+" = ?"), append(args, f[1])
			}
		}
		if len(c) == 0 {
			return "", nil
		}
		return " AND " + strings.Join(c, " AND "), args
	}
	// matches is the statement reading the best (or newest) q.Scan matches of an index, joined to
	// their rows (cols, from join; rowCol is the match's row in the index) and narrowed by where; its arguments are the query, where's and
	// q.Scan. Best first with nothing to narrow, the index ranks its own matches (FTS5's ORDER BY
	// rank LIMIT, twice as fast as ranking them through the join), then the rows are read.
	matches := func(index, cols, join, rowCol, tsCol, where string) string {
		if where == "" && !q.Newest {
			return `SELECT ` + cols + `, f.rank, ` + strings.ReplaceAll(rowCol, index+".rowid", "f.rowid") + ` FROM (SELECT rowid, rank FROM ` + index + ` WHERE ` + index + ` MATCH ? ORDER BY rank LIMIT ?) f
				JOIN ` + strings.ReplaceAll(join, index+".rowid", "f.rowid") + ` ORDER BY f.rank`
		}
		order := "score"
		if q.Newest {
			order = tsCol + " DESC"
		}
		return `SELECT ` + cols + `, bm25(` + index + `) AS score, ` + rowCol + ` FROM ` + index + ` JOIN ` + join + `
			WHERE ` + index + ` MATCH ?` + where + ` ORDER BY ` + order + ` LIMIT ?`
	}
	if has, err := HasConversation(ctx, db); err != nil {
		return nil, err
	} else if has {
		var roles []string
		for role, k := range roleKind {
			if want(k) {
				roles = append(roles, "'"+role+"'")
			}
		}
		if len(roles) > 0 {
			slices.Sort(roles)
			where, args := conds("m.")
			if len(roles) < len(roleKind) {
				where = " AND m.role IN (" + strings.Join(roles, ", ") + ")" + where
			}
			stmt := matches("message_fts", "m.id, m.ts, m.client, m.session_id, m.role", "messages m ON m.id = message_fts.rowid",
				"m.id", "m.ts", where)
			if err := collect(stmt, append(append([]any{match}, args...), q.Scan), func(r string) string { return roleKind[r] }); err != nil {
				return nil, err
			}
		}
	}
	if want(SearchOutput) {
		where, args := conds("a.")
		stmt := matches("tool_output_fts", "a.id, a.ts, a.client, a.session_id, ''",
			"action_outputs o ON o.rowid = tool_output_fts.rowid JOIN actions a ON a.event_id = o.event_id", "o.rowid", "a.ts", where)
		if err := collect(stmt, append(append([]any{match}, args...), q.Scan), func(string) string { return SearchOutput }); err != nil {
			return nil, err
		}
	}
	if want(SearchTitle) {
		th, err := titleHits(ctx, db, q)
		if err != nil {
			return nil, err
		}
		for _, t := range th {
			hits = append(hits, hit{key: store.SessionKey{Client: t.Client, SessionID: t.SessionID},
				m: SearchMatch{Kind: SearchTitle, T: t.LastSeen, Snippet: t.Title}})
		}
	}
	// Sessions: best match (or newest) first; within a session its best matches.
	bySession := map[store.SessionKey]*SearchSession{}
	var keys []store.SessionKey
	for _, h := range hits {
		s := bySession[h.key]
		if s == nil {
			s = &SearchSession{Score: h.m.Score, LastHit: h.m.T}
			bySession[h.key] = s
			keys = append(keys, h.key)
		}
		s.Hits++
		s.Score, s.LastHit = min(s.Score, h.m.Score), max(s.LastHit, h.m.T)
		s.Matches = append(s.Matches, h.m)
	}
	slices.SortFunc(keys, func(a, b store.SessionKey) int {
		sa, sb := bySession[a], bySession[b]
		if q.Newest && sa.LastHit != sb.LastHit {
			return cmpInt64(sb.LastHit, sa.LastHit)
		}
		if sa.Score != sb.Score {
			if sa.Score < sb.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	if len(keys) > q.Limit {
		keys = keys[:q.Limit]
	}
	sessions, err := SessionsOf(ctx, db, Filter{}, keys)
	if err != nil {
		return nil, err
	}
	known := map[store.SessionKey]Session{}
	for _, s := range sessions {
		known[store.SessionKey{Client: s.Client, SessionID: s.SessionID}] = s
	}
	for _, k := range keys {
		s := bySession[k]
		s.Session = known[k]
		s.Session.Client, s.Session.SessionID = k.Client, k.SessionID
		slices.SortStableFunc(s.Matches, func(a, b SearchMatch) int {
			if q.Newest {
				return cmpInt64(b.T, a.T)
			}
			if a.Score != b.Score {
				if a.Score < b.Score {
					return -1
				}
				return 1
			}
			return cmpInt64(a.T, b.T)
		})
		if len(s.Matches) > q.PerSession {
			s.Matches = s.Matches[:q.PerSession]
		}
		res.Sessions = append(res.Sessions, *s)
	}
	// Snippets only for the matches shown: FTS5 builds one by reading the text again, which for
	// every match looked at would cost more than the search.
	return res, snippets(ctx, db, match, res.Sessions)
}

// snippets fills in the snippet of each message and output match of sessions.
func snippets(ctx context.Context, db Querier, match string, sessions []SearchSession) error {
	byIndex := map[string][]*SearchMatch{}
	for i := range sessions {
		for j := range sessions[i].Matches {
			m := &sessions[i].Matches[j]
			switch {
			case m.MessageID != 0:
				byIndex["message_fts"] = append(byIndex["message_fts"], m)
			case m.ActionID != 0:
				byIndex["tool_output_fts"] = append(byIndex["tool_output_fts"], m)
			}
		}
	}
	for index, ms := range byIndex {
		rowOf := map[int64][]*SearchMatch{}
		args := []any{match}
		for _, m := range ms {
			if rowOf[m.row] == nil {
				args = append(args, m.row)
			}
			rowOf[m.row] = append(rowOf[m.row], m)
		}
		rows, err := db.QueryContext(ctx, `SELECT rowid, snippet(`+index+`, 0, '`+markOpen+`', '`+markClose+`', '…', 24)
			FROM `+index+` WHERE `+index+` MATCH ? AND rowid IN (`+strings.Repeat("?, ", len(args)-2)+`?)`, args...)
		if err != nil {
			return fmt.Errorf("search snippets: %w", err)
		}
		for rows.Next() {
			var id int64
			var snip string
			if err := rows.Scan(&id, &snip); err != nil {
				rows.Close()
				return err
			}
			for _, m := range rowOf[id] {
				m.Snippet, m.Highlights = marks(snip)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// titleHits are the sessions whose title holds every plain word of q.Text (case-insensitively),
// within q's filter.
func titleHits(ctx context.Context, db Querier, q SearchQuery) ([]Session, error) {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(q.Text)) {
		w = strings.Trim(w, `"*`)
		if w != "" && w != "or" && w != "not" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return nil, nil
	}
	f := q.Filter
	c := filterClause(f, "last_seen")
	for i, w := range words {
		name := fmt.Sprintf("w%d", i)
		c.add("instr(lower(title), :"+name+") > 0", sql.Named(name, w))
	}
	return querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions"+c.sql()+" ORDER BY last_seen DESC LIMIT 200", c.args...)
}

// marks takes the match marks out of a snippet, returning the plain text and where they were.
func marks(s string) (string, [][2]int) {
	var b strings.Builder
	var hl [][2]int
	start := -1
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], markOpen):
			start = b.Len()
			i += len(markOpen)
		case strings.HasPrefix(s[i:], markClose):
			if start >= 0 {
				hl = append(hl, [2]int{start, b.Len()})
			}
			start = -1
			i += len(markClose)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), hl
}
