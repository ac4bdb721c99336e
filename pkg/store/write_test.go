package store_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	testClient  = "claude-code"
	testSession = "sess-1"
	testProject = "/home/u/proj"
)

// newEv returns a valid envelope of kind with a deterministic id, in the test session and project.
func newEv(kind event.Kind, key string, at time.Time) event.Event {
	e := event.New(kind, "store-test")
	e.ID = event.ID("store-test", key)
	e.Time = at
	e.Client = testClient
	e.SessionID = testSession
	e.Project = testProject
	return e
}

func hookEv(key string, at time.Time, name string) event.Event {
	e := newEv(event.KindHook, key, at)
	e.Hook = &event.Hook{Event: name}
	return e
}

func actionEv(key string, at time.Time, a event.Action) event.Event {
	e := newEv(event.KindAction, key, at)
	e.Action = &a
	return e
}

func sessionEv(key string, at time.Time, s event.Session) event.Event {
	e := newEv(event.KindSession, key, at)
	e.Session = &s
	return e
}

func write(tb testing.TB, s *store.Store, evs []event.Event, rejected []store.Rejected) store.WriteResult {
	tb.Helper()
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("test event %d is invalid: %v", i, err)
		}
	}
	res, err := s.WriteBatch(context.Background(), evs, rejected)
	if err != nil {
		tb.Fatalf("WriteBatch: %v", err)
	}
	return res
}

func ptr[T any](v T) *T { return &v }

// everyKind returns one batch with each kind of event; the actions cover an unknown, a successful
// and a failed result.
func everyKind() []event.Event {
	ms := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Millisecond) }
	tu := newEv(event.KindTokenUsage, "usage", ms(4))
	tu.TokenUsage = &event.TokenUsage{
		Tokens:    event.Tokens{Input: 11, Output: 22, CacheRead: 33, CacheCreation: 44, CacheCreation1h: 5, Reasoning: 6},
		MessageID: "msg_1", RequestID: "req_1", Model: "claude-sonnet-4", CostUSD: 0.125,
		Reliability: event.ReliabilityApproximate, Origin: "transcript",
	}
	turn := newEv(event.KindAPITurn, "turn", ms(5))
	turn.APITurn = &event.APITurn{
		Tokens:   event.Tokens{Input: 100, Output: 200, CacheRead: 300, CacheCreation: 400, CacheCreation1h: 50, Reasoning: 60},
		Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-sonnet-4", MessageID: "msg_2", RequestID: "req_2",
		Stream: true, Status: 529, ErrorClass: "overloaded_error", ErrorMessage: "Overloaded", StopReason: "",
		LatencyMs: 1234.5, TTFBMs: 321.25, CostUSD: 0.5, Reliability: event.ReliabilityAccurate,
		Messages: 7, Tools: 3, BytesIn: 1000, BytesOut: 2000, Partial: true,
	}
	comp := newEv(event.KindCompression, "comp", ms(6))
	comp.Compression = &event.Compression{Mechanism: "dedupe-reads", Model: "claude-sonnet-4", Provider: "anthropic",
		BytesBefore: 5000, BytesAfter: 3000, TokensBefore: 1200, TokensAfter: 700}
	sess := sessionEv("session", ms(7), event.Session{State: event.SessionStarted, Cwd: "/home/u/proj/sub",
		TranscriptPath: "/t/sess-1.jsonl", ParentSessionID: "sess-0", Epoch: 2, Model: "claude-sonnet-4", GitBranch: "main"})
	hook := newEv(event.KindHook, "hook", ms(8))
	hook.Hook = &event.Hook{Event: "PreToolUse", Cwd: "/home/u/proj", TranscriptPath: "/t/sess-1.jsonl",
		ToolName: "Bash", ToolUseID: "toolu_1", Matcher: "startup", PayloadBytes: 512}
	mcp := newEv(event.KindMCPCall, "mcp", ms(9))
	mcp.MCPCall = &event.MCPCall{Server: "github", Tool: "search_issues", RequestID: "7", InputBytes: 40,
		OutputBytes: 4000, InputHash: "ih", OutputHash: "oh", DurationMs: 87.5, Error: "rate limited", TokenEstimate: 1000}
	return []event.Event{
		actionEv("act-unknown", ms(1), event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "go test ./...",
			ToolUseID: "toolu_1", MessageID: "msg_1", RequestID: "req_1", AgentID: "agent-1", Sidechain: true,
			DurationMs: 1500, InputHash: "h1", OutputSize: 0, Model: "claude-sonnet-4", Transcript: "/t/sess-1.jsonl"}),
		actionEv("act-ok", ms(2), event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "main.go",
			Success: ptr(true), Output: "package main", OutputSize: 12}),
		actionEv("act-failed", ms(3), event.Action{Type: event.ActionEditFile, Tool: "Edit", Target: "main.go",
			Success: ptr(false), Error: "old_string not found"}),
		tu, turn, comp, sess, hook, mcp,
	}
}

func TestStore_WriteBatch_EveryKind(t *testing.T) {
	s := newWriter(t)
	evs := everyKind()
	if res := write(t, s, evs, nil); res != (store.WriteResult{Inserted: len(evs)}) {
		t.Fatalf("WriteBatch = %+v, want %d inserted", res, len(evs))
	}
	id := func(key string) string { return event.ID("store-test", key) }
	ms := func(d int) int64 { return t0.UnixMilli() + int64(d) }

	t.Run("Action", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(1), testClient, testSession, testProject, "store-test", "run_command", "Bash",
			"go test ./...", "toolu_1", "msg_1", "req_1", "agent-1", int64(1), nil, "", int64(1500), "h1", int64(0),
			"claude-sonnet-4", "/t/sess-1.jsonl"},
			`SELECT ts, client, session_id, project, source, type, tool, target, tool_use_id, message_id, request_id,
				agent_id, sidechain, success, error, duration_ms, input_hash, output_size, model, transcript
			FROM actions WHERE event_id = ?`, id("act-unknown"))
		checkRow(t, s.DB, []any{"read_file", int64(1), int64(0), int64(12), ""},
			`SELECT type, success, sidechain, output_size, error FROM actions WHERE event_id = ?`, id("act-ok"))
		checkRow(t, s.DB, []any{"edit_file", int64(0), "old_string not found"},
			`SELECT type, success, error FROM actions WHERE event_id = ?`, id("act-failed"))
		// Only an action with output gets a row in action_outputs.
		checkRow(t, s.DB, []any{id("act-ok"), "package main"}, `SELECT event_id, unpack(output) FROM action_outputs`)
	})
	t.Run("TokenUsage", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(4), "store-test", "msg_1", "req_1", "claude-sonnet-4", "", int64(11), int64(22),
			int64(33), int64(44), int64(5), int64(6), 0.125, "approximate", "transcript"},
			`SELECT ts, source, message_id, request_id, model, agent_id, input_tokens, output_tokens, cache_read_tokens,
				cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability, origin
			FROM token_usage WHERE event_id = ?`, id("usage"))
	})
	t.Run("APITurn", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(5), testSession, "anthropic", "/v1/messages", "claude-sonnet-4", "msg_2", "req_2",
			int64(1), int64(529), "overloaded_error", "Overloaded", "", 1234.5, 321.25, int64(100), int64(200),
			int64(300), int64(400), int64(50), int64(60), 0.5, "accurate", int64(7), int64(3), int64(1000),
			int64(2000), int64(1)},
			`SELECT ts, session_id, provider, endpoint, model, message_id, request_id, stream, status, error_class,
				error_message, stop_reason, latency_ms, ttfb_ms, input_tokens, output_tokens, cache_read_tokens,
				cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability, messages,
				tools, bytes_in, bytes_out, partial
			FROM api_turns WHERE event_id = ?`, id("turn"))
	})
	t.Run("Compression", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(6), "dedupe-reads", "anthropic", "claude-sonnet-4", int64(5000), int64(3000),
			int64(1200), int64(700)},
			`SELECT ts, mechanism, provider, model, bytes_before, bytes_after, tokens_before, tokens_after
			FROM compression_events WHERE event_id = ?`, id("comp"))
	})
	t.Run("Session", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(7), "store-test", "started", "/home/u/proj/sub", "/t/sess-1.jsonl", "sess-0",
			int64(2), "claude-sonnet-4", "main"},
			`SELECT ts, source, state, cwd, transcript_path, parent_session_id, epoch, model, git_branch
			FROM session_events WHERE event_id = ?`, id("session"))
	})
	t.Run("Hook", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(8), testProject, "PreToolUse", "/home/u/proj", "/t/sess-1.jsonl", "Bash",
			"toolu_1", "startup", int64(512)},
			`SELECT ts, project, event, cwd, transcript_path, tool_name, tool_use_id, matcher, payload_bytes
			FROM hook_events WHERE event_id = ?`, id("hook"))
	})
	t.Run("MCPCall", func(t *testing.T) {
		checkRow(t, s.DB, []any{ms(9), "github", "search_issues", "7", int64(40), int64(4000), "ih", "oh", 87.5,
			"rate limited", int64(1000)},
			`SELECT ts, server, tool, request_id, input_bytes, output_bytes, input_hash, output_hash, duration_ms,
				error, token_estimate
			FROM mcp_calls WHERE event_id = ?`, id("mcp"))
	})
}

func TestStore_WriteBatch_Duplicates(t *testing.T) {
	s := newWriter(t)
	evs := everyKind()
	write(t, s, evs, nil)
	before, err := s.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sessionEvents := count(t, s.DB, "SELECT events FROM sessions")

	if res := write(t, s, everyKind(), nil); res != (store.WriteResult{Duplicates: len(evs)}) {
		t.Errorf("the same batch again = %+v, want 0 inserted, %d duplicates", res, len(evs))
	}
	// Within one batch too.
	dup := hookEv("again", t0, "Stop")
	if res := write(t, s, []event.Event{dup, dup}, nil); res != (store.WriteResult{Inserted: 1, Duplicates: 1}) {
		t.Errorf("an event twice in one batch = %+v, want 1 inserted, 1 duplicate", res)
	}
	after, err := s.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before["hook_events"]++
	if !maps.Equal(after, before) {
		t.Errorf("Counts after the duplicates = %v, want %v", after, before)
	}
	if n := count(t, s.DB, "SELECT count(*) FROM action_outputs"); n != 1 {
		t.Errorf("action_outputs has %d rows, want 1", n)
	}
	if n := count(t, s.DB, "SELECT events FROM sessions"); n != sessionEvents+1 {
		t.Errorf("session counts %d events, want %d: duplicates are not events", n, sessionEvents+1)
	}
}

func TestStore_WriteBatch_UpsertsSessionsAndProjects(t *testing.T) {
	s := newWriter(t)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	ms := func(sec int) int64 { return at(sec).UnixMilli() }
	read := event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "a.go"}

	// The hook carries the cwd and transcript path; the session events in the same batch, without
	// them, must not erase them. The later session event's state wins; its empty model and lower
	// epoch do not.
	hook := hookEv("hook", at(10), "SessionStart")
	hook.Hook.Cwd, hook.Hook.TranscriptPath = "/home/u/proj", "/t/sess-1.jsonl"
	write(t, s, []event.Event{
		actionEv("a1", at(20), read),
		hook,
		sessionEv("s1", at(15), event.Session{State: event.SessionStarted, Model: "m1", Epoch: 1}),
		sessionEv("s1b", at(16), event.Session{State: event.SessionActive}),
	}, nil)
	query := `SELECT project, first_seen, last_seen, state, cwd, transcript_path, model, epoch, events
		FROM sessions WHERE client = ? AND session_id = ?`
	checkRow(t, s.DB, []any{testProject, ms(10), ms(20), "active", "/home/u/proj", "/t/sess-1.jsonl", "m1", int64(1), int64(4)},
		query, testClient, testSession)

	// A later batch: an earlier event moves first_seen, the session event's state wins, and empty
	// fields keep what is stored.
	write(t, s, []event.Event{
		actionEv("a0", at(5), read),
		sessionEv("s2", at(30), event.Session{State: event.SessionFinalized}),
	}, nil)
	checkRow(t, s.DB, []any{testProject, ms(5), ms(30), "finalized", "/home/u/proj", "/t/sess-1.jsonl", "m1", int64(1), int64(6)},
		query, testClient, testSession)

	// Without a session event the state stays.
	write(t, s, []event.Event{actionEv("a2", at(40), read)}, nil)
	checkRow(t, s.DB, []any{ms(5), ms(40), "finalized", int64(7)},
		`SELECT first_seen, last_seen, state, events FROM sessions WHERE session_id = ?`, testSession)

	// Another client's session with the same id is another session; a session with no state
	// event yet is active.
	other := actionEv("other", at(50), read)
	other.Client = "codex"
	write(t, s, []event.Event{other}, nil)
	checkRow(t, s.DB, []any{"active", int64(1)}, `SELECT state, events FROM sessions WHERE client = 'codex'`)

	checkRow(t, s.DB, []any{"proj", ms(5), ms(50)}, `SELECT name, first_seen, last_seen FROM projects WHERE path = ?`, testProject)
	if n := count(t, s.DB, "SELECT count(*) FROM projects"); n != 1 {
		t.Errorf("%d projects, want 1", n)
	}
}

func TestStore_WriteBatch_Quarantine(t *testing.T) {
	s := newWriter(t)
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	rejected := []store.Rejected{
		{Subject: "observer.v1.action.claude-code", Reason: "malformed event JSON", Data: []byte("{not json")},
		{Subject: "observer.v1.bogus.x", Reason: "unknown event kind", Data: []byte(`{"kind":"bogus"}`)},
	}
	res := write(t, s, []event.Event{hookEv("h", t0, "Stop")}, rejected)
	if res != (store.WriteResult{Inserted: 1, Quarantined: 2}) {
		t.Errorf("WriteBatch = %+v, want 1 inserted, 2 quarantined", res)
	}
	for i, r := range rejected {
		checkRow(t, s.DB, []any{now.UnixMilli(), r.Subject, r.Reason, r.Data},
			`SELECT received_at, subject, reason, data FROM quarantine WHERE id = ?`, i+1)
	}
}

func TestStore_IndexOutputs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	s := openWriter(t, path)
	outputs := []string{"alpha compiled fine", "bravo: permission denied", "charlie ok", "delta ok", "echo panic: nil map"}
	var evs []event.Event
	for i, out := range outputs {
		evs = append(evs, actionEv(out, t0.Add(time.Duration(i)*time.Second),
			event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "make", Output: out}))
	}
	evs = append(evs, actionEv("no output", t0, event.Action{Type: event.ActionReadFile, Tool: "Read"}))
	write(t, s, evs, nil)

	match := func(term string) []string {
		t.Helper()
		rows, err := s.DB.Query(`SELECT unpack(o.output) FROM tool_output_fts f JOIN action_outputs o ON o.rowid = f.rowid
			WHERE tool_output_fts MATCH ? ORDER BY f.rowid`, term)
		if err != nil {
			t.Fatalf("MATCH %s: %v", term, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var o string
			if err := rows.Scan(&o); err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		return out
	}
	index := func(limit, want int) {
		t.Helper()
		n, err := s.IndexOutputs(ctx, limit)
		if err != nil {
			t.Fatalf("IndexOutputs(%d): %v", limit, err)
		}
		if n != want {
			t.Fatalf("IndexOutputs(%d) = %d, want %d", limit, n, want)
		}
	}

	if got := match("alpha"); len(got) != 0 {
		t.Errorf("MATCH before indexing = %v, want nothing", got)
	}
	index(2, 2)
	if got := match("bravo"); len(got) != 1 || got[0] != outputs[1] {
		t.Errorf("MATCH bravo = %v, want [%q]", got, outputs[1])
	}
	if got := match("charlie"); len(got) != 0 {
		t.Errorf("MATCH charlie = %v before its batch was indexed", got)
	}
	index(2, 2)
	index(2, 1)
	index(2, 0)
	if got := match("ok"); len(got) != 2 || got[0] != outputs[2] || got[1] != outputs[3] {
		t.Errorf("MATCH ok = %v, want charlie and delta", got)
	}
	if got := match("panic"); len(got) != 1 || got[0] != outputs[4] {
		t.Errorf("MATCH panic = %v, want [%q]", got, outputs[4])
	}

	// Duplicates add nothing to index; the progress survives a reopen.
	write(t, s, evs, nil)
	s.Close()
	s = openWriter(t, path)
	index(10, 0)
	write(t, s, []event.Event{actionEv("foxtrot", t0, event.Action{Type: event.ActionRunCommand, Output: "foxtrot timeout"})}, nil)
	index(10, 1)
	if got := match("timeout"); len(got) != 1 {
		t.Errorf("MATCH timeout = %v, want the new output", got)
	}
	if got := match("alpha"); len(got) != 1 {
		t.Errorf("MATCH alpha = %v, want it indexed once", got)
	}
}

func TestStore_Counts(t *testing.T) {
	s := newWriter(t)
	evs := everyKind()
	other := hookEv("other project", t0, "Stop")
	other.Project, other.SessionID = "/srv/api", "sess-2"
	evs = append(evs, other)
	write(t, s, evs, []store.Rejected{{Subject: "x", Reason: "y", Data: []byte("z")}})

	got, err := s.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"actions": 3, "token_usage": 1, "api_turns": 1, "compression_events": 1, "session_events": 1,
		"hook_events": 2, "mcp_calls": 1, "sessions": 2, "projects": 2, "quarantine": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

// TestWriteBatch_MergesCallAndResultAndKeepsFinalUsage: the two merges the transcript readers rely on.
func TestWriteBatch_MergesCallAndResultAndKeepsFinalUsage(t *testing.T) {
	st := openWriter(t, filepath.Join(t.TempDir(), "observer.db"))
	ctx := context.Background()
	yes := true
	call := event.New(event.KindAction, "test")
	call.ID, call.Client, call.SessionID = "tool-1", "claude-code", "s"
	call.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "a.go", ToolUseID: "toolu_1"}
	result := call
	result.Time = call.Time.Add(2 * time.Second)
	result.Action = &event.Action{Type: event.ActionUnknown, ToolUseID: "toolu_1", Success: &yes, DurationMs: 2000, OutputSize: 42, Output: "package a"}
	if _, err := st.WriteBatch(ctx, []event.Event{call}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := st.WriteBatch(ctx, []event.Event{result}, nil)
	if err != nil || res.Inserted != 1 {
		t.Fatalf("merge: %+v %v", res, err)
	}
	var typ, tool, target string
	var success, dur, size int64
	st.DB.QueryRow(`SELECT type, tool, target, success, duration_ms, output_size FROM actions WHERE event_id = 'tool-1'`).
		Scan(&typ, &tool, &target, &success, &dur, &size)
	if typ != "read_file" || tool != "Read" || target != "a.go" || success != 1 || dur != 2000 || size != 42 {
		t.Fatalf("merged row: %s %s %s %d %d %d", typ, tool, target, success, dur, size)
	}
	// The same result again changes nothing and counts as a duplicate.
	if res, _ := st.WriteBatch(ctx, []event.Event{result, call}, nil); res.Inserted != 0 || res.Duplicates != 2 {
		t.Fatalf("replay: %+v", res)
	}

	usage := func(out int64) event.Event {
		ev := event.New(event.KindTokenUsage, "test")
		ev.ID, ev.Client, ev.SessionID = "usage-msg_1", "claude-code", "s"
		ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: out, CacheRead: 100}, MessageID: "msg_1", CostUSD: float64(out)}
		return ev
	}
	if _, err := st.WriteBatch(ctx, []event.Event{usage(1), usage(45), usage(12)}, nil); err != nil {
		t.Fatal(err)
	}
	var out int64
	var usd float64
	var rows int
	st.DB.QueryRow(`SELECT count(*), max(output_tokens), max(cost_usd) FROM token_usage`).Scan(&rows, &out, &usd)
	if rows != 1 || out != 45 || usd != 45 {
		t.Fatalf("usage rows %d, output %d, cost %v; want one row with the largest output 45", rows, out, usd)
	}
}
