package query

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// convStore holds two sessions' conversations: s1 (claude-code, /work/app) with a prompt, a
// reply in two blocks of one message, thinking, a tool call with its action and output, and a
// compaction summary; s2 (codex, /work/lib) with a prompt and a reply.
func convStore(t *testing.T) (*store.Store, time.Time) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var evs []event.Event
	msg := func(id, client, sess, proj string, at time.Time, m event.Message) {
		ev := event.New(event.KindMessage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time, ev.Message = id, client, sess, proj, at, &m
		evs = append(evs, ev)
	}
	msg("m1", "claude-code", "s1", "/work/app", t0, event.Message{Role: "user", Text: "where did we fix the migration lock?", Seq: 64})
	// Two blocks of one message, at the same time: seq orders them.
	msg("m3", "claude-code", "s1", "/work/app", t0.Add(time.Second), event.Message{Role: "assistant", Text: "Let me look at the migrations.", Seq: 129, MessageID: "msg_a"})
	msg("m2", "claude-code", "s1", "/work/app", t0.Add(time.Second), event.Message{Role: "thinking", Text: "The lock lives in migrate.go", Seq: 128, MessageID: "msg_a"})
	msg("m4", "claude-code", "s1", "/work/app", t0.Add(2*time.Second), event.Message{Role: "tool_call", Tool: "Bash", ToolUseID: "tu_1", Text: "grep -rn advisory_lock internal/", Seq: 192, MessageID: "msg_a"})
	msg("m5", "claude-code", "s1", "/work/app", t0.Add(time.Minute), event.Message{Role: "summary", Text: "We fixed the migration lock by releasing the advisory lock.", Seq: 256})
	msg("m6", "codex", "s2", "/work/lib", t0.Add(time.Hour), event.Message{Role: "user", Text: "add a migration for the users table", Seq: 64})
	msg("m7", "codex", "s2", "/work/lib", t0.Add(time.Hour+time.Second), event.Message{Role: "assistant", Text: "Added migrations/0002_users.sql.", Seq: 128})
	act := event.New(event.KindAction, "test")
	ok := true
	act.ID, act.Client, act.SessionID, act.Project, act.Time = "a1", "claude-code", "s1", "/work/app", t0.Add(2*time.Second)
	act.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "grep -rn advisory_lock internal/", ToolUseID: "tu_1",
		Success: &ok, Output: "internal/db/migrate.go:42: pg_advisory_lock(7)"}
	use := event.New(event.KindTokenUsage, "test")
	use.ID, use.Client, use.SessionID, use.Project, use.Time = "u1", "claude-code", "s1", "/work/app", t0.Add(time.Second)
	use.TokenUsage = &event.TokenUsage{MessageID: "msg_a", Model: "claude-sonnet-4-5", Tokens: event.Tokens{Input: 10, Output: 20}, CostUSD: 0.25}
	evs = append(evs, act, use)
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	for _, index := range []func(context.Context, int) (int, error){st.IndexOutputs, st.IndexMessages} {
		if _, err := index(ctx, 5000); err != nil {
			t.Fatal(err)
		}
	}
	return st, t0
}

// A conversation reads in (time, seq) order, the tool call with its action's result, the
// message's usage on its first block; pages continue where the last one ended.
func TestConversation_OrderToolsUsage(t *testing.T) {
	st, _ := convStore(t)
	ctx := context.Background()
	page, err := Conversation(ctx, st.DB, ConversationQuery{Client: "claude-code", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, it := range page.Items {
		roles = append(roles, it.Role)
	}
	if got := strings.Join(roles, " "); got != "user thinking assistant tool_call summary" {
		t.Fatalf("roles %q", got)
	}
	think, call := page.Items[1], page.Items[3]
	if think.Usage == nil || think.Usage.CostUSD != 0.25 || think.Usage.OutputTokens != 20 || page.Items[2].Usage != nil {
		t.Errorf("usage on the message's first block: %+v, then %+v", think.Usage, page.Items[2].Usage)
	}
	if call.Type != string(event.ActionRunCommand) || call.Success == nil || !*call.Success || !strings.Contains(call.Output, "pg_advisory_lock") {
		t.Errorf("tool call %+v", call)
	}
	// Paged two at a time: the same items.
	var paged []string
	after := ""
	for {
		p, err := Conversation(ctx, st.DB, ConversationQuery{Client: "claude-code", SessionID: "s1", After: after, Limit: 2, MaxText: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			paged = append(paged, it.Role)
			if len(it.Text) > 10 || len(it.Text) == 10 && !it.TextTruncated && it.Role == "summary" {
				t.Errorf("text %q not cut at 10", it.Text)
			}
		}
		if p.NextCursor == "" {
			break
		}
		after = p.NextCursor
	}
	if strings.Join(paged, " ") != strings.Join(roles, " ") {
		t.Errorf("paged %v, want %v", paged, roles)
	}
	if _, err := Conversation(ctx, st.DB, ConversationQuery{Client: "claude-code", SessionID: "s1", After: "x"}); err == nil {
		t.Error("a bad cursor was taken")
	}
}

// Search finds prompts, replies, commands, outputs and titles; phrases, prefixes and OR; kinds and
// filters narrow it; matched words are highlighted; a search with nothing to look for is refused.
func TestSearch(t *testing.T) {
	st, t0 := convStore(t)
	ctx := context.Background()
	run := func(q SearchQuery) *SearchResult {
		t.Helper()
		r, err := Search(ctx, st.DB, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return r
	}
	ids := func(r *SearchResult) string {
		var s []string
		for _, x := range r.Sessions {
			s = append(s, x.SessionID)
		}
		return strings.Join(s, ",")
	}
	// "migration lock": both words in s1 (prompt, summary); s2 has "migration" alone.
	r := run(SearchQuery{Text: "migration lock"})
	if ids(r) != "s1" || r.Sessions[0].Hits != 2 || r.Sessions[0].Project != "/work/app" {
		t.Fatalf("migration lock: %+v", r.Sessions)
	}
	m := r.Sessions[0].Matches[0]
	if len(m.Highlights) == 0 || !strings.EqualFold(m.Snippet[m.Highlights[0][0]:m.Highlights[0][1]], "migration") &&
		!strings.EqualFold(m.Snippet[m.Highlights[0][0]:m.Highlights[0][1]], "lock") {
		t.Errorf("highlights %v in %q", m.Highlights, m.Snippet)
	}
	if got := ids(run(SearchQuery{Text: "migration*"})); got != "s1,s2" && got != "s2,s1" {
		t.Errorf("prefix migration*: %q", got)
	}
	if got := ids(run(SearchQuery{Text: `"advisory lock"`})); got != "s1" {
		t.Errorf("phrase: %q", got)
	}
	if got := ids(run(SearchQuery{Text: `users OR advisory`, Newest: true})); got != "s2,s1" {
		t.Errorf("OR, newest first: %q", got)
	}
	// A path as typed: quoted for the index, not an FTS5 syntax error.
	if r := run(SearchQuery{Text: "internal/db/migrate.go", Kinds: []string{SearchOutput}}); ids(r) != "s1" || r.Sessions[0].Matches[0].Kind != SearchOutput {
		t.Errorf("output path: %+v", r.Sessions)
	}
	if r := run(SearchQuery{Text: "grep advisory_lock", Kinds: []string{SearchCommand}}); ids(r) != "s1" || r.Sessions[0].Matches[0].Kind != SearchCommand {
		t.Errorf("command: %+v", r.Sessions)
	}
	if got := ids(run(SearchQuery{Text: "migration", Filter: Filter{Client: "codex"}})); got != "s2" {
		t.Errorf("client filter: %q", got)
	}
	if got := ids(run(SearchQuery{Text: "migration", Filter: Filter{Since: t0.Add(30 * time.Minute)}})); got != "s2" {
		t.Errorf("since filter: %q", got)
	}
	if got := ids(run(SearchQuery{Text: "lock", Kinds: []string{SearchThinking}})); got != "s1" {
		t.Errorf("thinking: %q", got)
	}
	for _, bad := range []string{"", "   ", "OR", `""`, "*"} {
		if _, err := Search(ctx, st.DB, SearchQuery{Text: bad}); !errors.Is(err, ErrBadSearch) {
			t.Errorf("search %q: %v, want ErrBadSearch", bad, err)
		}
	}
	if _, err := Search(ctx, st.DB, SearchQuery{Text: "x", Kinds: []string{"poem"}}); !errors.Is(err, ErrBadSearch) {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestFTSQuery(t *testing.T) {
	for in, want := range map[string]string{
		"migration lock":          `"migration" "lock"`,
		`"advisory lock" release`: `"advisory lock" "release"`,
		"migr*":                   `"migr"*`,
		"a OR b":                  `"a" OR "b"`,
		"OR a NOT":                `"a"`,
		`say "hi`:                 `"say" "hi"`,
		`x"y`:                     `"x" "y"`,
		"internal/db/migrate.go":  `"internal/db/migrate.go"`,
	} {
		if got, err := FTSQuery(in); err != nil || got != want {
			t.Errorf("FTSQuery(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
