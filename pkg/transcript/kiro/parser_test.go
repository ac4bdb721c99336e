package kiro

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	writeDB(t, dir)
	home, _ := filepath.Abs(filepath.Join("testdata", "home"))
	srcs, err := New([]string{home, dir, filepath.Join(dir, "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	// Sources come sorted by path; where the testdata and the temporary directory sort
	// depends on where the checkout is, so the lines are compared as a set.
	if !sort.SliceIsSorted(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path }) {
		t.Errorf("Discover: sources not sorted by path: %v", srcs)
	}
	var got []string
	for _, s := range srcs {
		kind := "lines"
		switch {
		case s.Database:
			kind = "database"
		case s.Document:
			kind = "document"
		}
		got = append(got, kind+" "+s.SessionID+" "+filepath.Base(s.Path))
	}
	want := []string{
		"database  " + DBName,
		"lines " + kasID + " " + kasMessages,
		"document " + v2ID + " " + v2ID + ".json",
		"lines " + v2ID + " " + v2ID + ".jsonl",
		"document " + subID + " " + subID + ".json",
		"lines " + subID + " " + subID + ".jsonl",
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Discover:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if srcs, err := New([]string{filepath.Join(dir, "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("an absent root: %v, %v", srcs, err)
	}
	wd := New([]string{home}).WatchDirs()
	if !strings.Contains(strings.Join(wd, "\n"), filepath.Join(home, "sessions", kasBucket)) {
		t.Errorf("WatchDirs %v: want the bucket, where new sessions appear", wd)
	}
}

func TestKAS(t *testing.T) {
	evs, p := parse(t, srcOf(kasPath(), kasID))
	for _, e := range evs {
		if e.SessionID != kasID || e.Project != "/home/dev/shop-api" {
			t.Fatalf("event %+v: want the session's id and the workspace as project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 3 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/shop-api" ||
		!sess[0].Time.Equal(time.Date(2026, 3, 12, 10, 2, 11, 412e6, time.UTC)) ||
		sess[1].Session.Title != "Fix the leap-year date parser" || sess[2].Session.Model != "claude-sonnet-4.5" {
		t.Errorf("session events %+v: want started at createdAt in the workspace, the title, the model", sess)
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Errorf("%d usage events: the KAS store keeps credits only, no token counts", len(u))
	}
	acts := actions(evs)
	if a := acts["tooluse_kas01"]; a == nil || a.Type != event.ActionReadFile || a.Target != "src/date/parse.ts" ||
		a.Success == nil || !*a.Success || !strings.Contains(a.Output, "parseDate") || a.Tool != "readFile" {
		t.Errorf("readFile %+v", a)
	}
	if a := acts["tooluse_kas02"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "npm test -- date" ||
		a.Success == nil || *a.Success || !strings.Contains(a.Error, "RangeError") {
		t.Errorf("executeBash %+v: want npm test, failed, its output as the error", a)
	}
	if a := acts["tooluse_kas03"]; a == nil || a.Type != event.ActionEditFile || a.Target != "src/date/parse.ts" || a.Success == nil || !*a.Success {
		t.Errorf("strReplace %+v", a)
	}
	if a := acts["user_prompt:the date parser test fails on Feb 29, fix it"]; a == nil {
		t.Errorf("the session_start's content is the first prompt: %v", acts)
	}
	if a := acts["user_prompt:thanks, now run the whole suite"]; a == nil {
		t.Errorf("the second prompt is missing: %v", acts)
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\tthe date parser test fails on Feb 29, fix it",
		"thinking\t\tThe parser probably rejects day 29 in February unconditional",
		"tool_call\treadFile\tsrc/date/parse.ts",
		"tool_call\texecuteBash\tnpm test -- date",
		"tool_call\tstrReplace\tsrc/date/parse.ts",
		"assistant\t\tFixed: February 29 is now accepted in leap years (src/date/p",
		"user\t\tthanks, now run the whole suite",
		"tool_call\texecuteBash\tnpm test",
		"assistant\t\tAll 214 tests pass.")
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A file read line by line, each line by a parser resumed from the state the one before left,
// gives what one pass gives.
func TestLines_Resumed(t *testing.T) {
	for _, src := range []transcript.Source{srcOf(kasPath(), kasID), srcOf(cliPath(v2ID, ".jsonl"), v2ID)} {
		one, _ := parse(t, src)
		again, err := transcripttest.Resumed(t, New(nil), src)
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.SameEvents(t, one, again)
	}
}

func TestCLILog(t *testing.T) {
	evs, p := parse(t, srcOf(cliPath(v2ID, ".jsonl"), v2ID))
	for _, e := range evs {
		if e.SessionID != v2ID || e.Project != "/home/dev/infra" || e.Kind == event.KindSession || e.Kind == event.KindTokenUsage {
			t.Fatalf("event %+v: want the session, its project, no session or usage event (those come from <id>.json)", e)
		}
	}
	acts := actions(evs)
	if a := acts["tooluse_v2a"]; a == nil || a.Type != event.ActionReadFile || a.Target != "scripts/deploy.sh" || a.Success == nil || !*a.Success {
		t.Errorf("read %+v: want the operation's path relative to the project", a)
	}
	if a := acts["tooluse_v2b"]; a == nil || a.Type != event.ActionEditFile || a.Target != "scripts/deploy.sh" || a.Tool != "write" {
		t.Errorf("write strReplace %+v: want edit_file", a)
	}
	if a := acts["tooluse_v2c"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "DRY_RUN=1 sh scripts/deploy.sh" ||
		a.Success == nil || *a.Success || !strings.Contains(a.Error, "parameter not set") {
		t.Errorf("shell %+v: want failed by its exit status, stderr as the error", a)
	}
	if a := acts["tooluse_v2d"]; a == nil || a.Type != event.ActionSpawnSubagent || a.Target != "find other scripts that call rsync" {
		t.Errorf("use_subagent %+v", a)
	}
	if a := acts["tooluse_v2e"]; a == nil || a.Type != event.ActionEditFile || a.Target != "README.md" {
		t.Errorf("write insert %+v: want edit_file", a)
	}
	if a := acts[string(event.ActionContextCompacted)+":"]; a == nil {
		t.Errorf("the compaction is no context_compacted action: %v", acts)
	}
	prompts := 0
	for _, a := range acts {
		if a.Type == event.ActionUserPrompt {
			prompts++
		}
	}
	if prompts != 2 {
		t.Errorf("%d prompts, want 2", prompts)
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\tadd a --dry-run flag to the deploy script",
		"thinking\t\tRead scripts/deploy.sh before changing it.",
		"assistant\t\tLet me read the script first.",
		"tool_call\tread\tscripts/deploy.sh",
		"tool_call\twrite\tscripts/deploy.sh",
		"tool_call\tshell\tDRY_RUN=1 sh scripts/deploy.sh",
		"tool_call\tuse_subagent\tfind other scripts that call rsync",
		"assistant\t\tThe dry run needs `set -u` removed; the flag itself is in pl",
		"summary\t\tThe user asked for a --dry-run flag in scripts/deploy.sh; it",
		"user\t\talso update the README",
		"tool_call\twrite\tREADME.md",
		"assistant\t\tREADME updated.")
	if got := byKind(evs, event.KindMessage)[0].Time; !got.Equal(time.Unix(1773311520, 0)) {
		t.Errorf("first message at %v, want the prompt's meta.timestamp", got)
	}
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A subagent's log belongs to its parent's session: the parent's id, its own as AgentID, its task
// a message but no prompt.
func TestCLILog_Subagent(t *testing.T) {
	evs, _ := parse(t, srcOf(cliPath(subID, ".jsonl"), subID))
	for _, e := range evs {
		agent := ""
		switch {
		case e.Action != nil:
			agent = e.Action.AgentID
		case e.Message != nil:
			agent = e.Message.AgentID
		}
		if e.SessionID != v2ID || agent != subID {
			t.Fatalf("event %+v: want the parent session and the subagent's id", e)
		}
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			t.Errorf("the subagent's task is a prompt: %+v", e.Action)
		}
	}
	if a := actions(evs)["tooluse_s1"]; a == nil || a.Type != event.ActionSearchText || a.Target != "rsync in scripts" {
		t.Errorf("grep %+v", a)
	}
}

func TestCLIMeta_Usage(t *testing.T) {
	evs, _ := parse(t, srcOf(cliPath(v2ID, ".json"), v2ID))
	sess := byKind(evs, event.KindSession)
	if len(sess) < 3 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/infra" ||
		!sess[0].Time.Equal(time.Date(2026, 3, 12, 10, 31, 58, 120532000, time.UTC)) ||
		sess[1].Session.Title != "add a --dry-run flag to the deploy script" {
		t.Errorf("session events %+v", sess)
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 {
		t.Fatalf("%d usage events, want 1 (the second turn's figures are Kiro's zeros)", len(usage))
	}
	u := usage[0].TokenUsage
	if u.Tokens != (event.Tokens{Input: 1840, Output: 412, CacheRead: 20480, CacheCreation: 3072}) ||
		u.Model != "claude-sonnet-4.5" || u.MessageID != "a-3" || u.Reliability != event.ReliabilityApproximate ||
		!usage[0].Time.Equal(time.Date(2026, 3, 12, 10, 32, 41, 512204000, time.UTC)) {
		t.Errorf("usage %+v at %v: want the turn's four figures as they are, at its end_timestamp", u, usage[0].Time)
	}
	if u.CostUSD <= 0 {
		t.Errorf("cost %v: claude-sonnet-4.5 is priced", u.CostUSD)
	}
	models := ""
	for _, s := range sess {
		if s.Session.Model != "" {
			models += s.Session.Model + ","
		}
	}
	if models != "claude-sonnet-4.5,auto," {
		t.Errorf("models %q", models)
	}

	// The subagent's usage is its own, under the parent's session.
	sub, _ := parse(t, srcOf(cliPath(subID, ".json"), subID))
	if len(byKind(sub, event.KindSession)) != 0 {
		t.Errorf("a subagent has session events of its own: %+v", sub)
	}
	su := byKind(sub, event.KindTokenUsage)
	if len(su) != 1 || su[0].SessionID != v2ID || su[0].TokenUsage.AgentID != subID || su[0].TokenUsage.Tokens.Input != 950 {
		t.Errorf("subagent usage %+v", su)
	}
}

// The metadata document is rewritten at each turn: a re-read emits nothing, a new turn only its
// own events, a document caught half-written an error and nothing, and the state is kept.
func TestCLIMeta_Reread(t *testing.T) {
	data := fixture(t, filepath.Join("home", "sessions", "cli", v2ID+".json"))
	src := srcOf(filepath.Join(t.TempDir(), v2ID+".json"), v2ID)
	p, err := New(nil).NewParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Record(0, data)
	if err != nil || len(first) == 0 {
		t.Fatalf("%d events, %v", len(first), err)
	}
	if again, err := p.Record(0, data); err != nil || len(again) != 0 {
		t.Errorf("a re-read: %d events, %v", len(again), err)
	}
	state := p.State()
	p2, _ := New(nil).NewParser(src, state)
	if again, _ := p2.Record(0, data); len(again) != 0 {
		t.Errorf("a re-read resumed from the state: %d events", len(again))
	}
	grown := strings.Replace(string(data), `      ],
      "user_turn_start_request"`, `        ,{"message_ids": ["a-6"], "end_timestamp": "2026-03-12T10:40:00Z", "model": "claude-sonnet-4.5",
          "input_token_count": 10, "output_token_count": 5, "cache_read_input_token_count": 0, "cache_write_input_token_count": 0}
      ],
      "user_turn_start_request"`, 1)
	more, err := p2.Record(0, []byte(grown))
	if err != nil || len(more) != 1 || more[0].TokenUsage == nil || more[0].TokenUsage.Tokens.Output != 5 {
		t.Errorf("a new turn: %+v, %v; want only its usage", more, err)
	}
	before := string(p2.State())
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte("[]"), []byte("{\"title\":\"\xff\"}")} {
		if evs, err := p2.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.20q: %d events, %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p2.State()) != before {
		t.Error("a malformed document changed the state")
	}
}

// A line that is cut or not JSON is ErrMalformed and counted; the lines around it are read.
func TestLines_Malformed(t *testing.T) {
	lines := transcripttest.ReadLines(t, kasPath())
	src := srcOf(kasPath(), kasID)
	p, _ := New(nil).NewParser(src, nil)
	var all []event.Event
	for i, l := range lines {
		if i == 4 {
			if evs, err := p.Record(int64(i), l[:len(l)/2]); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
				t.Fatalf("a cut line: %d events, %v", len(evs), err)
			}
			if _, err := p.Record(int64(i)+1000, []byte(`{"id":"x","payload":{"type":"tool_result"}}`)); !errors.Is(err, transcript.ErrMalformed) {
				t.Fatalf("a tool_result without id: %v", err)
			}
			continue
		}
		evs, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
	}
	if st := p.Stats(); st.Malformed != 2 || st.Lines != int64(len(lines))+1 {
		t.Errorf("stats %+v", st)
	}
	// The result of line 4 is lost; its call is read, and everything after it.
	if a := actions(all)["tooluse_kas01"]; a == nil || a.Success != nil {
		t.Errorf("the call whose result was cut: %+v", a)
	}
	if a := actions(all)["tooluse_kas04"]; a == nil || a.Success == nil || !*a.Success {
		t.Errorf("a later call: %+v", a)
	}
	lp, _ := New(nil).NewParser(srcOf(cliPath(v2ID, ".jsonl"), v2ID), nil)
	if _, err := lp.Record(0, []byte(`{"version":"v1","kind":"Prompt","data":{"content":[{"kind":"te`)); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("a cut v2 line: %v", err)
	}
}

func TestDB(t *testing.T) {
	path, db := writeDB(t, t.TempDir())
	evs, state, st := poll(t, path, nil)
	if st.Lines != 1 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, e := range evs {
		if e.SessionID != convID || e.Project != "/home/dev/webapp" {
			t.Fatalf("event %+v: want the conversation's id and its directory as project", e)
		}
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Errorf("%d usage events: the database keeps no token counts", len(u))
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(time.UnixMilli(convCrtd)) ||
		sess[0].Session.Cwd != convKey || sess[1].Session.Model != "claude-sonnet-4.5" {
		t.Errorf("session events %+v", sess)
	}
	acts := actions(evs)
	if a := acts["tooluse_v1a"]; a == nil || a.Type != event.ActionRunCommand || a.Target != "tail -n 50 logs/server.log" ||
		a.Success == nil || !*a.Success || !strings.Contains(a.Output, "TypeError") {
		t.Errorf("execute_bash %+v: want succeeded, its stdout as the output", a)
	}
	if a := acts["tooluse_v1b"]; a == nil || a.Type != event.ActionReadFile || a.Target != "src/auth.js" {
		t.Errorf("fs_read %+v", a)
	}
	if a := acts["tooluse_v1c"]; a == nil || a.Type != event.ActionMCPCall || a.Target != "github/search_issues" ||
		a.Success == nil || *a.Success || a.Error != "MCP server github: authentication required" {
		t.Errorf("MCP call %+v: want github/search_issues, failed", a)
	}
	if a := acts["tooluse_v1d"]; a == nil || a.Type != event.ActionEditFile || a.Target != "src/auth.js" || a.Success == nil || !*a.Success {
		t.Errorf("fs_write str_replace %+v", a)
	}
	if a := acts["user_prompt:why does the login page return 500?"]; a == nil {
		t.Errorf("no prompt: %v", acts)
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\twhy does the login page return 500?",
		"assistant\t\tChecking the server log and the auth module.",
		"tool_call\texecute_bash\ttail -n 50 logs/server.log",
		"tool_call\tfs_read\tsrc/auth.js",
		"thinking\t\treq.session is undefined when the cookie is missing.",
		"tool_call\tgithub___search_issues\tgithub/search_issues",
		"tool_call\tfs_write\tsrc/auth.js",
		"assistant\t\tFixed: src/auth.js no longer assumes a session exists.")
	var reply *event.Event
	for i := range evs {
		if m := evs[i].Message; m != nil && strings.HasPrefix(m.Text, "Fixed") {
			reply = &evs[i]
		}
	}
	if reply == nil || !reply.Time.Equal(time.UnixMilli(1771578015400)) || reply.Message.Model != "claude-sonnet-4.5" {
		t.Errorf("reply %+v: want it at its stream_end_timestamp_ms, with the request's model", reply)
	}

	// Nothing changed: nothing new.
	if again, _, _ := poll(t, path, state); len(again) != 0 {
		t.Errorf("a second pass: %d events", len(again))
	}
	// A new turn: only its events, the earlier entries not again.
	value := string(fixture(t, filepath.Join("conversations", convID+".json")))
	turn := `,{"user": {"content": {"Prompt": {"prompt": "now add a test"}}, "timestamp": "2026-02-20T09:05:00Z"},
		"assistant": {"Response": {"message_id": "7e1d0c2b-1111-4a5b-8c9d-000000000004", "content": "Added test/auth.test.js."}},
		"request_metadata": {"message_id": "7e1d0c2b-1111-4a5b-8c9d-000000000004", "request_start_timestamp_ms": 1771578300100,
		"stream_end_timestamp_ms": 1771578309000, "model_id": "claude-sonnet-4.5"}}
  ],
  "valid_history_range"`
	grown := strings.Replace(value, "\n  ],\n  \"valid_history_range\"", turn, 1)
	execT(t, db, upsertConv, convKey, convID, grown, convCrtd, convUpd+300000)
	more, state, _ := poll(t, path, state)
	transcripttest.CheckConversation(t, more, "user\t\tnow add a test", "assistant\t\tAdded test/auth.test.js.")
	if len(byKind(more, event.KindAction)) != 1 {
		t.Errorf("new turn: %d actions, want its prompt", len(byKind(more, event.KindAction)))
	}
	// A compaction cuts the history and keeps a summary.
	compacted := `{"conversation_id": "` + convID + `", "history": [], "latest_summary": "Fixed the 500 on login; a test was added.",
		"model_info": {"model_id": "claude-sonnet-4.5"}}`
	execT(t, db, upsertConv, convKey, convID, compacted, convCrtd, convUpd+600000)
	after, _, _ := poll(t, path, state)
	transcripttest.CheckConversation(t, after, "summary\t\tFixed the 500 on login; a test was added.")
}

// A cold pass streams its events in batches, the same events as Poll.
func TestDB_PollEach(t *testing.T) {
	path, _ := writeDB(t, t.TempDir())
	all, _, _ := poll(t, path, nil)
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Database: true}, nil)
	var got []event.Event
	batches := 0
	err := p.(transcript.StreamPoller).PollEach(context.Background(), 4, func(evs []event.Event) error {
		batches++
		if len(evs) > 4 {
			t.Errorf("a batch of %d", len(evs))
		}
		got = append(got, evs...)
		return nil
	})
	if err != nil || batches < 2 {
		t.Fatalf("%d batches, %v", batches, err)
	}
	transcripttest.SameEvents(t, all, got)
}

// A row whose value does not decode is counted and passed over; the others are read. The table
// from before migration 8 is read when conversations_v2 is absent.
func TestDB_MalformedAndLegacy(t *testing.T) {
	path, db := writeDB(t, t.TempDir())
	execT(t, db, upsertConv, "/home/dev/other", "broken-1", `{"conversation_id": "broken-1", "history": [`, convCrtd, convUpd)
	evs, _, st := poll(t, path, nil)
	if st.Lines != 2 || st.Malformed != 1 || len(actions(evs)) == 0 {
		t.Errorf("stats %+v, %d events", st, len(evs))
	}

	dir := t.TempDir()
	legacy := filepath.Join(dir, DBName)
	ldb := newDB(t, legacy)
	execT(t, ldb, "DROP TABLE conversations_v2")
	execT(t, ldb, "INSERT INTO conversations (key, value) VALUES (?, ?)", convKey, string(fixture(t, filepath.Join("conversations", convID+".json"))))
	old, state, _ := poll(t, legacy, nil)
	if a := actions(old)["tooluse_v1c"]; a == nil || a.Type != event.ActionMCPCall || len(byKind(old, event.KindMessage)) != 8 {
		t.Errorf("the old table: %d events", len(old))
	}
	if again, _, _ := poll(t, legacy, state); len(again) != 0 {
		t.Errorf("the old table read again: %d events", len(again))
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvHome, "/tmp/khome")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	want := []string{"/tmp/khome", filepath.Join(home, ".kiro"), "/tmp/xdg/kiro-cli", "/tmp/xdg/amazon-q"}
	if got := defaultRoots("linux"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("linux: %v, want %v", got, want)
	}
	t.Setenv(EnvHome, "")
	t.Setenv("XDG_DATA_HOME", "")
	sup := filepath.Join(home, "Library", "Application Support")
	want = []string{filepath.Join(home, ".kiro"), filepath.Join(sup, "kiro-cli"), filepath.Join(sup, "amazon-q")}
	if got := defaultRoots("darwin"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("darwin: %v, want %v", got, want)
	}
	want = []string{filepath.Join(home, ".kiro"), filepath.Join(home, ".local", "share", "kiro-cli"), filepath.Join(home, ".local", "share", "amazon-q")}
	if got := defaultRoots("linux"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("linux defaults: %v, want %v", got, want)
	}
}
