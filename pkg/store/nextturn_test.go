package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// geminiTurn is one request Gemini CLI 0.61 makes through the proxy: no session, the model and the
// method in the path, the response id as message id.
func geminiTurn(id string, at time.Time, model, method string, tok event.Tokens) event.Event {
	e := newEv(event.KindAPITurn, id, at)
	e.Client, e.SessionID, e.Project = "gemini-cli", "", ""
	e.APITurn = &event.APITurn{Tokens: tok, Provider: "google", Endpoint: "/v1beta/models/" + model + ":" + method,
		Model: model, MessageID: "resp-" + id, Stream: method == "streamGenerateContent", Status: 200, StopReason: "STOP",
		CostUSD: 0.001, Reliability: event.ReliabilityApproximate}
	return e
}

// geminiMessage is Gemini CLI's own record of a model message (observer-watch's token_usage).
func geminiMessage(id string, at time.Time, session, model string, tok event.Tokens) event.Event {
	e := newEv(event.KindTokenUsage, id, at)
	e.Client, e.SessionID, e.Project = "gemini-cli", session, "/work/g"
	e.TokenUsage = &event.TokenUsage{Tokens: tok, MessageID: "uuid-" + id, Model: model, CostUSD: 0.001,
		Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	return e
}

// apiTurnRow is what the store kept of a proxy turn.
type apiTurnRow struct{ Session, Project, Message string }

func apiTurn(t *testing.T, s *store.Store, id string) apiTurnRow {
	t.Helper()
	var r apiTurnRow
	if err := s.DB.QueryRow("SELECT session_id, project, transcript_message_id FROM api_turns WHERE event_id = ?", event.ID("store-test", id)).
		Scan(&r.Session, &r.Project, &r.Message); err != nil {
		t.Fatalf("turn %s: %v", id, err)
	}
	return r
}

// Gemini CLI's model router asks gemini-3.5-flash-lite which model should answer before each
// prompt: a request without a session (Gemini CLI sends none) and without a message in the chat
// records. Two prompts of one session, as the proxy and observer-watch see them: each router call
// is stored under the session (and project) of the request that follows it, whatever the order in
// which the writer gets the events, every turn counts once, and the rollups equal a rebuild. A
// request with no request after it keeps no session; another client's turn is not lent Gemini's.
func TestStore_RouterTurnTakesTheNextTurnsSession(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 59, 58, 0, time.UTC) // the first prompt straddles an hour
	route := event.Tokens{Input: 1850, Output: 24, Reasoning: 40}
	tok := func(i int64) event.Tokens { return event.Tokens{Input: 900 + i, Output: 60 + i, CacheRead: 12000} }
	r1 := geminiTurn("r1", t0, "gemini-3.5-flash-lite", "generateContent", route)
	t1 := geminiTurn("t1", t0.Add(1400*time.Millisecond), "gemini-3.8-flash", "streamGenerateContent", tok(1))
	t2 := geminiTurn("t2", t0.Add(6*time.Second), "gemini-3.8-flash", "streamGenerateContent", tok(2))
	m1 := geminiMessage("m1", t0.Add(3*time.Second), "gem-a", "gemini-3.8-flash", tok(1))
	m2 := geminiMessage("m2", t0.Add(8*time.Second), "gem-a", "gemini-3.8-flash", tok(2))
	r2 := geminiTurn("r2", t0.Add(60*time.Second), "gemini-3.5-flash-lite", "generateContent", route)
	t3 := geminiTurn("t3", t0.Add(61200*time.Millisecond), "gemini-3.8-flash", "streamGenerateContent", tok(3))
	m3 := geminiMessage("m3", t0.Add(63*time.Second), "gem-a", "gemini-3.8-flash", tok(3))
	last := geminiTurn("last", t0.Add(5*time.Minute), "gemini-3.5-flash-lite", "generateContent", route) // nothing after it
	other := geminiTurn("other", t0.Add(500*time.Millisecond), "qwen3-coder-plus", "generateContent", tok(9))
	other.Client = "qwen-code"
	proxy := []event.Event{r1, other, t1, t2, r2, t3, last}
	watch := []event.Event{m1, m2, m3}
	for _, order := range []struct {
		name    string
		batches [][]event.Event
	}{
		{"ProxyFirst", [][]event.Event{proxy, watch}},
		{"WatchFirst", [][]event.Event{watch, proxy}},
		{"OneBatch", [][]event.Event{{r1, other, t1, m1, t2, m2, r2, t3, m3, last}}},
		{"Live", [][]event.Event{{r1}, {other}, {t1}, {m1}, {t2}, {m2}, {r2}, {t3}, {m3}, {last}}},
		{"RouterLast", [][]event.Event{{other, t1, m1, t2, m2, t3, m3, last}, {r2}, {r1}}},
	} {
		t.Run(order.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, b := range order.batches {
				write(t, s, b, nil)
			}
			for id, want := range map[string]apiTurnRow{
				"r1": {"gem-a", "/work/g", store.NextTurnMark}, "r2": {"gem-a", "/work/g", store.NextTurnMark},
				"t1": {"gem-a", "/work/g", "uuid-m1"}, "t2": {"gem-a", "/work/g", "uuid-m2"}, "t3": {"gem-a", "/work/g", "uuid-m3"},
				"last": {"", "", ""}, "other": {"", "", ""},
			} {
				if got := apiTurn(t, s, id); got != want {
					t.Errorf("turn %s: %+v, want %+v", id, got, want)
				}
			}
			n, sessions, input := turns(t, s)
			want := []string{"/1", "/1", "gem-a/1", "gem-a/1", "gem-a/1", "gem-a/1", "gem-a/1"}
			if wantIn := 3*route.Input + tok(1).Input + tok(2).Input + tok(3).Input + tok(9).Input; n != 7 ||
				!reflect.DeepEqual(sessions, want) || input != wantIn {
				t.Errorf("counted %d turns %v, input %d; want 7 %v, input %d", n, sessions, input, want, wantIn)
			}
			got := dumpRollups(t, s)
			if err := s.RebuildRollups(ctx); err != nil {
				t.Fatal(err)
			}
			if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("kept rollups differ from a rebuild:\n%v\n%v", got, want)
			}
			write(t, s, append(append([]event.Event{}, proxy...), watch...), nil) // delivered again
			if n2, s2, _ := turns(t, s); n2 != n || !reflect.DeepEqual(s2, sessions) {
				t.Errorf("after a redelivery %d turns %v, want %d %v", n2, s2, n, sessions)
			}
		})
	}
}

// Only the immediate neighbour lends its session, and only within NextTurnWindowMs; a turn lent a
// session still yields to its own message when that comes late (from its own session or another
// one running at once), and counts once.
func TestStore_NextTurnSessionLimits(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	tok := func(i int64) event.Tokens { return event.Tokens{Input: 900 + i, Output: 60 + i} }
	open := func(t *testing.T) *store.Store {
		s, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "o.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("TooLate", func(t *testing.T) {
		s := open(t)
		r := geminiTurn("r", t0, "gemini-3.5-flash-lite", "generateContent", tok(0))
		next := geminiTurn("n", t0.Add(time.Duration(store.NextTurnWindowMs+1000)*time.Millisecond), "gemini-3.8-flash", "streamGenerateContent", tok(1))
		write(t, s, []event.Event{r, next, geminiMessage("m", next.Time.Add(time.Second), "gem-a", "gemini-3.8-flash", tok(1))}, nil)
		if got := apiTurn(t, s, "r"); got.Session != "" {
			t.Errorf("a turn %d ms before the next took its session: %+v", store.NextTurnWindowMs+1000, got)
		}
	})
	t.Run("NotTheImmediateNeighbour", func(t *testing.T) {
		s := open(t)
		r := geminiTurn("r", t0, "gemini-3.5-flash-lite", "generateContent", tok(0))
		x := geminiTurn("x", t0.Add(time.Second), "gemini-3.8-flash", "streamGenerateContent", tok(5)) // never claimed
		next := geminiTurn("n", t0.Add(2*time.Second), "gemini-3.8-flash", "streamGenerateContent", tok(1))
		write(t, s, []event.Event{r, x, next, geminiMessage("m", t0.Add(3*time.Second), "gem-a", "gemini-3.8-flash", tok(1))}, nil)
		if got := apiTurn(t, s, "x"); got.Session != "gem-a" || got.Message != store.NextTurnMark {
			t.Errorf("the turn just before the linked one: %+v, want gem-a lent", got)
		}
		if got := apiTurn(t, s, "r"); got.Session != "" {
			t.Errorf("a turn two requests before took the session: %+v", got)
		}
	})
	t.Run("AnotherMember", func(t *testing.T) { // on a team hub, members' turns interleave
		s := open(t)
		r := geminiTurn("r", t0, "gemini-3.5-flash-lite", "generateContent", tok(0))
		r.Member = "alice"
		next := geminiTurn("n", t0.Add(time.Second), "gemini-3.8-flash", "streamGenerateContent", tok(1))
		m := geminiMessage("m", t0.Add(2*time.Second), "bob:gem-b", "gemini-3.8-flash", tok(1))
		next.Member, m.Member = "bob", "bob"
		write(t, s, []event.Event{r, next, m}, nil)
		if got := apiTurn(t, s, "n"); got.Session != "bob:gem-b" {
			t.Fatalf("bob's turn: %+v", got)
		}
		if got := apiTurn(t, s, "r"); got.Session != "" {
			t.Errorf("alice's turn took bob's session: %+v", got)
		}
	})
	for _, session := range []string{"gem-a", "gem-b"} {
		t.Run(fmt.Sprintf("LateMessageFrom%s", session), func(t *testing.T) {
			s := open(t)
			a := geminiTurn("a", t0, "gemini-3.8-flash", "streamGenerateContent", tok(1))
			b := geminiTurn("b", t0.Add(4*time.Second), "gemini-3.8-flash", "streamGenerateContent", tok(2))
			write(t, s, []event.Event{a, b, geminiMessage("mb", t0.Add(5*time.Second), "gem-a", "gemini-3.8-flash", tok(2))}, nil)
			if got := apiTurn(t, s, "a"); got.Session != "gem-a" || got.Message != store.NextTurnMark {
				t.Fatalf("turn a before its message: %+v, want gem-a lent", got)
			}
			write(t, s, []event.Event{geminiMessage("ma", t0.Add(2*time.Second), session, "gemini-3.8-flash", tok(1))}, nil)
			if got, want := apiTurn(t, s, "a"), (apiTurnRow{session, "/work/g", "uuid-ma"}); got != want {
				t.Errorf("turn a after its message: %+v, want %+v", got, want)
			}
			if n, sessions, _ := turns(t, s); n != 2 {
				t.Errorf("counted %d turns %v, want 2: a late message and the turn it names count once", n, sessions)
			}
		})
	}
}
