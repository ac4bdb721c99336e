package mcpserver

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

type conversationHit struct {
	Sess  string   `json:"sess"`
	Title string   `json:"title,omitempty"`
	Ago   string   `json:"ago"`
	Hits  int      `json:"hits"`
	Snips []string `json:"snips"` // "kind: text", the matched words in [brackets]
}

type conversationAnswer struct {
	Sessions []conversationHit `json:"sessions"`
	More     string            `json:"more,omitempty"`
}

// searchConversations is search_past_outputs with in=chat: the sessions whose prompts, replies,
// tool calls or compaction summaries match, best first, bounded as the outputs' search is: the
// same query limits, the best maxSearchScan matches looked at, two snippets per session, 5
// sessions unless limit says otherwise.
func (s *Server) searchConversations(ctx context.Context, db *dbh, in searchArgs) (any, error) {
	if _, _, err := parseQuery(in.Query); err != nil {
		return nil, err
	}
	q := query.SearchQuery{Text: in.Query, Kinds: []string{query.SearchPrompt, query.SearchReply, query.SearchCommand, query.SearchSummary},
		Limit: limit(in.Limit, 5), PerSession: 2, Scan: maxSearchScan}
	if strings.TrimSpace(in.Project) != "*" {
		p, err := s.projectOf(ctx, db, in.Project)
		if err != nil {
			return nil, err
		}
		q.Project = p
	}
	res, err := query.Search(ctx, db, q)
	if errors.Is(err, query.ErrBadSearch) {
		return nil, errors.New(strings.TrimPrefix(err.Error(), query.ErrBadSearch.Error()+": "))
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	ans := conversationAnswer{Sessions: []conversationHit{}}
	for _, x := range res.Sessions {
		h := conversationHit{Sess: short(x.SessionID), Title: clip(x.Title, 80), Ago: ago(now, x.LastHit), Hits: x.Hits}
		for _, m := range x.Matches {
			var b strings.Builder
			last := 0
			for _, r := range m.Highlights {
				b.WriteString(m.Snippet[last:r[0]] + "[" + m.Snippet[r[0]:r[1]] + "]")
				last = r[1]
			}
			b.WriteString(m.Snippet[last:])
			h.Snips = append(h.Snips, m.Kind+": "+clip(strings.Join(strings.Fields(b.String()), " "), 240))
		}
		ans.Sessions = append(ans.Sessions, h)
	}
	if res.Capped {
		ans.More = "looked at the best " + strconv.Itoa(maxSearchScan) + " matches; add words to narrow"
	}
	if len(ans.Sessions) == 0 {
		where := "in " + q.Project
		if q.Project == "" {
			where = "in any project"
		}
		return nil, notice("no conversation matches " + strings.TrimSpace(in.Query) + " " + where)
	}
	return ans, nil
}
