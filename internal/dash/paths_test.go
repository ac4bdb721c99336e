package dash

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// pathsSessions are the sessions of pathsStore by id, with the capture paths that saw each.
var pathsSessions = map[string][]string{
	"s-proxy":   {store.PathProxy},
	"s-records": {store.PathRecords},
	"s-hooks":   {store.PathHooks},
	"s-otlp":    {store.PathOTLP},
	"s-all":     {store.PathProxy, store.PathRecords, store.PathHooks, store.PathOTLP},
	"s-usual":   {store.PathRecords, store.PathHooks, store.PathOTLP},
}

// pathsStore holds a Claude Code session per entry of pathsSessions, written as each path's
// component publishes it: observer-proxy's turn, observer-watch's usage row and action, the hook's
// hook and session events, the OTLP receiver's session event, turn and action.
func pathsStore(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	now := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	var evs []event.Event
	i := 0
	for id, paths := range pathsSessions {
		i++
		at := now.Add(time.Duration(i) * time.Second)
		mk := func(kind event.Kind, source, key string) event.Event {
			e := event.New(kind, source)
			e.ID = event.ID("dash-test", id, key)
			e.Time, e.Client, e.SessionID, e.Project = at, "claude-code", id, "/home/u/proj"
			return e
		}
		for _, p := range paths {
			switch p {
			case store.PathProxy:
				e := mk(event.KindAPITurn, "observer-proxy", "turn")
				e.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", MessageID: "msg_" + id, RequestID: "req_p_" + id,
					Status: 200, Tokens: event.Tokens{Input: 10, Output: 5}, Reliability: event.ReliabilityAccurate}
				evs = append(evs, e)
			case store.PathRecords:
				u := mk(event.KindTokenUsage, "observer-watch", "usage")
				u.TokenUsage = &event.TokenUsage{MessageID: "msg_" + id, Model: "claude-sonnet-4-5", Tokens: event.Tokens{Input: 10, Output: 5},
					Reliability: event.ReliabilityApproximate, Origin: "transcript"}
				a := mk(event.KindAction, "observer-watch", "prompt")
				a.Action = &event.Action{Type: event.ActionUserPrompt, Target: "fix the tests in " + id}
				evs = append(evs, u, a)
			case store.PathHooks:
				h := mk(event.KindHook, "observerctl", "hook")
				h.Hook = &event.Hook{Event: "SessionStart"}
				s := mk(event.KindSession, "observerctl", "hook-session")
				s.Session = &event.Session{State: event.SessionStarted}
				evs = append(evs, h, s)
			case store.PathOTLP:
				s := mk(event.KindSession, "otlp", "otlp-session")
				s.Session = &event.Session{State: event.SessionActive}
				t := mk(event.KindAPITurn, "otlp", "otlp-turn")
				t.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", RequestID: "req_o_" + id, Status: 200,
					Tokens: event.Tokens{Input: 10, Output: 5}, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
				a := mk(event.KindAction, "otlp", "otlp-action")
				a.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", ToolUseID: "toolu_" + id, Success: new(true)}
				evs = append(evs, s, t, a)
			}
		}
	}
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("event %d: %v", i, err)
		}
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestAPI_SessionPaths: the sessions list and a session's detail name the capture paths that saw
// each session, in the order proxy, records, hooks, otlp; the corpus, read from the clients'
// records alone, is seen by the records only.
func TestAPI_SessionPaths(t *testing.T) {
	srv := startServer(t, Options{StorePath: pathsStore(t)})
	var list struct {
		Sessions []Session `json:"sessions"`
	}
	mustGet(t, srv.URL, "/api/sessions?window=all&limit=50", &list)
	if len(list.Sessions) != len(pathsSessions) {
		t.Fatalf("%d sessions listed, want %d", len(list.Sessions), len(pathsSessions))
	}
	for _, s := range list.Sessions {
		if want := pathsSessions[s.SessionID]; !slices.Equal(s.Paths, want) {
			t.Errorf("list: %s seen by %q, want %q", s.SessionID, s.Paths, want)
		}
		var d struct {
			Session Session `json:"session"`
		}
		mustGet(t, srv.URL, "/api/sessions/"+s.SessionID+"?client=claude-code", &d)
		if want := pathsSessions[s.SessionID]; !slices.Equal(d.Session.Paths, want) {
			t.Errorf("detail: %s seen by %q, want %q", s.SessionID, d.Session.Paths, want)
		}
	}
	// By cost too: the page is built another way.
	mustGet(t, srv.URL, "/api/sessions?window=all&sort=cost", &list)
	for _, s := range list.Sessions {
		if want := pathsSessions[s.SessionID]; !slices.Equal(s.Paths, want) {
			t.Errorf("sort=cost: %s seen by %q, want %q", s.SessionID, s.Paths, want)
		}
	}

	t.Run("Corpus", func(t *testing.T) {
		srv := startServer(t, Options{StorePath: corpusStore(t)})
		mustGet(t, srv.URL, "/api/sessions?window=all&limit=500", &list)
		if len(list.Sessions) == 0 {
			t.Fatal("no corpus session")
		}
		for _, s := range list.Sessions {
			if !slices.Equal(s.Paths, []string{store.PathRecords}) {
				t.Errorf("corpus session %s %s seen by %q, want records", s.Client, s.SessionID, s.Paths)
			}
		}
	})
}

// BenchmarkSessionPaths_Corpus reads the capture paths of the corpus store's newest 100 sessions,
// the dashboard's largest page.
func BenchmarkSessionPaths_Corpus(b *testing.B) {
	st := openReader(b, corpusStore(b))
	rows, err := st.DB.Query("SELECT client, session_id FROM sessions ORDER BY last_seen DESC LIMIT 100")
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
	for b.Loop() {
		if _, err := store.SessionPaths(context.Background(), st.DB, keys); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(keys)), "sessions")
}
