package crush

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// t0 is the fixture's first second (2026-01-01T00:00:00Z).
const t0 = int64(1767225600)

const (
	rootID  = "3b1d6a2e-8c1f-4e57-9a0b-2f6e1c7d9a10"
	agentID = "toolu_01AgentTask" // the agent tool call's id is its session's id
	titleID = "title-" + rootID
)

// newProject makes a git project with Crush's default data directory and returns the project's
// directory and the database's path.
func newProject(tb testing.TB) (dir, dbPath string) {
	tb.Helper()
	dir = filepath.Join(tb.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o700); err != nil {
		tb.Fatal(err)
	}
	return dir, filepath.Join(dir, ".crush", "crush.db")
}

// fixture writes one Crush session as its services would: a user prompt, tool calls and their
// results, an agent sub-session, the title session, a failing command, a canceled turn, a
// provider error and a summary.
func fixture(tb testing.TB, db *sql.DB, dir string) {
	tb.Helper()
	const model, prov = "claude-sonnet-4-5-20250929", "anthropic"
	stop := pFinish{Reason: "stop"}
	msg := func(id, session, role, parts string, at int64) {
		tb.Helper()
		var m, p any
		if role == "assistant" {
			m, p = model, prov
		}
		execT(tb, db, insMessage, id, session, role, parts, m, p, at, at)
	}
	execT(tb, db, insSession, rootID, nil, "List the Go files", t0, t0)
	msg("m-user1", rootID, "user", parts(tb, pText{Text: "list the go files and fix the typo in main.go"},
		pBinary{Path: "notes.txt", MIMEType: "text/plain", Data: []byte("a note")}, stop), t0)
	execT(tb, db, insSession, titleID, rootID, "Title", t0+1, t0+1)
	msg("m-title-user", titleID, "user", parts(tb, pText{Text: "Generate a concise title for: list the go files"}, stop), t0+1)
	msg("m-title-asst", titleID, "assistant", parts(tb, pText{Text: "List the Go files"}, pFinish{Reason: "end_turn", Time: t0 + 1}), t0+1)
	msg("m-asst1", rootID, "assistant", parts(tb,
		pReasoning{Thinking: "Let me look.", StartedAt: t0 + 2, FinishedAt: t0 + 3},
		pText{Text: "I'll look at the files."},
		pCall{ID: "toolu_01View", Name: "view", Input: input(tb, map[string]any{"file_path": filepath.Join(dir, "main.go")}), Finished: true},
		pCall{ID: "toolu_01Bash", Name: "bash", Input: input(tb, map[string]any{"command": "ls *.go", "timeout": 0}), Finished: true},
		pCall{ID: "toolu_01Glob", Name: "glob", Input: input(tb, map[string]any{"pattern": "**/*.go", "path": dir}), Finished: true},
		pFinish{Reason: "tool_use", Time: t0 + 4}), t0+2)
	msg("m-tool1", rootID, "tool", parts(tb,
		pResult{ToolCallID: "toolu_01View", Name: "view", Content: "<file>\n     1|package main\n</file>\n",
			Metadata: input(tb, map[string]any{"file_path": filepath.Join(dir, "main.go"), "content": "package main\n"})},
		pResult{ToolCallID: "toolu_01Bash", Name: "bash", Content: "main.go\nutil.go",
			Metadata: input(tb, map[string]any{"start_time": t0*1000 + 4100, "end_time": t0*1000 + 4350, "output": "main.go\nutil.go",
				"working_directory": dir, "exit_code": 0})},
		pResult{ToolCallID: "toolu_01Glob", Name: "glob", Content: "main.go\nutil.go",
			Metadata: input(tb, map[string]any{"number_of_files": 2, "truncated": false})},
		stop), t0+5)
	msg("m-asst2", rootID, "assistant", parts(tb,
		pCall{ID: "toolu_01Edit", Name: "edit", Input: input(tb, map[string]any{"file_path": "main.go", "old_string": "pakage", "new_string": "package"}), Finished: true},
		pCall{ID: "toolu_01Mcp", Name: "mcp_github_create_issue", Input: input(tb, map[string]any{"title": "typo in main.go"}), Finished: true},
		pCall{ID: agentID, Name: "agent", Input: input(tb, map[string]any{"prompt": "find the tests"}), Finished: true},
		pCall{ID: "toolu_01Todos", Name: "todos", Input: input(tb, map[string]any{"todos": []map[string]string{
			{"content": "fix typo", "status": "completed"}, {"content": "run tests", "status": "pending"}}}), Finished: true},
		pFinish{Reason: "tool_use", Time: t0 + 11}), t0+10)
	execT(tb, db, insSession, agentID, rootID, "New Agent Session", t0+20, t0+20)
	msg("m-sub-user", agentID, "user", parts(tb, pText{Text: "find the tests"}, stop), t0+20)
	msg("m-sub-asst", agentID, "assistant", parts(tb,
		pCall{ID: "toolu_01Ls", Name: "ls", Input: input(tb, map[string]any{"path": dir}), Finished: true},
		pFinish{Reason: "tool_use", Time: t0 + 21}), t0+21)
	msg("m-sub-tool", agentID, "tool", parts(tb,
		pResult{ToolCallID: "toolu_01Ls", Name: "ls", Content: "- proj/\n  - main_test.go\n"}, stop), t0+22)
	msg("m-sub-asst2", agentID, "assistant", parts(tb, pText{Text: "main_test.go"}, pFinish{Reason: "end_turn", Time: t0 + 23}), t0+23)
	msg("m-tool2", rootID, "tool", parts(tb,
		pResult{ToolCallID: "toolu_01Edit", Name: "edit", Content: "old_string not found in file. Make sure it matches exactly", IsError: true},
		pResult{ToolCallID: "toolu_01Mcp", Name: "mcp_github_create_issue", Content: "created issue #7"},
		pResult{ToolCallID: agentID, Name: "agent", Content: "main_test.go"},
		pResult{ToolCallID: "toolu_01Todos", Name: "todos", Content: "Todo list updated"},
		stop), t0+30)
	msg("m-asst3", rootID, "assistant", parts(tb,
		pCall{ID: "toolu_01Test", Name: "bash", Input: input(tb, map[string]any{"command": "go test ./..."}), Finished: true},
		pFinish{Reason: "tool_use", Time: t0 + 31}), t0+31)
	msg("m-tool3", rootID, "tool", parts(tb,
		pResult{ToolCallID: "toolu_01Test", Name: "bash", Content: "FAIL\texample.com/proj\n\nExit code 1",
			Metadata: input(tb, map[string]any{"start_time": t0*1000 + 31500, "end_time": t0*1000 + 33500, "exit_code": 1})},
		stop), t0+34)
	msg("m-asst4", rootID, "assistant", parts(tb, pText{Text: "The tests"},
		pFinish{Reason: "canceled", Time: t0 + 36, Message: "User canceled request"}), t0+35)
	msg("m-user2", rootID, "user", parts(tb, pText{Text: "try again"}, stop), t0+40)
	msg("m-asst5", rootID, "assistant", parts(tb,
		pFinish{Reason: "error", Time: t0 + 41, Message: "Provider Error", Details: "overloaded_error: Overloaded"}), t0+41)
	msg("m-sum", rootID, "assistant", parts(tb, pText{Text: "Summary: the typo was fixed; tests fail."},
		pFinish{Reason: "end_turn", Time: t0 + 50}), t0+50)
	execT(tb, db, "UPDATE messages SET is_summary_message = 1 WHERE id = 'm-sum'")
	execT(tb, db, "UPDATE sessions SET summary_message_id = 'm-sum', cost = 0.1234, prompt_tokens = 21000, completion_tokens = 300 WHERE id = ?", rootID)
}

// golden is an event as the golden file keeps it: the temporary directory named $DIR.
type golden struct {
	ID, Kind, Time, Session, Agent, Type, Tool, Target, ToolUseID, Message, Model string
	Success                                                                       *bool  `json:",omitempty"`
	Error                                                                         string `json:",omitempty"`
	Output                                                                        string `json:",omitempty"`
	DurationMs                                                                    int64  `json:",omitempty"`
	Cwd                                                                           string `json:",omitempty"`
}

func goldenOf(evs []event.Event, dir string) []golden {
	ids, byID := transcripttest.Merge(evs)
	clean := func(s string) string { return strings.ReplaceAll(s, filepath.Dir(dir), "$DIR") }
	var out []golden
	for _, id := range ids {
		e := byID[id]
		if e.Message != nil {
			continue // the conversation has a golden file of its own
		}
		g := golden{ID: id, Kind: string(e.Kind), Time: e.Time.Format(time.RFC3339), Session: e.SessionID}
		switch {
		case e.Action != nil:
			a := e.Action
			g.Agent, g.Type, g.Tool, g.Target, g.ToolUseID, g.Message, g.Model = a.AgentID, string(a.Type), a.Tool,
				clean(a.Target), a.ToolUseID, a.MessageID, a.Model
			g.Success, g.Error, g.Output, g.DurationMs = a.Success, clean(a.Error), clean(a.Output), a.DurationMs
		case e.Session != nil:
			g.Cwd = clean(e.Session.Cwd)
		case e.TokenUsage != nil:
			g.Model = e.TokenUsage.Model
			g.Target = fmt.Sprintf("%+v $%.6f %s", e.TokenUsage.Tokens, e.TokenUsage.CostUSD, e.TokenUsage.Reliability)
		}
		out = append(out, g)
	}
	return out
}

// TestFixture_Golden reads the fixture session and keeps its merged events in
// testdata/golden/session.golden.json (go test -update rewrites it).
func TestFixture_Golden(t *testing.T) {
	dir, path := newProject(t)
	db := newDB(t, path, false)
	fixture(t, db, dir)
	a := New([]string{filepath.Dir(path)})
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v: want nothing malformed or unknown", st)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "session.golden.json"), goldenOf(evs, dir), *update)

	types := map[event.ActionType]int{}
	for _, e := range evs {
		if e.Project != dir {
			t.Errorf("%s: project %q, want %q", e.ID, e.Project, dir)
		}
		if e.SessionID != rootID || e.Client != Client {
			t.Errorf("%s: session %q client %q", e.ID, e.SessionID, e.Client)
		}
		if e.Action != nil {
			types[e.Action.Type]++
		}
	}
	if n := len(byKind(evs, event.KindTokenUsage)); n != 0 {
		t.Errorf("%d token usages: Crush's released format records none", n)
	}
	if n := len(byKind(evs, event.KindSession)); n != 1 {
		t.Errorf("%d session events, want the root's only", n)
	}
	// Three prompts: the user's two and the agent's task (the title session's is not the user's).
	if types[event.ActionUserPrompt] != 3 || types[event.ActionContextCompacted] != 1 ||
		types[event.ActionAPIError] != 1 || types[event.ActionTurnAborted] != 1 {
		t.Errorf("action types %v", types)
	}
	acts := transcripttest.ActionsOf(evs)
	if len(acts) != 9 {
		t.Fatalf("%d tool actions, want 9", len(acts))
	}
	for _, a := range acts {
		if a.Success == nil {
			t.Errorf("%s %s: no result", a.Tool, a.ToolUseID)
		}
	}
	again, _, _ := poll(t, a, path, state)
	if len(again) != 0 {
		t.Errorf("a second pass read %d events, want none", len(again))
	}
}

// An old database (the first migration only: no provider, no summary flag or id) reads the same
// actions.
func TestPoll_OldSchema(t *testing.T) {
	dir, path := newProject(t)
	db := newDB(t, path, true)
	execT(t, db, insSession, rootID, nil, "t", t0, t0)
	execT(t, db, insMessageOld, "m1", rootID, "user", parts(t, pText{Text: "hello"}, pFinish{Reason: "stop"}), nil, t0, t0)
	execT(t, db, insMessageOld, "m2", rootID, "assistant", parts(t,
		pCall{ID: "c1", Name: "view", Input: `{"file_path":"` + filepath.Join(dir, "a.go") + `"}`, Finished: true},
		pFinish{Reason: "tool_use", Time: t0 + 1}), "gpt-4.1", t0+1, t0+1)
	execT(t, db, insMessageOld, "m3", rootID, "tool", parts(t, pResult{ToolCallID: "c1", Name: "view", Content: "x"}, pFinish{Reason: "stop"}), nil, t0+2, t0+2)
	evs, _, st := poll(t, New(nil), path, nil)
	acts := transcripttest.ActionsOf(evs)
	if st.Malformed != 0 || len(acts) != 1 || acts[0].Target != "a.go" || acts[0].Type != event.ActionReadFile ||
		acts[0].Success == nil || !*acts[0].Success || acts[0].Model != "gpt-4.1" {
		t.Fatalf("stats %+v, actions %+v", st, acts)
	}
	if !slices.ContainsFunc(evs, func(e event.Event) bool { return e.Action != nil && e.Action.Type == event.ActionUserPrompt }) {
		t.Error("no user prompt")
	}
}
