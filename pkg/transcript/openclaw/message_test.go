package openclaw

import (
	"database/sql"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// countRows counts the messages the database's transcript rows hold, per session and role, read
// apart from the parser: a user message with text is a prompt, an assistant's text and thinking
// blocks with text replies and thoughts, its toolCall blocks tool calls, a compaction entry's
// summary a summary.
func countRows(tb testing.TB, path string) map[string]map[string]int {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT session_id, event_json, event_zstd FROM transcript_events ORDER BY session_id, seq")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var sid string
		var js sql.NullString
		var z []byte
		if err := rows.Scan(&sid, &js, &z); err != nil {
			tb.Fatal(err)
		}
		data := []byte(js.String)
		if !js.Valid {
			if data, err = dec.DecodeAll(z, nil); err != nil {
				tb.Fatal(err)
			}
		}
		var e struct {
			Type    string `json:"type"`
			Summary string `json:"summary"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(data, &e) != nil {
			continue
		}
		if out[sid] == nil {
			out[sid] = map[string]int{}
		}
		n := out[sid]
		if e.Type == "compaction" && strings.TrimSpace(e.Summary) != "" {
			n[event.RoleSummary]++
		}
		if e.Type != "message" {
			continue
		}
		type blk struct{ Type, Text, Thinking string }
		var blocks []blk
		var s string
		if json.Unmarshal(e.Message.Content, &s) == nil {
			blocks = []blk{{Type: "text", Text: s}}
		} else {
			_ = json.Unmarshal(e.Message.Content, &blocks)
		}
		for _, b := range blocks {
			switch {
			case e.Message.Role == "user" && b.Type == "text" && strings.TrimSpace(b.Text) != "":
				n[event.RoleUser]++
			case e.Message.Role == "assistant" && b.Type == "text" && strings.TrimSpace(b.Text) != "":
				n[event.RoleAssistant]++
			case e.Message.Role == "assistant" && b.Type == "thinking" && strings.TrimSpace(b.Thinking) != "":
				n[event.RoleThinking]++
			case e.Message.Role == "assistant" && b.Type == "toolCall":
				n[event.RoleToolCall]++
			}
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestMessages_Database checks the conversation of each session of the real OpenClaw's database
// against testdata/golden/database.messages (-update rewrites it), its count per role against
// the rows read apart, and that a second read gives the same ids. (No corpus holds OpenClaw
// records: these fixtures are the real client's.)
func TestMessages_Database(t *testing.T) {
	a := New(nil)
	evs, _ := poll(t, a, dbSrc(t, fixDB), nil)
	convs := transcripttest.Conversations(evs)
	transcripttest.GoldenText(t, filepath.Join("testdata", "golden", "database.messages"), transcripttest.ConversationsText(convs), *update)
	want := countRows(t, abs(t, fixDB))
	for sid, c := range convs {
		got := map[string]int{}
		for _, e := range c {
			got[e.Message.Role]++
			if e.Message.Role == event.RoleToolCall && (e.Message.ToolUseID == "" || e.Message.Tool == "") {
				t.Errorf("tool call %+v", e.Message)
			}
		}
		if !maps.Equal(got, want[sid]) {
			t.Errorf("%s: messages per role %v, the rows say %v", sid, got, want[sid])
		}
	}
	if len(convs) != len(want) {
		t.Errorf("%d conversations, %d sessions", len(convs), len(want))
	}
	again, _ := poll(t, a, dbSrc(t, fixDB), nil)
	if a, b := transcripttest.ConversationsText(convs), transcripttest.ConversationsText(transcripttest.Conversations(again)); a != b {
		t.Errorf("a second read differs")
	}
	for k, c := range transcripttest.Conversations(again) {
		for i, e := range c {
			if e.ID != convs[k][i].ID {
				t.Errorf("%s: message %d has id %s, then %s", k, i, convs[k][i].ID, e.ID)
			}
		}
	}
}

// A legacy session file and its import into the database are one conversation (the other fields
// are compared by TestParser_LegacyFileMatchesImport).
func TestMessages_LegacyFile(t *testing.T) {
	a := New(nil)
	fileEvs, _ := parseFile(t, a, fileSrc(t, fixLegacy))
	dbEvs, _ := poll(t, a, dbSrc(t, fixMigrated), nil)
	file, imported := transcripttest.ConversationsText(transcripttest.Conversations(fileEvs)), transcripttest.ConversationsText(transcripttest.Conversations(dbEvs))
	if file != imported || !strings.Contains(file, "user\t\tlist the files\n") {
		t.Errorf("file:\n%s\nimport:\n%s", file, imported)
	}
}

// A subagent's session (a child window) is a conversation under its root session, each message
// with its AgentID and Sidechain.
func TestMessages_Subagent(t *testing.T) {
	path, db := copyDB(t, fixDB)
	const child = "0c0c0c0c-0000-4000-8000-00000000c41d"
	execT(t, db, `INSERT INTO session_windows (session_id, session_key, session_scope, created_at, updated_at, parent_session_key, spawned_by)
	  VALUES (?, 'agent:main:subagent:0c0c', 'conversation', 1796166100000, 1796166100000, 'agent:main:chat', 'agent:main:chat')`, child)
	execT(t, db, `INSERT INTO transcript_events (session_id, seq, event_json, created_at)
	  VALUES (?, 0, '{"type":"session","version":4,"id":"`+child+`","timestamp":"2026-12-01T23:01:40.000Z","cwd":"/tmp/oc-fx/proj"}', 1796166100000),
	         (?, 1, '{"type":"message","id":"c1","parentId":null,"timestamp":"2026-12-01T23:01:41.000Z","message":{"role":"user","content":"child task","timestamp":1796166101000}}', 1796166101000),
	         (?, 2, '{"type":"message","id":"c2","parentId":"c1","timestamp":"2026-12-01T23:01:42.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"easy"},{"type":"text","text":"done"}],"provider":"fake","model":"gpt-5.2","responseId":"chatcmpl-c2","usage":{"input":1,"output":1},"stopReason":"stop","timestamp":1796166102000}}', 1796166102000)`,
		child, child, child)
	evs, _ := poll(t, New(nil), dbSrc(t, path), nil)
	got := transcripttest.Conversations(evs)[sessChat+"/"+child]
	if s := transcripttest.ConversationsText(map[string][]event.Event{"child": got}); s != "# child\n["+child+"] user\t\tchild task\n["+child+"] thinking\t\teasy\n["+child+"] assistant\t\tdone\n" {
		t.Errorf("subagent conversation:\n%s", s)
	}
	for _, e := range got {
		if e.SessionID != sessChat || e.Message.AgentID != child || !e.Message.Sidechain {
			t.Errorf("%s: session %s agent %q sidechain %v", e.ID, e.SessionID, e.Message.AgentID, e.Message.Sidechain)
		}
	}
}
