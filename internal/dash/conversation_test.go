package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// convFixture is what convStore wrote: the times of its sessions and the row id of each of s1's
// messages by event id.
type convFixture struct {
	path string
	t0   time.Time
	ids  map[string]int64 // event id -> messages row id
}

// s1's messages in order: event id, role (the roles the page shows them as).
var convOrder = []struct{ id, role string }{
	{"m1", "user"}, {"m2", "thinking"}, {"m3", "assistant"}, {"m4", "tool_call"}, {"m5", "tool_call"}, {"m6", "tool_call"},
	{"m7", "tool_call"}, {"m8", "user"}, {"m9", "assistant"}, {"m10", "summary"}, {"m11", "user"}, {"m12", "assistant"},
}

// convStore writes, through store.WriteBatch, the conversations of four sessions:
//
//   - s1 (claude-code, /work/app, an hour ago): a prompt; thinking and a reply in two blocks of
//     message msg_a (its turn: 10 in, 20 out, $0.25); a Bash call whose action succeeded with a
//     short output; a Read call that failed; a Bash call with a long output (80 lines); a Task
//     call whose subagent agent-1 has a prompt and a reply (sidechain); a compaction summary; then
//     a prompt whose text is markup (it must show as text) and the last reply (msg_b, $0.50).
//   - s2 (codex, /work/lib, three days ago): a prompt and a reply about a migration.
//   - s3 (claude-code, /work/app): actions only, no message.
//   - s4 (claude-code, /work/app): 230 prompts and replies, for paging.
func convStore(tb testing.TB) convFixture {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	var evs []event.Event
	msg := func(id, client, sess, proj string, at time.Time, m event.Message) {
		ev := event.New(event.KindMessage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time, ev.Message = id, client, sess, proj, at, &m
		evs = append(evs, ev)
	}
	act := func(id, sess, proj string, at time.Time, a event.Action) {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time, ev.Action = id, "claude-code", sess, proj, at, &a
		evs = append(evs, ev)
	}
	use := func(id, msgID string, at time.Time, in, out int64, cost float64) {
		ev := event.New(event.KindTokenUsage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, "claude-code", "s1", "/work/app", at
		ev.TokenUsage = &event.TokenUsage{MessageID: msgID, Model: "claude-sonnet-4-5", Tokens: event.Tokens{Input: in, Output: out}, CostUSD: cost}
		evs = append(evs, ev)
	}
	ok, failed := true, false
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const cc, app = "claude-code", "/work/app"
	msg("m1", cc, "s1", app, at(0), event.Message{Role: "user", Text: "where did we fix the migration lock?", Seq: 64})
	msg("m3", cc, "s1", app, at(1), event.Message{Role: "assistant", Text: "Let me look at the migrations.", Seq: 129, MessageID: "msg_a", Model: "claude-sonnet-4-5"})
	msg("m2", cc, "s1", app, at(1), event.Message{Role: "thinking", Text: "The lock lives in migrate.go", Seq: 128, MessageID: "msg_a", Model: "claude-sonnet-4-5"})
	msg("m4", cc, "s1", app, at(2), event.Message{Role: "tool_call", Tool: "Bash", ToolUseID: "tu_1", Text: "grep -rn advisory_lock internal/", Seq: 192, MessageID: "msg_a"})
	act("a1", "s1", app, at(2), event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "grep -rn advisory_lock internal/", ToolUseID: "tu_1",
		Success: &ok, Output: "internal/db/migrate.go:42: pg_advisory_lock(7)"})
	msg("m5", cc, "s1", app, at(3), event.Message{Role: "tool_call", Tool: "Read", ToolUseID: "tu_2", Text: "/work/app/missing.go", Seq: 256, MessageID: "msg_a"})
	act("a2", "s1", app, at(3), event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "/work/app/missing.go", ToolUseID: "tu_2",
		Success: &failed, Error: "file does not exist"})
	var long strings.Builder
	for i := range 80 {
		fmt.Fprintf(&long, "ok  \tgithub.com/example/app/pkg%02d\t0.%02ds\n", i, i)
	}
	msg("m6", cc, "s1", app, at(4), event.Message{Role: "tool_call", Tool: "Bash", ToolUseID: "tu_3", Text: "go test ./...", Seq: 320, MessageID: "msg_a"})
	act("a3", "s1", app, at(4), event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "go test ./...", ToolUseID: "tu_3", Success: &ok, Output: long.String()})
	msg("m7", cc, "s1", app, at(5), event.Message{Role: "tool_call", Tool: "Task", ToolUseID: "tu_4", Text: "explore the migrations", Seq: 384, MessageID: "msg_a"})
	act("a4", "s1", app, at(5), event.Action{Type: event.ActionSpawnSubagent, Tool: "Task", Target: "explore the migrations", ToolUseID: "tu_4", Success: &ok})
	msg("m8", cc, "s1", app, at(6), event.Message{Role: "user", Text: "explore the migrations", Seq: 448, AgentID: "agent-1", Sidechain: true})
	msg("m9", cc, "s1", app, at(7), event.Message{Role: "assistant", Text: "The advisory lock is taken in migrate.go:42.", Seq: 512, AgentID: "agent-1", Sidechain: true, MessageID: "msg_sub"})
	msg("m10", cc, "s1", app, at(60), event.Message{Role: "summary", Text: "We fixed the migration lock by releasing the advisory lock.", Seq: 576})
	msg("m11", cc, "s1", app, at(61), event.Message{Role: "user", Text: "<img src=x onerror=alert(1)> is that <b>all</b>?", Seq: 640})
	msg("m12", cc, "s1", app, at(62), event.Message{Role: "assistant", Text: "Yes: the lock is released after each migration.", Seq: 704, MessageID: "msg_b", Model: "claude-sonnet-4-5"})
	use("u1", "msg_a", at(1), 10, 20, 0.25)
	use("u2", "msg_b", at(62), 30, 40, 0.5)

	msg("c1", "codex", "s2", "/work/lib", t0.Add(-72*time.Hour), event.Message{Role: "user", Text: "add a migration for the users table", Seq: 64})
	msg("c2", "codex", "s2", "/work/lib", t0.Add(-72*time.Hour+time.Second), event.Message{Role: "assistant", Text: "Added migrations/0002_users.sql.", Seq: 128})

	act("b1", "s3", app, at(10), event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "make build", ToolUseID: "tb_1", Success: &ok, Output: "built"})

	for i := range 230 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msg(fmt.Sprintf("p%d", i), cc, "s4", app, at(100+i), event.Message{Role: role, Text: fmt.Sprintf("line %d of a long talk", i), Seq: int64(64 * (i + 1))})
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		tb.Fatal(err)
	}
	for _, index := range []func(context.Context, int) (int, error){st.IndexOutputs, st.IndexMessages} {
		if _, err := index(ctx, 5000); err != nil {
			tb.Fatal(err)
		}
	}
	f := convFixture{path: path, t0: t0, ids: map[string]int64{}}
	// The row ids, by reading the conversation (the page's anchors are these).
	for _, sess := range []string{"s1", "s4"} {
		page, err := query.Conversation(ctx, st.DB, query.ConversationQuery{Client: cc, SessionID: sess})
		if err != nil {
			tb.Fatal(err)
		}
		for i, it := range page.Items {
			key := fmt.Sprintf("%s#%d", sess, i)
			if sess == "s1" && i < len(convOrder) {
				key = convOrder[i].id
			}
			f.ids[key] = it.ID
		}
	}
	return f
}

// TestConversation_API: /api/sessions/{id}/conversation gives the messages in order, each tool
// call with its result, the turn's usage on its first block, subagent messages marked; pages
// continue by after; bad parameters are 400s, an unknown session a 404.
func TestConversation_API(t *testing.T) {
	f := convStore(t)
	srv := startServer(t, Options{StorePath: f.path, Version: "test"})
	var d conversationJSON
	if code := get(t, srv.URL, "/api/sessions/s1/conversation", &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	if d.Session.SessionID != "s1" || d.Session.Client != "claude-code" || d.NextCursor != "" || len(d.Items) != len(convOrder) {
		t.Fatalf("session %+v, next %q, %d items", d.Session.Session, d.NextCursor, len(d.Items))
	}
	for i, w := range convOrder {
		if it := d.Items[i]; it.Role != w.role || it.ID != f.ids[w.id] {
			t.Errorf("item %d: %s #%d, want %s #%d", i, it.Role, it.ID, w.role, f.ids[w.id])
		}
	}
	think, reply, bash, read, long, sub := d.Items[1], d.Items[2], d.Items[3], d.Items[4], d.Items[5], d.Items[8]
	if think.Usage == nil || think.Usage.CostUSD != 0.25 || think.Usage.InputTokens != 10 || think.Usage.OutputTokens != 20 || reply.Usage != nil {
		t.Errorf("usage on msg_a's first block: %+v, then %+v", think.Usage, reply.Usage)
	}
	if last := d.Items[11]; last.Usage == nil || last.Usage.CostUSD != 0.5 || last.Model != "claude-sonnet-4-5" {
		t.Errorf("the last reply: %+v", last)
	}
	if bash.Tool != "Bash" || bash.Type != "run_command" || bash.Success == nil || !*bash.Success || bash.Output != "internal/db/migrate.go:42: pg_advisory_lock(7)" {
		t.Errorf("bash call %+v", bash)
	}
	if read.Success == nil || *read.Success || read.Error != "file does not exist" {
		t.Errorf("failed read %+v", read)
	}
	if strings.Count(long.Output, "\n") != 80 || long.OutputTruncated {
		t.Errorf("long output: %d lines, truncated %v", strings.Count(long.Output, "\n"), long.OutputTruncated)
	}
	if sub.AgentID != "agent-1" || !sub.Sidechain || d.Items[0].AgentID != "" {
		t.Errorf("subagent message %+v", sub)
	}
	if d.Items[10].Text != "<img src=x onerror=alert(1)> is that <b>all</b>?" {
		t.Errorf("markup prompt %q", d.Items[10].Text)
	}

	// Paged: s4's 230 messages, 100 at a time, with the client named.
	var all []int64
	after := ""
	for range 5 {
		var p conversationJSON
		if code := get(t, srv.URL, "/api/sessions/s4/conversation?client=claude-code&limit=100&after="+url.QueryEscape(after), &p); code != 200 {
			t.Fatalf("page after %q: %d", after, code)
		}
		for _, it := range p.Items {
			all = append(all, it.ID)
		}
		if after = p.NextCursor; after == "" {
			break
		}
	}
	if len(all) != 230 || all[0] != f.ids["s4#0"] || all[229] != f.ids["s4#229"] {
		t.Errorf("paged: %d items", len(all))
	}
	// A session without messages: no item.
	var none conversationJSON
	if get(t, srv.URL, "/api/sessions/s3/conversation", &none); len(none.Items) != 0 || none.Session.SessionID != "s3" {
		t.Errorf("s3: %+v", none)
	}

	for _, c := range []struct {
		path  string
		code  int
		param string
	}{
		{"/api/sessions/s1/conversation?after=12", 400, "after"},
		{"/api/sessions/s1/conversation?limit=0", 400, "limit"},
		{"/api/sessions/s1/conversation?limit=501", 400, "limit"},
		{"/api/sessions/s1/conversation?cursor=1", 400, "cursor"},
		{"/api/sessions/s1/conversation?client=Bad%20Name", 400, "client"},
		{"/api/sessions/nosuch/conversation", 404, ""},
		{"/api/sessions/s1/conversation?client=codex", 404, ""},
	} {
		var e struct{ Error, Param string }
		code, body := rawGet(t, srv.URL+c.path)
		if code != c.code {
			t.Errorf("%s: %d %s", c.path, code, body)
			continue
		}
		if c.code == 400 {
			decode(t, body, &e)
			if e.Param != c.param || e.Error == "" {
				t.Errorf("%s: %s", c.path, body)
			}
		}
	}
	// No store yet: the session is unknown.
	empty := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	if code, _ := rawGet(t, empty.URL+"/api/sessions/s1/conversation"); code != 404 {
		t.Errorf("without a store: %d", code)
	}
	// /sessions/ID (observerctl search's link) leads to the session's page.
	if loc := redirect(t, srv.URL+"/sessions/s1?client=claude-code"); loc != "/?sclient=claude-code&session=s1&tab=sessions" {
		t.Errorf("/sessions/s1 redirects to %q", loc)
	}
}

// TestSearch_API: /api/search finds the sessions whose prompts, replies, commands, outputs or
// titles match, with the matched words' byte ranges; kind, newest, window, project and client
// narrow it; an empty or unusable query and an unknown kind are 400s.
func TestSearch_API(t *testing.T) {
	f := convStore(t)
	srv := startServer(t, Options{StorePath: f.path, Version: "test"})
	search := func(params string) searchJSON {
		t.Helper()
		var d searchJSON
		if code, body := rawGet(t, srv.URL+"/api/search?"+params); code != 200 {
			t.Fatalf("%s: %d %s", params, code, body)
		} else {
			decode(t, body, &d)
		}
		return d
	}
	ids := func(d searchJSON) string {
		var s []string
		for _, x := range d.Sessions {
			s = append(s, x.Client+"/"+x.SessionID)
		}
		return strings.Join(s, " ")
	}
	d := search("q=" + url.QueryEscape("migration lock"))
	if !d.Store || d.Query != "migration lock" || ids(d) != "claude-code/s1" || d.Window != "all" || len(d.Kinds) != 0 {
		t.Fatalf("migration lock: %+v", d)
	}
	s1 := d.Sessions[0]
	if s1.Hits < 2 || len(s1.Matches) < 2 || s1.Project != "/work/app" {
		t.Errorf("s1: %+v", s1)
	}
	for _, m := range s1.Matches {
		if m.MessageID == 0 || len(m.Highlights) == 0 {
			t.Errorf("match %+v", m)
			continue
		}
		for _, hl := range m.Highlights {
			if w := strings.ToLower(m.Snippet[hl[0]:hl[1]]); w != "migration" && w != "lock" {
				t.Errorf("highlighted %q in %q", w, m.Snippet)
			}
		}
	}
	if m := s1.Matches; m[0].Kind != "prompt" && m[0].Kind != "summary" {
		t.Errorf("first match %+v", m[0])
	}
	// "migration" alone: both sessions; newest puts s1 (an hour ago) before s2 (three days ago).
	if got := ids(search("q=migration&newest=1")); got != "claude-code/s1 codex/s2" {
		t.Errorf("newest: %s", got)
	}
	if got := ids(search("q=migration&window=24h")); got != "claude-code/s1" {
		t.Errorf("24h: %s", got)
	}
	if got := ids(search("q=migration&client=codex")); got != "codex/s2" {
		t.Errorf("codex: %s", got)
	}
	if got := ids(search("q=migration&project=" + url.QueryEscape("/work/lib"))); got != "codex/s2" {
		t.Errorf("project: %s", got)
	}
	// Kinds: the Bash command, the output; a prompt only.
	out := search("q=pg_advisory_lock&kind=output")
	if ids(out) != "claude-code/s1" || out.Sessions[0].Matches[0].Kind != "output" || out.Sessions[0].Matches[0].ActionID == 0 || strings.Join(out.Kinds, ",") != "output" {
		t.Errorf("output: %+v", out)
	}
	cmd := search("q=advisory_lock&kind=command")
	if ids(cmd) != "claude-code/s1" || cmd.Sessions[0].Matches[0].Kind != "command" || cmd.Sessions[0].Matches[0].MessageID != f.ids["m4"] {
		t.Errorf("command: %+v", cmd)
	}
	if got := search("q=migration&kind=prompt,reply"); ids(got) != "claude-code/s1 codex/s2" && ids(got) != "codex/s2 claude-code/s1" {
		t.Errorf("prompt,reply: %s", ids(got))
	}
	if got := search("q=xylophonequartz"); len(got.Sessions) != 0 {
		t.Errorf("no match: %+v", got)
	}

	for _, c := range []struct{ params, param, msg string }{
		{"", "q", "empty"},
		{"q=%20%20", "q", "empty"},
		{"q=%22%22", "q", "bad search"},
		{"q=OR", "q", "bad search"},
		{"q=lock&kind=bogus", "kind", "not a kind"},
		{"q=lock&newest=maybe", "newest", "want 1 or 0"},
		{"q=lock&window=fortnight", "window", "not a window"},
		{"q=lock&limit=0", "limit", ""},
		{"q=lock&since=7d", "since", "unknown parameter"},
	} {
		code, body := rawGet(t, srv.URL+"/api/search?"+c.params)
		var e struct{ Error, Param string }
		decode(t, body, &e)
		if code != 400 || e.Param != c.param || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%q: %d %s", c.params, code, body)
		}
	}
	// No store yet: no session, no error.
	empty := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	if code, body := rawGet(t, empty.URL+"/api/search?q=lock"); code != 200 || !strings.Contains(body, `"store":false`) || !strings.Contains(body, `"sessions":[]`) {
		t.Errorf("without a store: %d %s", code, body)
	}
}

func decode(tb testing.TB, body string, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		tb.Fatalf("%v: %s", err, body)
	}
}

// redirect returns where a GET of u is redirected to ("" when it is not).
func redirect(tb testing.TB, u string) string {
	tb.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Location")
}
