package dash

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

// Conversations (issue 32): a session's messages in order (query.Conversation), and the search
// through every conversation, tool output and title (query.Search).

// Bounds of what one conversation page carries: a message's text and a tool output are cut there
// (text_truncated, output_truncated say so; `observerctl export` gives them whole).
const (
	convMaxText   = 64 << 10
	convMaxOutput = 16 << 10
)

// convCursorRe is the form of query.Conversation's cursors ("<ms>.<seq>.<row id>").
var convCursorRe = regexp.MustCompile(`^[0-9]{1,15}\.-?[0-9]{1,19}\.[0-9]{1,18}$`)

// conversationJSON is /api/sessions/{id}/conversation's answer.
type conversationJSON struct {
	Session Session                  `json:"session"`
	Items   []query.ConversationItem `json:"items"`
	// NextCursor is the after of the next page; "" at the end.
	NextCursor string `json:"next_cursor"`
}

// conversation answers /api/sessions/{id}/conversation: the session's messages in order (a
// prompt, a reply, thinking, a tool call with its result, a compaction summary), each model
// turn's tokens and cost on its first message, limit at a time after the cursor after.
func (s *Server) conversation(ctx context.Context, q *reqParams) (any, error) {
	id, client := q.pathID(), q.name("client")
	limit := q.intParam("limit", 100, 1, maxPageSize)
	after := q.str("after")
	if after != "" && !convCursorRe.MatchString(after) {
		q.fail(badParam("after", "%q is not a cursor from a previous page's next_cursor", after))
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	db, sess, err := s.session(ctx, id, client)
	if err != nil {
		return nil, err
	}
	page, err := query.Conversation(ctx, db, query.ConversationQuery{Client: sess.Client, SessionID: sess.SessionID,
		After: after, Limit: limit, MaxText: convMaxText, MaxOutput: convMaxOutput})
	if err != nil {
		return nil, err
	}
	return conversationJSON{Session: sess, Items: page.Items, NextCursor: page.NextCursor}, nil
}

// searchJSON is /api/search's answer.
type searchJSON struct {
	filters
	Store  bool     `json:"store"`
	Kinds  []string `json:"kinds"`
	Newest bool     `json:"newest"`
	query.SearchResult
}

// searchAPI answers /api/search: q (words, "phrases", prefix*, OR, NOT, as `observerctl search`
// takes them) looked for in the conversations, the tool outputs and the session titles of the
// window, project, client and member; kind keeps some kinds of text (comma-separated
// query.SearchKinds); newest=1 puts the session with the latest match first, else the best match;
// limit sessions (20), per_session matches each (5).
func (s *Server) searchAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	text := strings.TrimSpace(q.str("q"))
	if text == "" {
		q.fail(badParam("q", "empty: say what to look for"))
	}
	kinds := []string{}
	if v := q.str("kind"); v != "" {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k == "" || slices.Contains(kinds, k) {
				continue
			}
			if !slices.Contains(query.SearchKinds, k) {
				q.fail(badParam("kind", "%q is not a kind: choose among %s", k, strings.Join(query.SearchKinds, ", ")))
			}
			kinds = append(kinds, k)
		}
	}
	newest := q.boolParam("newest")
	limit := q.intParam("limit", 20, 1, 100)
	per := q.intParam("per_session", 5, 1, 50)
	if err := q.done(); err != nil {
		return nil, err
	}
	out := searchJSON{filters: f, Kinds: kinds, Newest: newest, SearchResult: query.SearchResult{Query: text, Sessions: []query.SearchSession{}}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	res, err := query.Search(ctx, db, query.SearchQuery{Text: text, Kinds: kinds, Newest: newest, Limit: limit, PerSession: per,
		Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client, Member: f.Member}})
	if errors.Is(err, query.ErrBadSearch) {
		return nil, badParam("q", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	out.SearchResult = *res
	return out, nil
}
