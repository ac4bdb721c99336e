package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// pathEvents are the rows each capture path writes for session id of client, as its component
// publishes them.
func pathEvents(client, id, path string, at time.Time) []event.Event {
	mk := func(kind event.Kind, source, key string) event.Event {
		e := newEv(kind, client+"/"+id+"/"+path+"/"+key, at)
		e.Client, e.SessionID, e.Source = client, id, source
		return e
	}
	switch path {
	case store.PathProxy:
		e := mk(event.KindAPITurn, "observer-proxy", "turn")
		e.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", MessageID: "msg_" + id, RequestID: "req_p_" + id,
			Status: 200, Tokens: event.Tokens{Input: 10, Output: 5}, Reliability: event.ReliabilityAccurate}
		return []event.Event{e}
	case store.PathRecords:
		u := mk(event.KindTokenUsage, "observer-watch", "usage")
		u.TokenUsage = &event.TokenUsage{MessageID: "msg_" + id, Model: "claude-sonnet-4-5", Tokens: event.Tokens{Input: 10, Output: 5},
			Reliability: event.ReliabilityApproximate, Origin: "transcript"}
		a := mk(event.KindAction, "observer-watch", "action")
		a.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "main.go", ToolUseID: "toolu_r_" + id}
		s := mk(event.KindSession, "observer-watch", "session")
		s.Session = &event.Session{State: event.SessionActive}
		return []event.Event{u, a, s}
	case store.PathHooks:
		h := mk(event.KindHook, "observerctl", "hook")
		h.Hook = &event.Hook{Event: "SessionStart"}
		// `observerctl hook` publishes the hook's session event beside it.
		s := mk(event.KindSession, "observerctl", "session")
		s.Session = &event.Session{State: event.SessionStarted}
		return []event.Event{h, s}
	case store.PathOTLP:
		s := mk(event.KindSession, "otlp", "session")
		s.Session = &event.Session{State: event.SessionActive}
		t := mk(event.KindAPITurn, "otlp", "turn")
		t.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", RequestID: "req_o_" + id, Status: 200,
			Tokens: event.Tokens{Input: 10, Output: 5}, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
		a := mk(event.KindAction, "otlp", "action")
		a.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", ToolUseID: "toolu_o_" + id, Success: ptr(true)}
		return []event.Event{s, t, a}
	}
	panic("no path " + path)
}

func TestStore_SessionPaths(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	combos := map[string][]string{
		"none":    {},
		"proxy":   {store.PathProxy},
		"records": {store.PathRecords},
		"hooks":   {store.PathHooks},
		"otlp":    {store.PathOTLP},
		"all":     {store.PathProxy, store.PathRecords, store.PathHooks, store.PathOTLP},
		"usual":   {store.PathProxy, store.PathRecords, store.PathOTLP},
		"nohooks": {store.PathRecords, store.PathHooks},
	}
	var evs []event.Event
	var keys []store.SessionKey
	for id, paths := range combos {
		// The same session id under another client, seen by the paths this one was not.
		for _, client := range []string{"claude-code", "codex"} {
			for _, p := range store.Paths {
				if (client == "claude-code") == slices.Contains(paths, p) {
					evs = append(evs, pathEvents(client, id, p, t0)...)
				}
			}
			keys = append(keys, store.SessionKey{Client: client, SessionID: id})
		}
	}
	write(t, s, evs, nil)
	keys = append(keys, store.SessionKey{Client: "claude-code", SessionID: "never-seen"}, keys[0]) // a duplicate

	got, err := store.SessionPaths(ctx, s.DB, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys)-1 {
		t.Errorf("%d sessions answered, want %d", len(got), len(keys)-1)
	}
	for id, paths := range combos {
		want := []string{}
		for _, p := range store.Paths {
			if slices.Contains(paths, p) {
				want = append(want, p)
			}
		}
		if g := got[store.SessionKey{Client: "claude-code", SessionID: id}]; !reflect.DeepEqual(g, want) {
			t.Errorf("claude-code %s: paths %q, want %q", id, g, want)
		}
		other := []string{}
		for _, p := range store.Paths {
			if !slices.Contains(paths, p) {
				other = append(other, p)
			}
		}
		if g := got[store.SessionKey{Client: "codex", SessionID: id}]; !reflect.DeepEqual(g, other) {
			t.Errorf("codex %s: paths %q, want %q", id, g, other)
		}
	}
	if g, ok := got[store.SessionKey{Client: "claude-code", SessionID: "never-seen"}]; !ok || g == nil || len(g) != 0 {
		t.Errorf("a session never seen: %q (listed %v), want an empty list", g, ok)
	}
	if got, err := store.SessionPaths(ctx, s.DB, nil); err != nil || len(got) != 0 {
		t.Errorf("no keys: %v, %v", got, err)
	}

	t.Run("OneRowOfAPath", func(t *testing.T) {
		// Each row alone that a path writes is enough to name it.
		for i, tc := range []struct {
			ev   func(e event.Event) event.Event
			kind event.Kind
			want []string
		}{
			{kind: event.KindTokenUsage, want: []string{store.PathRecords}},
			{kind: event.KindAction, want: []string{store.PathRecords}},
			{kind: event.KindAPITurn, want: []string{store.PathProxy}},
			{kind: event.KindHook, want: []string{store.PathHooks}},
		} {
			id := fmt.Sprint("one-", i)
			var pick []event.Event
			for _, p := range store.Paths {
				for _, e := range pathEvents("claude-code", id, p, t0) {
					if e.Kind == tc.kind && e.Source != "otlp" {
						pick = append(pick, e)
					}
				}
			}
			write(t, s, pick, nil)
			k := store.SessionKey{Client: "claude-code", SessionID: id}
			got, err := store.SessionPaths(ctx, s.DB, []store.SessionKey{k})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[k], tc.want) {
				t.Errorf("%s alone: %q, want %q", tc.kind, got[k], tc.want)
			}
		}
		// OTLP's session event or turn alone is OTLP; its action alone (the receiver publishes
		// none without the session event before it) is no path, not the records.
		for i, kind := range []event.Kind{event.KindSession, event.KindAPITurn, event.KindAction} {
			id := fmt.Sprint("otlp-", i)
			for _, e := range pathEvents("codex", id, store.PathOTLP, t0) {
				if e.Kind == kind {
					write(t, s, []event.Event{e}, nil)
				}
			}
			k := store.SessionKey{Client: "codex", SessionID: id}
			got, err := store.SessionPaths(ctx, s.DB, []store.SessionKey{k})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{store.PathOTLP}
			if kind == event.KindAction {
				want = []string{}
			}
			if !reflect.DeepEqual(got[k], want) {
				t.Errorf("OTLP's %s alone: %q, want %q", kind, got[k], want)
			}
		}
	})

	t.Run("QueryPlan", func(t *testing.T) {
		// Every table is read through a session-id index, never scanned (without statistics, as
		// the writer never runs ANALYZE): a page of sessions costs index seeks, whatever the
		// store's size.
		rows, err := s.DB.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT "+store.PathBitsSQL("s")+" FROM sessions s WHERE s.session_id = 'x'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		for _, tbl := range []string{"api_turns", "token_usage", "actions", "hook_events", "session_events"} {
			n := 0
			for _, d := range plan {
				if strings.Contains(d, "SCAN x") || strings.Contains(d, "SCAN "+tbl) {
					t.Errorf("a table scan: %s", d)
				}
				if strings.HasPrefix(d, "SEARCH x USING INDEX "+tbl+"_session") {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s is not read through its session index:\n%s", tbl, strings.Join(plan, "\n"))
			}
		}
	})
}

// BenchmarkStore_SessionPaths reads the paths of a page of 100 sessions, the newest, from a store of
// 4,000 sessions and about 2.3M rows (fillPathsStore).
func BenchmarkStore_SessionPaths(b *testing.B) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(b.TempDir(), "o.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fillPathsStore(b, s, 4000)
	rows, err := s.DB.QueryContext(ctx, "SELECT client, session_id FROM sessions ORDER BY last_seen DESC LIMIT 100")
	if err != nil {
		b.Fatal(err)
	}
	var keys []store.SessionKey
	for rows.Next() {
		var k store.SessionKey
		rows.Scan(&k.Client, &k.SessionID)
		keys = append(keys, k)
	}
	rows.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := store.SessionPaths(ctx, s.DB, keys); err != nil {
			b.Fatal(err)
		}
	}
}

// fillPathsStore writes n sessions (a multiple of 4) straight into the tables, as four sessions
// at a time would leave them (their rows interleaved); WriteBatch would take minutes. Every
// session has its records (300 actions, 150 usage rows); by session number modulo 10: 0-4 nothing
// else; 5-6 the proxy (150 turns) and hooks (50); 7-8 OTLP without the proxy (its session event,
// 150 turns, 100 actions): the costliest, whose proxy test reads every OTLP turn; 9 proxy, OTLP
// and hooks.
func fillPathsStore(tb testing.TB, s *store.Store, n int) {
	tb.Helper()
	// rows generates per rows per session of the sessions whose number modulo 10 is in kinds:
	// v, the session's number sess, and the row's index j in it, with ts its time.
	rows := func(per int, kinds string) string {
		return fmt.Sprintf(`WITH RECURSIVE i(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM i WHERE v < :n * %[1]d - 1),
		 r(v, sess, j) AS (SELECT v, (v / (4 * %[1]d)) * 4 + v %% 4, (v / 4) %% %[1]d FROM i),
		 g(v, sess, j, ts) AS (SELECT v, sess, j, (sess / 4) * 1000000 + j * 1000 + sess %% 4 FROM r WHERE sess %% 10 IN (%[2]s))`, per, kinds)
	}
	const all = "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"
	stmts := []string{
		`WITH RECURSIVE i(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM i WHERE v < :n - 1)
		 INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state)
		 SELECT 'claude-code', 's' || v, '/p', (v / 4) * 1000000, (v / 4) * 1000000 + 300000 + v % 4, 'finalized' FROM i`,
		rows(300, all) + `
		 INSERT INTO actions (event_id, ts, client, session_id, project, source, type, tool, target, tool_use_id, message_id,
		   request_id, agent_id, sidechain, success, error, duration_ms, input_hash, output_size, model, transcript)
		 SELECT 'a' || v, ts, 'claude-code', 's' || sess, '/p', 'observer-watch', 'read_file', 'Read', 'f', 't' || v,
		   '', '', '', 0, 1, '', 0, '', 0, '', '' FROM g`,
		rows(150, all) + `
		 INSERT INTO token_usage (event_id, ts, client, session_id, project, source, message_id, request_id, model, agent_id,
		   input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens,
		   cost_usd, reliability, origin)
		 SELECT 'u' || v, ts, 'claude-code', 's' || sess, '/p', 'observer-watch', 'm' || v, 'r' || v, 'x', '',
		   1, 1, 0, 0, 0, 0, 0, 'approximate', 'transcript' FROM g`,
		rows(150, "5, 6, 7, 8, 9") + `
		 INSERT INTO api_turns (event_id, ts, client, session_id, project, provider, endpoint, model, message_id, request_id,
		   stream, status, error_class, error_message, stop_reason, latency_ms, ttfb_ms, input_tokens, output_tokens,
		   cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability,
		   messages, tools, bytes_in, bytes_out, partial, origin)
		 SELECT 'p' || v, ts, 'claude-code', 's' || sess, '', 'anthropic', '', 'x', 'm' || v, 'r' || v,
		   1, 200, '', '', '', 0, 0, 1, 1, 0, 0, 0, 0, 0, 'accurate', 0, 0, 0, 0, 0,
		   CASE WHEN sess % 10 IN (7, 8) OR sess % 10 = 9 AND j % 2 = 1 THEN 'otlp' ELSE '' END FROM g`,
		rows(50, "5, 6, 9") + `
		 INSERT INTO hook_events (event_id, ts, client, session_id, project, event, cwd, transcript_path, tool_name, tool_use_id,
		   matcher, payload_bytes)
		 SELECT 'h' || v, ts, 'claude-code', 's' || sess, '/p', 'PreToolUse', '', '', '', '', '', 0 FROM g`,
		rows(100, "7, 8, 9") + `
		 INSERT INTO actions (event_id, ts, client, session_id, project, source, type, tool, target, tool_use_id, message_id,
		   request_id, agent_id, sidechain, success, error, duration_ms, input_hash, output_size, model, transcript)
		 SELECT 'o' || v, ts, 'claude-code', 's' || sess, '/p', 'otlp', 'run_command', 'Bash', '', 'ot' || v,
		   '', '', '', 0, 1, '', 0, '', 0, '', '' FROM g`,
		rows(3, all) + `
		 INSERT INTO session_events (event_id, ts, client, session_id, project, source, state, cwd, transcript_path,
		   parent_session_id, epoch, model, git_branch)
		 SELECT 'e' || v, ts, 'claude-code', 's' || sess, '/p', CASE WHEN j = 0 AND sess % 10 IN (7, 8, 9) THEN 'otlp' ELSE 'observer-watch' END,
		   'active', '', '', '', 0, '', '' FROM g`,
	}
	for _, q := range stmts {
		if _, err := s.DB.Exec(q, sql.Named("n", n)); err != nil {
			tb.Fatalf("%v\n%s", err, q)
		}
	}
}
