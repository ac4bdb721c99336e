package goose

import (
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

const (
	insSession = `INSERT INTO sessions (id, name, user_set_name, session_type, working_dir, created_at, updated_at,
		total_tokens, input_tokens, output_tokens, accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens,
		provider_name, model_config_json, accumulated_cost) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	insMessage = `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json)
		VALUES (?,?,?,?,?,?)`
	visibleMeta = `{"userVisible":true,"agentVisible":true}`
)

// demoDir is the hand-written sessions' working directory: a path outside any repository on any
// machine, so that its project is itself.
const demoDir = "/nonexistent-observer/goose-demo"

// t0 is 2026-01-05T10:00:00Z, when the hand-written session starts.
const t0 = 1767607200

// demoMessages are the messages of a session as goose's add_message stores them (content_json is
// the serde JSON of Vec<MessageContent>, message.rs at 05132966): a prompt, a shell call, a
// text_editor view whose result is in the legacy Vec<Content> form, a failed str_replace, an MCP
// extension's call beside a call goose could not parse, an instruction goose injects for the
// agent only, a compaction, a prompt with an image, and an assistant reply with thinking and an
// item type this reader does not know.
var demoMessages = [][]any{
	{"msg_a", "user", `[{"type":"text","text":"List the files and fix the typo in README.md"}]`, t0, visibleMeta},
	{"msg_b", "assistant", `[{"type":"text","text":"Let me look."},{"type":"toolRequest","id":"toolu_01","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls -la"}}}}]`, t0 + 2, visibleMeta},
	{"msg_c", "user", `[{"type":"toolResponse","id":"toolu_01","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"README.md\nmain.go"}],"isError":false}}}]`, t0 + 3, visibleMeta},
	{"msg_d", "assistant", `[{"type":"toolRequest","id":"toolu_02","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"command":"view","path":"` + demoDir + `/README.md"}}}}]`, t0 + 5, visibleMeta},
	{"msg_e", "user", `[{"type":"toolResponse","id":"toolu_02","toolResult":{"status":"success","value":[{"type":"text","text":"# Demo\nTeh demo."}]}}]`, t0 + 5, visibleMeta},
	{"msg_f", "assistant", `[{"type":"toolRequest","id":"toolu_03","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"command":"str_replace","path":"README.md","old_str":"Teh","new_str":"The"}}}}]`, t0 + 8, visibleMeta},
	{"msg_g", "user", `[{"type":"toolResponse","id":"toolu_03","toolResult":{"status":"error","error":"-32603: old_str not found"}}]`, t0 + 9, visibleMeta},
	{"msg_h", "assistant", `[{"type":"toolRequest","id":"toolu_04","toolCall":{"status":"success","value":{"name":"github__create_issue","arguments":{"title":"typo"}}}},{"type":"toolRequest","id":"toolu_05","toolCall":{"status":"error","error":"-32602: could not parse tool arguments"}}]`, t0 + 12, visibleMeta},
	{"msg_i", "user", `[{"type":"text","text":"Summarize the conversation so far."}]`, t0 + 13, `{"userVisible":false,"agentVisible":true}`},
	{"msg_j", "assistant", `[{"type":"conversationCompacted","msg":"Conversation compacted and summarized"}]`, t0 + 14, `{"userVisible":true,"agentVisible":false}`},
	{"msg_k", "user", `[{"type":"text","text":"thanks, and this screenshot?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`, t0 + 60, visibleMeta},
	{"msg_l", "assistant", `[{"type":"thinking","thinking":"It shows the demo.","signature":""},{"type":"text","text":"Done."},{"type":"somethingNew","x":1}]`, t0 + 65, visibleMeta},
}

// writeDemo writes the hand-written sessions: 20260105_1 (named by goose, Claude with goose's own
// cost) and 20260105_2 (a CLI Session placeholder name, GPT-4o without a cost of goose's, priced by
// observer).
func writeDemo(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db := newDB(tb, path, schemaSQL)
	execT(tb, db, insSession, "20260105_1", "Fix README typo", 0, "user", demoDir, "2026-01-05 10:00:00", "2026-01-05 10:01:05",
		3200, 3000, 200, 12800, 12000, 800, "anthropic", `{"model_name":"claude-sonnet-4-20250514","context_limit":200000,"temperature":null,"max_tokens":null,"toolshim":false}`, 0.048)
	execT(tb, db, insSession, "20260105_2", "CLI Session", 0, "sub_agent", demoDir+"/sub", "2026-01-05 11:00:00", "2026-01-05 11:00:30",
		nil, nil, nil, 1100, 1000, 100, "openai", `{"model_name":"gpt-4o"}`, nil)
	for _, m := range demoMessages {
		execT(tb, db, insMessage, m[0], "20260105_1", m[1], m[2], m[3], m[4])
	}
	execT(tb, db, insMessage, "msg_s1", "20260105_2", "user", `[{"type":"text","text":"run the tests"}]`, t0+3600, visibleMeta)
	execT(tb, db, insMessage, "msg_s2", "20260105_2", "assistant",
		`[{"type":"toolRequest","id":"call_x","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"go test ./..."}}}}]`, t0+3601, visibleMeta)
	return db
}

func TestPoll_HandWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	writeDemo(t, path)
	a := New(nil)
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 0 || st.Lines != int64(len(demoMessages)+2) {
		t.Errorf("stats %+v", st)
	}
	if st.Unknown["content somethingNew"] != 1 {
		t.Errorf("unknown %v, want the new item type counted", st.Unknown)
	}
	want := map[string]int{"session": 2, "session:title": 1, "token_usage": 2, "action:user_prompt": 3,
		"action:run_command": 3, "action:read_file": 2, "action:edit_file": 2, "action:mcp_call": 1, "action:unknown": 1,
		"action:context_compacted": 1}
	if got := kinds(evs); !maps.Equal(got, want) {
		t.Errorf("kinds %v\nwant  %v", got, want)
	}
	acts := transcripttest.ActionsOf(evs)
	byUse := map[string]*event.Action{}
	for _, a := range acts {
		byUse[a.ToolUseID] = a
	}
	if a := byUse["toolu_01"]; a.Type != event.ActionRunCommand || a.Target != "ls -la" || a.Tool != "developer__shell" ||
		a.Success == nil || !*a.Success || a.Output != "README.md\nmain.go" || a.DurationMs != 1000 || a.Model != "claude-sonnet-4-20250514" {
		t.Errorf("shell %+v", a)
	}
	if a := byUse["toolu_02"]; a.Type != event.ActionReadFile || a.Target != "README.md" || a.Output != "# Demo\nTeh demo." {
		t.Errorf("view %+v", a)
	}
	if a := byUse["toolu_03"]; a.Type != event.ActionEditFile || a.Target != "README.md" || a.Success == nil || *a.Success ||
		a.Error != "-32603: old_str not found" {
		t.Errorf("str_replace %+v", a)
	}
	if a := byUse["toolu_05"]; a.Type != event.ActionUnknown || a.Success == nil || *a.Success || a.Error == "" {
		t.Errorf("unparsed call %+v", a)
	}
	var prompts []string
	for _, e := range evs {
		switch {
		case e.Action != nil && e.Action.Type == event.ActionUserPrompt:
			prompts = append(prompts, e.Action.Target)
		case e.TokenUsage != nil && e.SessionID == "20260105_1":
			u := e.TokenUsage
			if u.Input != 12000 || u.Output != 800 || u.CostUSD != 0.048 || u.Reliability != event.ReliabilityApproximate ||
				e.ID != event.ID(Client, "usage", "20260105_1") || !e.Time.Equal(time.Unix(t0, 0)) {
				t.Errorf("usage %s %+v at %v", e.ID, u, e.Time)
			}
		case e.TokenUsage != nil:
			if u := e.TokenUsage; u.Input != 1000 || u.Output != 100 || u.Model != "gpt-4o" || u.CostUSD <= 0 {
				t.Errorf("priced usage %+v", u)
			}
		case e.Session != nil && e.Session.Title != "":
			if e.Session.Title != "Fix README typo" || e.Session.TitleByUser || e.SessionID != "20260105_1" {
				t.Errorf("title %+v", e.Session)
			}
		}
		if e.SessionID == "20260105_1" && e.Project != demoDir {
			t.Errorf("%s: project %q", e.ID, e.Project)
		}
	}
	wantPrompts := []string{"List the files and fix the typo in README.md", "thanks, and this screenshot?\n[image]", "run the tests"}
	if !slices.Equal(prompts, wantPrompts) {
		t.Errorf("prompts %q, want %q (the agent-only instruction is none)", prompts, wantPrompts)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "handwritten-db.golden.json"), transcripttest.Views(transcripttest.WithoutMessages(evs), time.RFC3339), *update)

	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Errorf("second pass %d events, want none: %v", len(evs), kinds(evs))
	}
}

func TestPoll_Updates(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeDemo(t, path)
	a := New(nil)
	first, state, _ := poll(t, a, path, nil)
	firstIDs := map[string]bool{}
	for _, e := range first {
		firstIDs[e.ID] = true
	}
	// goose answers the next prompt and adds the request's usage to the session; the user renames it.
	execT(t, db, insMessage, "msg_m", "20260105_1", "user", `[{"type":"text","text":"now commit"}]`, t0+120, visibleMeta)
	execT(t, db, insMessage, "msg_n", "20260105_1", "assistant",
		`[{"type":"toolRequest","id":"toolu_06","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"git commit -am typo"}}}}]`, t0+121, visibleMeta)
	execT(t, db, `UPDATE sessions SET accumulated_input_tokens = 15000, accumulated_output_tokens = 900, accumulated_cost = 0.06,
		name = 'README typo', user_set_name = 1, updated_at = datetime('now') WHERE id = '20260105_1'`)
	evs, state, _ := poll(t, a, path, state)
	if got, want := kinds(evs), map[string]int{"session:title": 1, "token_usage": 1, "action:user_prompt": 1, "action:run_command": 1}; !maps.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	for _, e := range evs {
		if u := e.TokenUsage; u != nil && (!firstIDs[e.ID] || u.Input != 15000 || u.Output != 900) {
			t.Errorf("usage %s %+v: want the session's id with the grown figures", e.ID, u)
		}
		if s := e.Session; s != nil && (s.Title != "README typo" || !s.TitleByUser) {
			t.Errorf("title %+v", s)
		}
	}
	// The tool call's result comes in the next pass: same id, and the writer merges the two.
	execT(t, db, insMessage, "msg_o", "20260105_1", "user",
		`[{"type":"toolResponse","id":"toolu_06","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"exit 1"}],"isError":true}}}]`, t0+125, visibleMeta)
	res, state, _ := poll(t, a, path, state)
	if len(res) != 1 || res[0].ID != event.ID(Client, "action", "20260105_1", "toolu_06") || res[0].Action.Success == nil || *res[0].Action.Success {
		t.Fatalf("result %+v", res)
	}
	// replace_conversation deletes the session's rows and inserts them again under new ids, with
	// their message ids: nothing new.
	execT(t, db, `DELETE FROM messages WHERE session_id = '20260105_2'`)
	execT(t, db, insMessage, "msg_s1", "20260105_2", "user", `[{"type":"text","text":"run the tests"}]`, t0+3600, visibleMeta)
	again, state, _ := poll(t, a, path, state)
	if len(again) != 2 || !firstIDs[again[0].ID] || !firstIDs[again[1].ID] {
		t.Errorf("replaced conversation: %d events %v, want the prompt and its message again under their ids", len(again), kinds(again))
	}
	// A row goose could not have written is counted and passed over.
	execT(t, db, insMessage, "msg_bad", "20260105_1", "assistant", `{"type":`, t0+130, visibleMeta)
	execT(t, db, insMessage, "msg_bad2", "20260105_1", "assistant", `[]`, 0, `not json`)
	bad, state, st := poll(t, a, path, state)
	if len(bad) != 0 || st.Malformed != 1 {
		t.Errorf("malformed rows: %d events, stats %+v", len(bad), st)
	}
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Errorf("last pass %d events", len(evs))
	}
	// A session goose deletes leaves the state.
	execT(t, db, `DELETE FROM messages WHERE session_id = '20260105_2'`)
	execT(t, db, `DELETE FROM sessions WHERE id = '20260105_2'`)
	p := newDBParser(a, srcDB(path), state)
	if _, err := p.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.st.Sessions["20260105_2"]; ok || len(p.st.Sessions) != 1 {
		t.Errorf("state sessions %v", p.st.Sessions)
	}
}

// oldSchema is the schema of goose's first database releases (schema version 1: no name,
// user_set_name, session_type, provider_name, model_config_json; messages without message_id and
// metadata_json).
const oldSchema = `CREATE TABLE sessions (id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', working_dir TEXT NOT NULL,
	created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
	total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
	accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
	content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER);`

func TestPoll_OldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path, oldSchema)
	execT(t, db, `INSERT INTO sessions (id, description, working_dir, created_at, input_tokens, output_tokens)
		VALUES ('20250301_120000', 'Old session', '/work/old', '2025-03-01T12:00:00+00:00', 500, 40)`)
	execT(t, db, `INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20250301_120000', 'user', '[{"type":"text","text":"hello"}]', 1740830400)`)
	evs, _, st := poll(t, New(nil), path, nil)
	if st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
	if got, want := kinds(evs), map[string]int{"session": 1, "session:title": 1, "token_usage": 1, "action:user_prompt": 1}; !maps.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	for _, e := range evs {
		if u := e.TokenUsage; u != nil && (u.Input != 500 || u.Output != 40 || u.Reliability != event.ReliabilityUnknown) {
			t.Errorf("usage %+v: the last request's figures, no model to price", u)
		}
		if e.Kind == event.KindSession && e.Session.Title == "" && !e.Session.StartedAt.Equal(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("started %+v", e.Session)
		}
	}
}

// TestPoll_ConcurrentWriter inserts messages from another connection while the reader polls:
// every row is read once.
func TestPoll_ConcurrentWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := newDB(t, path, schemaSQL)
	execT(t, db, insSession, "20260105_9", "", 0, "user", "/w", "2026-01-05 10:00:00", "2026-01-05 10:00:00",
		nil, nil, nil, nil, nil, nil, nil, nil, nil)
	const n = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if _, err := db.Exec(insMessage, nil, "20260105_9", "user", `[{"type":"text","text":"p`+strconv.Itoa(i)+`"}]`, t0+i, visibleMeta); err != nil {
				t.Error(err)
				return
			}
			db.Exec(`UPDATE sessions SET accumulated_input_tokens = ?, accumulated_output_tokens = ? WHERE id = '20260105_9'`, (i+1)*10, i+1)
		}
	}()
	final := transcripttest.PollUntil(t, New(nil), srcDB(path), done, 2*time.Millisecond)
	prompts := 0
	for _, e := range final {
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			prompts++
		}
		if u := e.TokenUsage; u != nil && (u.Input != n*10 || u.Output != n) {
			t.Errorf("final usage %+v", u)
		}
	}
	if prompts != n {
		t.Errorf("%d prompts, want %d", prompts, n)
	}
}
