package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

const testSecret = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

// conversationHome is a home whose store holds one Claude Code session's conversation: a prompt,
// thinking, a reply with markup in it, a tool call with its output, a summary; a secret in the
// reply that reached the store unscrubbed.
func conversationHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(home, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	var evs []event.Event
	for i, m := range []event.Message{
		{Role: "user", Text: "where did we fix the migration lock?"},
		{Role: "thinking", Text: "The lock is in migrate.go", MessageID: "msg_a"},
		{Role: "assistant", Text: "Found it: <b>pg_advisory_lock</b> is released now. Key " + testSecret, MessageID: "msg_a"},
		{Role: "tool_call", Tool: "Bash", ToolUseID: "tu_1", Text: "grep -rn advisory_lock internal/", MessageID: "msg_a"},
		{Role: "summary", Text: "We fixed the migration lock."},
	} {
		m := m
		m.Seq = int64(64 * (i + 1))
		ev := event.New(event.KindMessage, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time, ev.Message = "m"+string(rune('0'+i)), "claude-code", "sess-conv-1", "/work/app",
			t0.Add(time.Duration(i)*time.Second), &m
		evs = append(evs, ev)
	}
	ok := true
	act := event.New(event.KindAction, "test")
	act.ID, act.Client, act.SessionID, act.Project, act.Time = "a1", "claude-code", "sess-conv-1", "/work/app", t0.Add(3*time.Second)
	act.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "grep -rn advisory_lock internal/", ToolUseID: "tu_1",
		Success: &ok, Output: "internal/db/migrate.go:42: pg_advisory_lock(7)"}
	evs = append(evs, act)
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexMessages(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexOutputs(ctx, 100); err != nil {
		t.Fatal(err)
	}
	return home
}

// `observerctl search` lists the matching session with its matches marked; --json gives the same
// with highlight offsets; a query with nothing to look for is a usage error; no match is not one.
func TestSearch_Command(t *testing.T) {
	home := conversationHome(t)
	code, out, errOut := runCtl(t, "--home", home, "search", "migration lock")
	if code != 0 || !strings.Contains(out, "claude-code sess-conv-1") || !strings.Contains(out, "«migration» «lock»") ||
		!strings.Contains(out, "/work/app · 2 matches") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	code, out, _ = runCtl(t, "--home", home, "search", "--json", "--kind", "output", "migrate.go")
	var res query.SearchResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Sessions) != 1 || res.Sessions[0].Matches[0].Kind != "output" ||
		len(res.Sessions[0].Matches[0].Highlights) == 0 {
		t.Fatalf("--json --kind output: exit %d\n%s", code, out)
	}
	code, out, _ = runCtl(t, "--home", home, "search", "nothing-like-this")
	if code != 0 || !strings.Contains(out, "no session matches") {
		t.Errorf("no match: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"search"}, {"search", "OR"}, {"search", "--kind", "poem", "x"}} {
		if code, _, _ := runCtl(t, append([]string{"--home", home}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

// `observerctl export --session` writes the conversation in order as Markdown, as one
// self-contained HTML page (escaped, no script, anchored), or as JSON; scrubbed again.
func TestExport_SessionConversation(t *testing.T) {
	home := conversationHome(t)
	code, md, errOut := runCtl(t, "--home", home, "export", "--session", "sess-conv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	last := -1
	for _, head := range []string{"## User", "## Thinking", "## Assistant", "## Tool call: Bash", "## Compaction summary"} {
		i := strings.Index(md, head)
		if i <= last {
			t.Errorf("markdown: %q missing or out of order:\n%s", head, md)
		}
		last = i
	}
	if !strings.Contains(md, "pg_advisory_lock(7)") || strings.Contains(md, testSecret) {
		t.Errorf("markdown lacks the tool output or keeps the secret:\n%s", md)
	}
	path := filepath.Join(t.TempDir(), "conv.html")
	if code, _, errOut := runCtl(t, "--home", home, "export", "--session", "sess-conv-1", "--format", "html", "-o", path); code != 0 {
		t.Fatalf("html: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>pg_advisory_lock</b>") || !strings.Contains(page, "&lt;b&gt;") ||
		!strings.Contains(page, `id="m`) || !strings.Contains(page, "<details><summary>thinking</summary>") || strings.Contains(page, testSecret) ||
		strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("html page:\n%s", page)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("html file mode %v, %v", fi.Mode(), err)
	}
	code, js, _ := runCtl(t, "--home", home, "export", "--session", "sess-conv-1", "--format", "json")
	var got struct {
		Session  query.Session            `json:"session"`
		Messages []query.ConversationItem `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &got) != nil || len(got.Messages) != 5 || got.Session.Project != "/work/app" {
		t.Errorf("json: exit %d\n%s", code, js)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"export", "--session", "nope"}, ExitUnavailable},
		{[]string{"export", "--session", "sess-conv-1", "--format", "csv"}, ExitUsage},
		{[]string{"export", "--session", "sess-conv-1", "--table", "turns"}, ExitUsage},
	} {
		if code, _, _ := runCtl(t, append([]string{"--home", home}, c.args...)...); code != c.code {
			t.Errorf("%v: exit %d, want %d", c.args, code, c.code)
		}
	}
}
