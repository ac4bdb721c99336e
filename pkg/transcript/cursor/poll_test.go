package cursor

import (
	"database/sql"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Folders of the hand-written chats: outside any repository on any machine, so each is its own
// project.
const (
	shopDir   = "/nonexistent-observer/shop"
	legacyDir = "/nonexistent-observer/legacy"
)

// c0 is 2025-12-25T19:35:08.486Z, when the hand-written chat starts.
const c0 = int64(1766691308486)

func iso(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// writeDemo writes a user directory as Cursor leaves it (the references in the package doc):
// a split-storage chat with a prompt, tool calls in every state and a bubble with token counts;
// a chat of a release that kept its bubbles inline, listed by a workspace; a chat opened and left
// empty; a damaged bubble; and rows of other kinds.
func writeDemo(tb testing.TB, user, journal string) (*sql.DB, string) {
	tb.Helper()
	path := filepath.Join(user, "globalStorage", "state.vscdb")
	db := newDB(tb, path, journal)
	put(tb, db, "ItemTable", "workbench.panel.composerChatViewPane", `{"x":1}`)
	put(tb, db, "cursorDiskKV", "composerData:c1", map[string]any{"_v": 10, "composerId": "c1", "name": "Add retries to the client",
		"createdAt": c0, "lastUpdatedAt": c0 + 60000, "status": "completed", "modelConfig": map[string]any{"modelName": "claude-4-sonnet", "maxMode": false},
		"fullConversationHeadersOnly": []any{map[string]any{"bubbleId": "b1", "type": 1}, map[string]any{"bubbleId": "b2", "type": 2}},
		"conversationMap":             map[string]any{}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b1", map[string]any{"_v": 3, "type": 1, "bubbleId": "b1", "text": "add retries to the http client",
		"createdAt": iso(c0 + 2000), "modelInfo": map[string]any{"modelName": "claude-4-sonnet"}, "workspaceUris": []string{"file://" + shopDir},
		"tokenCount": map[string]any{"inputTokens": 0, "outputTokens": 0}, "richText": "{}"})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b2", map[string]any{"_v": 3, "type": 2, "bubbleId": "b2", "capabilityType": 15, "text": "",
		"createdAt": iso(c0 + 5000), "toolFormerData": map[string]any{"tool": 40, "toolCallId": "toolu_r1", "status": "completed", "name": "read_file",
			"rawArgs": jsonString(tb, map[string]any{"target_file": shopDir + "/client.go", "limit": 100}),
			"params":  jsonString(tb, map[string]any{"targetFile": shopDir + "/client.go", "limit": 100, "charsLimit": 100000}),
			"result":  jsonString(tb, map[string]any{"contents": "package shop\n", "totalLinesInFile": 2})}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b3", map[string]any{"_v": 3, "type": 2, "bubbleId": "b3", "createdAt": iso(c0 + 9000),
		"toolFormerData": map[string]any{"tool": 15, "toolCallId": "toolu_t1", "status": "completed", "name": "run_terminal_cmd",
			"rawArgs": jsonString(tb, map[string]any{"command": "go test ./...", "is_background": false}),
			"params":  jsonString(tb, map[string]any{"command": "go test ./...", "requireUserApproval": true}),
			"result":  jsonString(tb, map[string]any{"output": "--- FAIL: TestRetry", "rejected": false, "exitCodeV2": 1})}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b4", map[string]any{"_v": 3, "type": 2, "bubbleId": "b4", "createdAt": iso(c0 + 12000),
		"toolFormerData": map[string]any{"tool": 38, "toolCallId": "toolu_e1", "status": "error", "name": "search_replace",
			"rawArgs": jsonString(tb, map[string]any{"file_path": "client.go"}), "params": jsonString(tb, map[string]any{"relativeWorkspacePath": "client.go"}),
			"result": jsonString(tb, map[string]any{"error": "old_string not found"})}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b5", map[string]any{"_v": 3, "type": 2, "bubbleId": "b5", "createdAt": iso(c0 + 15000),
		"toolFormerData": map[string]any{"tool": 0, "toolCallId": "toolu_m1", "status": "cancelled", "name": "mcp_github_create_issue",
			"rawArgs": `{"title":"retry"}`}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b6", map[string]any{"_v": 3, "type": 2, "bubbleId": "b6", "text": "Retries added.",
		"timingInfo": map[string]any{"clientStartTime": 4745281.3, "clientRpcSendTime": c0 + 20000, "clientEndTime": c0 + 30000},
		"tokenCount": map[string]any{"inputTokens": 18234, "outputTokens": 512}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:b7", map[string]any{"_v": 3, "type": 2, "bubbleId": "b7", "createdAt": iso(c0 + 31000),
		"toolFormerData": map[string]any{"tool": 15, "toolCallId": "toolu_t2", "status": "loading", "name": "run_terminal_cmd",
			"params": jsonString(tb, map[string]any{"command": "go vet ./..."})}})
	put(tb, db, "cursorDiskKV", "bubbleId:c1:bad", `{"type":2,`)
	put(tb, db, "cursorDiskKV", "composerData:c2", map[string]any{"composerId": "c2", "createdAt": c0 - 86400000, "lastUpdatedAt": c0 - 86000000,
		"modelConfig": map[string]any{"modelName": "default"}, "conversation": []any{
			map[string]any{"bubbleId": "x1", "type": 1, "text": "explain main.go"},
			map[string]any{"bubbleId": "x2", "type": 2, "text": "It starts the server.", "tokenCount": map[string]any{"inputTokens": 900, "outputTokens": 120}},
		}})
	put(tb, db, "cursorDiskKV", "composerData:empty", map[string]any{"composerId": "empty", "createdAt": c0, "fullConversationHeadersOnly": []any{}, "text": ""})
	put(tb, db, "cursorDiskKV", "checkpointId:c1:k1", `{"files":[]}`)
	// The workspace that lists c2.
	ws := filepath.Join(user, "workspaceStorage", "9f8e7d")
	wdb := newDB(tb, filepath.Join(ws, "state.vscdb"), journal)
	put(tb, wdb, "ItemTable", "composer.composerData", map[string]any{"allComposers": []any{map[string]any{"composerId": "c2", "lastUpdatedAt": c0}}})
	if err := os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"folder":"file://`+legacyDir+`"}`), 0o644); err != nil {
		tb.Fatal(err)
	}
	return db, path
}

// TestPoll_HandWritten reads the hand-written user directory, its databases in SQLite's default
// rollback journal (as VS Code's storage leaves them) and in WAL mode.
func TestPoll_HandWritten(t *testing.T) {
	for _, journal := range []string{"DELETE", "WAL"} {
		t.Run(journal, func(t *testing.T) { testHandWritten(t, journal) })
	}
}

func testHandWritten(t *testing.T, journal string) {
	_, path := writeDemo(t, t.TempDir(), journal)
	if got := rollbackJournal(path); got != (journal == "DELETE") {
		t.Errorf("rollbackJournal = %v in %s mode", got, journal)
	}
	a := New(nil)
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 1 || st.Lines != 11 {
		t.Errorf("stats %+v: want the damaged bubble counted, every chat row read", st)
	}
	want := map[string]int{"session": 2, "session:title": 1, "action:user_prompt": 2, "action:read_file": 1, "action:run_command": 2,
		"action:edit_file": 1, "action:mcp_call": 1, "token_usage": 2, "message": 9}
	if got := kinds(evs); !maps.Equal(got, want) {
		t.Errorf("kinds %v\nwant  %v", got, want)
	}
	byUse := map[string]*event.Action{}
	for _, e := range evs {
		if e.Action != nil && e.Action.ToolUseID != "" {
			byUse[e.Action.ToolUseID] = e.Action
		}
		wantProject := shopDir
		if e.SessionID == "c2" {
			wantProject = legacyDir
		}
		if e.Project != wantProject {
			t.Errorf("%s %s: project %q, want %q", e.SessionID, e.Kind, e.Project, wantProject)
		}
		if u := e.TokenUsage; u != nil {
			switch e.SessionID {
			case "c1":
				if u.Input != 18234 || u.Output != 512 || u.Model != "claude-4-sonnet" || !e.Time.Equal(time.UnixMilli(c0+20000)) {
					t.Errorf("usage %+v at %v", u, e.Time)
				}
			case "c2":
				if u.Input != 900 || u.Reliability != event.ReliabilityUnknown || u.CostUSD != 0 {
					t.Errorf("usage of the pseudo-model default %+v", u)
				}
			}
		}
	}
	if a := byUse["toolu_r1"]; a == nil || a.Type != event.ActionReadFile || a.Target != "client.go" || a.Output != "package shop\n" || a.Success == nil || !*a.Success {
		t.Errorf("read %+v", a)
	}
	if a := byUse["toolu_t1"]; a == nil || a.Target != "go test ./..." || a.Success == nil || *a.Success || a.Error != "exit code 1" {
		t.Errorf("failed command %+v", a)
	}
	if a := byUse["toolu_e1"]; a == nil || a.Type != event.ActionEditFile || a.Target != "client.go" || a.Error != "old_string not found" {
		t.Errorf("failed edit %+v", a)
	}
	if a := byUse["toolu_m1"]; a == nil || a.Success == nil || *a.Success || a.Error != "cancelled" {
		t.Errorf("cancelled MCP call %+v", a)
	}
	if a := byUse["toolu_t2"]; a == nil || a.Success != nil {
		t.Errorf("running command %+v: no result yet", a)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "handwritten.golden.json"), transcripttest.Views(transcripttest.WithoutMessages(evs), timeLayout), *update)
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "handwritten.conversation.golden.json"), transcripttest.ConversationsLines(transcripttest.Conversations(evs)), *update)
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Errorf("second pass %d events %v, want none", len(evs), kinds(evs))
	}
}

// TestPoll_Updates has Cursor finish a running tool call and rename a chat (both rows replaced
// under new rowids) and open a chat that was empty: each is read once, under its ids.
func TestPoll_Updates(t *testing.T) {
	db, path := writeDemo(t, t.TempDir(), "DELETE")
	a := New(nil)
	_, state, _ := poll(t, a, path, nil)
	put(t, db, "cursorDiskKV", "bubbleId:c1:b7", map[string]any{"_v": 3, "type": 2, "bubbleId": "b7", "createdAt": iso(c0 + 31000),
		"toolFormerData": map[string]any{"tool": 15, "toolCallId": "toolu_t2", "status": "completed", "name": "run_terminal_cmd",
			"params": jsonString(t, map[string]any{"command": "go vet ./..."}), "result": jsonString(t, map[string]any{"output": "", "exitCodeV2": 0})}})
	put(t, db, "cursorDiskKV", "composerData:c1", map[string]any{"_v": 10, "composerId": "c1", "name": "HTTP client retries",
		"createdAt": c0, "lastUpdatedAt": c0 + 90000, "modelConfig": map[string]any{"modelName": "gpt-5"},
		"fullConversationHeadersOnly": []any{map[string]any{"bubbleId": "b1", "type": 1}}})
	put(t, db, "cursorDiskKV", "composerData:empty", map[string]any{"composerId": "empty", "createdAt": c0 + 100000,
		"fullConversationHeadersOnly": []any{map[string]any{"bubbleId": "e1", "type": 1}}})
	put(t, db, "cursorDiskKV", "bubbleId:empty:e1", map[string]any{"type": 1, "bubbleId": "e1", "text": "hello", "createdAt": iso(c0 + 100500)})
	evs, state, _ := poll(t, a, path, state)
	want := map[string]int{"action:run_command": 1, "session:title": 1, "session:model": 1, "session": 1, "action:user_prompt": 1,
		"message": 2} // the finished call's (the same again), the new chat's prompt
	if got := kinds(evs); !maps.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	for _, e := range evs {
		if a := e.Action; a != nil && a.ToolUseID == "toolu_t2" && (e.ID != event.ID(Client, "action", "c1", "toolu_t2") || a.Success == nil || !*a.Success) {
			t.Errorf("finished command %s %+v", e.ID, a)
		}
		if s := e.Session; s != nil && s.Title != "" && s.Title != "HTTP client retries" {
			t.Errorf("title %+v", s)
		}
	}
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Errorf("last pass %d events", len(evs))
	}
}

// TestPoll_NoChats reads a state database of a release before the Composer (no cursorDiskKV).
func TestPoll_NoChats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "globalStorage", "state.vscdb")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"); err != nil {
		t.Fatal(err)
	}
	if evs, _, st := poll(t, New(nil), path, nil); len(evs) != 0 || st.Malformed != 0 {
		t.Errorf("%d events, %+v", len(evs), st)
	}
}

// TestPoll_Batches writes more bubbles than one batch reads, from another connection while the
// reader polls: each is read.
func TestPoll_Batches(t *testing.T) {
	db, path := writeDemo(t, t.TempDir(), "DELETE")
	const n = 3*batchRows + 7
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			id := "p" + time.UnixMilli(int64(i)).UTC().Format("150405.000")
			if _, err := db.Exec("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", "bubbleId:c1:"+id,
				[]byte(`{"type":1,"bubbleId":"`+id+`","text":"prompt `+id+`","createdAt":"`+iso(c0+int64(i))+`"}`)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	final := transcripttest.PollUntil(t, New(nil), srcOf(path), done, time.Millisecond)
	prompts := 0
	for _, e := range final {
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			prompts++
		}
	}
	if prompts != n+2 {
		t.Errorf("%d prompts, want %d", prompts, n+2)
	}
}
