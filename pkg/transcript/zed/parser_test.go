package zed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

func TestPoll_CurrentThread(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	writeFixtures(t, path)
	evs, _, st := poll(t, path, nil)
	if st.Lines != 3 || st.Malformed != 0 {
		t.Errorf("stats %+v, want 3 threads read, none malformed", st)
	}
	main := ofThread(evs, mainID, "")
	for _, e := range main {
		if e.Client != Client || e.Project != "/nonexistent-observer/webapp" || e.Time.IsZero() {
			t.Fatalf("event %+v: want client zed, the thread's project and a time", e)
		}
	}
	created, _ := time.Parse(time.RFC3339Nano, mainCreated)
	updated, _ := time.Parse(time.RFC3339Nano, mainUpdated)
	sess := byKind(main, event.KindSession)
	if len(sess) != 3 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(created) ||
		sess[0].Session.Cwd != "/nonexistent-observer/webapp" || sess[0].Session.GitBranch != "fix/flaky-login" ||
		sess[0].Session.Model != "claude-sonnet-4-5-latest" || sess[0].Session.TranscriptPath != path ||
		sess[1].Session.Title != "Flaky login test" || sess[2].Session.Model != "claude-sonnet-4-5-latest" {
		t.Fatalf("session events %+v: want started (created_at, folder, branch, model), the title, the model", sess)
	}
	usage := byKind(main, event.KindTokenUsage)
	if len(usage) != 1 {
		t.Fatalf("%d usage events, want one per thread", len(usage))
	}
	u := usage[0]
	if u.ID != event.ID(Client, "usage", mainID) || !u.Time.Equal(created) ||
		u.TokenUsage.Tokens != (event.Tokens{Input: 18, Output: 1161, CacheCreation: 9030, CacheRead: 69480}) ||
		u.TokenUsage.Model != "claude-sonnet-4-5-latest" || u.TokenUsage.CostUSD <= 0 ||
		u.TokenUsage.Reliability != event.ReliabilityApproximate || u.TokenUsage.Origin != "transcript" {
		t.Errorf("usage %+v at %v: want cumulative_token_usage as it is (every request, not the per-turn last ones), priced", u.TokenUsage, u.Time)
	}
	acts := actionsByTool(main)
	if a := acts["user_prompt"]; a == nil || a.Target != "The login test is flaky, find out why" {
		t.Errorf("prompt %+v: want the typed text, not the mention's content", a)
	}
	if a := acts["read_file"]; a == nil || a.Type != event.ActionReadFile || a.Target != "test/login.test.ts" ||
		a.Success == nil || !*a.Success || !strings.Contains(a.Output, "sleep(50)") || a.ToolUseID != "toolu_01A8kVgqXkq2" {
		t.Errorf("read_file %+v: want the path relative to the worktree, succeeded, the content as output", a)
	}
	if a := acts["terminal"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "npm test -- login" || a.Success == nil || !*a.Success {
		t.Errorf("terminal %+v", a)
	}
	if a := acts["grep"]; a == nil || a.Type != event.ActionSearchText || a.Target != `sleep\( in webapp/src/**/*.ts` {
		t.Errorf("grep %+v: want the regex and include pattern (input without the type/value wrapper)", a)
	}
	if a := acts["spawn_agent"]; a == nil || a.Type != event.ActionSpawnSubagent || a.Target != "Find timer helpers" {
		t.Errorf("spawn_agent %+v", a)
	}
	var edits []*event.Action
	for _, e := range byKind(main, event.KindAction) {
		if e.Action.Tool == "edit_file" {
			edits = append(edits, e.Action)
		}
	}
	if len(edits) != 2 || edits[0].Type != event.ActionEditFile || edits[0].Success == nil || *edits[0].Success ||
		!strings.Contains(edits[0].Error, "Could not find matching text") || edits[1].Success == nil || !*edits[1].Success ||
		edits[1].Target != "test/login.test.ts" {
		t.Errorf("edits %+v: want a failed edit with Zed's error, then one that worked", edits)
	}
	var roles []string
	for _, e := range byKind(main, event.KindMessage) {
		roles = append(roles, e.Message.Role)
		if e.Message.Role == event.RoleUser && !e.Time.Equal(created) && e.Message.Text == "The login test is flaky, find out why" {
			t.Errorf("first prompt at %v, want created_at", e.Time)
		}
		if e.Message.Text == "Replaced the sleep with fake timers." && !e.Time.Equal(updated) {
			t.Errorf("a later message at %v, want the thread's updated_at", e.Time)
		}
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,tool_call,tool_call,tool_call,assistant,user,tool_call,tool_call,assistant" {
		t.Errorf("message roles %s", got)
	}
}

func TestPoll_SubagentAndLegacy(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	writeFixtures(t, path)
	evs, _, _ := poll(t, path, nil)
	sub := ofThread(evs, mainID, subID)
	if n := len(filter(evs, func(e *event.Event) bool { return e.Session != nil && e.Session.Model == "gpt-5" })); n != 0 {
		t.Errorf("%d session events of the subagent's thread: it is part of its parent's session", n)
	}
	usage := byKind(sub, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].ID != event.ID(Client, "usage", subID) ||
		usage[0].TokenUsage.Tokens != (event.Tokens{Input: 1200, Output: 90, CacheRead: 256}) ||
		usage[0].TokenUsage.Model != "gpt-5" || usage[0].TokenUsage.CostUSD <= 0 {
		t.Errorf("subagent usage %+v: want its request_token_usage (no cumulative figures), in the parent's session", usage)
	}
	acts := actionsByTool(sub)
	if acts["user_prompt"] != nil {
		t.Errorf("the parent's task is no prompt of the user's")
	}
	if a := acts["find_path"]; a == nil || a.Type != event.ActionSearchFiles || a.Target != "webapp/src/**/*timer*" || a.AgentID != subID {
		t.Errorf("find_path %+v", a)
	}

	legacy := ofThread(evs, legacyID, "")
	usage = byKind(legacy, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 2400, Output: 150}) ||
		usage[0].TokenUsage.Model != "claude-sonnet-4-20250514" || usage[0].TokenUsage.CostUSD <= 0 {
		t.Errorf("legacy usage %+v: want cumulative_token_usage, not the padded per-message list", usage)
	}
	acts = actionsByTool(legacy)
	if a := acts["edit_file"]; a == nil || a.Target != "config.go" || a.Success == nil || !*a.Success {
		t.Errorf("legacy edit %+v (worktree from the project snapshot)", a)
	}
	if a := acts["terminal"]; a == nil || a.Success == nil || *a.Success || a.Error != "Permission to run tool action denied by user" {
		t.Errorf("legacy terminal %+v: want failed, denied", a)
	}
	if a := acts["user_prompt"]; a == nil || a.Target != "rename loadConfig to readConfig" {
		t.Errorf("legacy prompt %+v", a)
	}
	if s := byKind(legacy, event.KindSession); len(s) < 2 || s[0].Session.Cwd != "/nonexistent-observer/cfg" || s[1].Session.Title != "Rename config loader" {
		t.Errorf("legacy session events %+v", s)
	}
}

func TestPoll_RereadAndAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeFixtures(t, path)
	first, state, _ := poll(t, path, nil)
	if again, _, _ := poll(t, path, state); len(again) != 0 {
		t.Errorf("a pass over an unchanged database emitted %d events", len(again))
	}
	fresh, _, _ := poll(t, path, nil)
	ids := map[string]bool{}
	for _, e := range first {
		ids[e.ID] = true
	}
	for _, e := range fresh {
		if !ids[e.ID] {
			t.Fatalf("a read without state gave a new id %s (%s)", e.ID, e.Kind)
		}
	}
	if len(fresh) != len(first) {
		t.Errorf("a read without state emitted %d events, the first %d", len(fresh), len(first))
	}

	// Zed saves the thread again with a third turn: the rows's data and updated_at change.
	doc := string(fixture(t, mainID))
	turn := `{"User":{"id":"e9d8c7b6-a5f4-4e3d-8c2b-1a0f9e8d7c6b","content":[{"Text":"run the tests again"}]}},
{"Agent":{"content":[{"ToolUse":{"id":"toolu_01G8xAd6So4n","name":"terminal","raw_input":"","input":{"type":"json","value":{"command":"npm test","cd":"webapp"}},"is_input_complete":true,"thought_signature":null}}],"tool_results":{},"reasoning_details":null}}
],
"updated_at"`
	doc = strings.Replace(doc, "}}\n],\n\"updated_at\"", "}},\n"+turn, 1)
	doc = strings.Replace(doc, `"cumulative_token_usage":{"input_tokens":18,"output_tokens":1161`, `"cumulative_token_usage":{"input_tokens":25,"output_tokens":1240`, 1)
	if !strings.Contains(doc, "run the tests again") || !strings.Contains(doc, `"output_tokens":1240`) {
		t.Fatal("fixture edit did not apply")
	}
	later := "2026-02-10T09:25:00.000001+00:00"
	execT(t, db, upsertThread, mainID, nil, "/nonexistent-observer/webapp", "0", "Flaky login test", later, "zstd",
		compress(t, []byte(doc)), "2026-02-10T09:25:00.000001+00:00")
	evs, state, _ := poll(t, path, state)
	var kinds []string
	for _, e := range evs {
		if e.SessionID != mainID {
			t.Errorf("an unchanged thread emitted %+v", e)
		}
		k := string(e.Kind)
		if e.Action != nil {
			k += ":" + string(e.Action.Type)
		}
		kinds = append(kinds, k)
	}
	if got := strings.Join(kinds, ","); got != "action:user_prompt,message,action:run_command,message,token_usage" {
		t.Fatalf("after a new turn: %s, want only the new turn and the grown usage", got)
	}
	at, _ := time.Parse(time.RFC3339Nano, later)
	if !evs[0].Time.Equal(at) || evs[0].Action.Target != "run the tests again" {
		t.Errorf("new prompt %+v at %v, want the pass's updated_at", evs[0].Action, evs[0].Time)
	}
	if u := evs[4]; u.ID != event.ID(Client, "usage", mainID) || u.TokenUsage.Output != 1240 {
		t.Errorf("usage %+v: want the thread's one id with the grown figures", u.TokenUsage)
	}
	if evs[2].Action.Success != nil {
		t.Errorf("a call without its result yet has no outcome: %+v", evs[2].Action)
	}

	// The result arrives: the last message alone is read again.
	doc = strings.Replace(doc, `"tool_results":{},"reasoning_details":null}}
],`, `"tool_results":{"toolu_01G8xAd6So4n":{"tool_use_id":"toolu_01G8xAd6So4n","tool_name":"terminal","is_error":false,"content":{"Text":"3 passing"},"output":null}},"reasoning_details":null}}
],`, 1)
	execT(t, db, upsertThread, mainID, nil, "/nonexistent-observer/webapp", "0", "Flaky login test", "2026-02-10T09:25:07+00:00", "zstd",
		compress(t, []byte(doc)), "")
	evs, _, _ = poll(t, path, state)
	if len(evs) != 2 || evs[0].Action == nil || evs[0].Action.Success == nil || !*evs[0].Action.Success || !evs[0].Time.Equal(at) {
		t.Errorf("after the result: %+v, want the call again with its outcome at its first time, and its message", evs)
	}
}

func TestPoll_Malformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeFixtures(t, path)
	execT(t, db, insThread, "11111111-2222-4333-8444-555555555555", nil, nil, nil, "Broken", "2026-02-11T10:00:00+00:00", "zstd",
		[]byte("not zstd at all"), "2026-02-11T10:00:00+00:00")
	execT(t, db, insThread, "66666666-7777-4888-8999-000000000000", nil, nil, nil, "Cut", "2026-02-11T10:00:01+00:00", "json",
		[]byte(`{"messages":[{"User":`), "2026-02-11T10:00:01+00:00")
	evs, state, st := poll(t, path, nil)
	if st.Lines != 5 || st.Malformed != 2 {
		t.Errorf("stats %+v, want 5 threads read, 2 malformed", st)
	}
	if n := len(byKind(evs, event.KindTokenUsage)); n != 3 {
		t.Errorf("%d usage events, want the 3 good threads' (nothing else lost)", n)
	}
	if again, _, st := poll(t, path, state); len(again) != 0 || st.Malformed != 0 {
		t.Errorf("a damaged row is read again only when it changes: %d events, %+v", len(again), st)
	}
	p, _ := New(nil).NewParser(srcDB(path), nil)
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record on a database: %v, want ErrMalformed", err)
	}
	if _, err := p.(transcript.Poller).Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), DBName)
	execT(t, newDBNoSchema(t, other), "CREATE TABLE unrelated (x)")
	q, _ := New(nil).NewParser(srcDB(other), nil)
	if _, err := q.(transcript.Poller).Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "no threads table") {
		t.Errorf("a database without threads: %v", err)
	}
}

func TestPoll_DeletedThread(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db := writeFixtures(t, path)
	_, state, _ := poll(t, path, nil)
	execT(t, db, "DELETE FROM threads WHERE id = ?", legacyID)
	evs, state, _ := poll(t, path, state)
	if len(evs) != 0 || strings.Contains(string(state), legacyID) {
		t.Errorf("after a delete: %d events, state %s", len(evs), state)
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	writeFixtures(t, filepath.Join(dir, DBName))
	if err := os.WriteFile(filepath.Join(dir, "other.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := New([]string{dir, filepath.Join(dir, "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || !srcs[0].Database || srcs[0].Path != filepath.Join(dir, DBName) || srcs[0].Client != Client {
		t.Errorf("Discover: %+v, want threads.db as a database source", srcs)
	}
	if srcs, err := New([]string{filepath.Join(dir, "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv("FLATPAK_XDG_DATA_HOME", "")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if got := defaultRoots("linux"); len(got) != 1 || got[0] != "/tmp/xdg/zed/threads" {
		t.Errorf("linux with XDG_DATA_HOME: %v", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	if got := defaultRoots("linux"); len(got) != 1 || got[0] != filepath.Join(home, ".local", "share", "zed", "threads") {
		t.Errorf("linux default: %v", got)
	}
	t.Setenv("FLATPAK_XDG_DATA_HOME", "/tmp/flatpak")
	if got := defaultRoots("linux"); len(got) != 2 || got[0] != "/tmp/flatpak/zed/threads" {
		t.Errorf("linux in Flatpak: %v", got)
	}
	if got := defaultRoots("darwin"); len(got) != 1 || got[0] != filepath.Join(home, "Library", "Application Support", "Zed", "threads") {
		t.Errorf("macOS: %v", got)
	}
}
