package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// sessionless builds a Gemini CLI exchange: the proxy's turn (no session, as Gemini CLI sends none)
// and the transcript's message of the same turn, with the same figures.
func sessionless(i int, at time.Time, tok event.Tokens) (turn, usage event.Event) {
	turn = newEv(event.KindAPITurn, fmt.Sprintf("gturn-%d", i), at)
	turn.Client, turn.SessionID, turn.Project = "gemini-cli", "", ""
	turn.APITurn = &event.APITurn{Tokens: tok, Provider: "google", Endpoint: "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
		Model: "gemini-2.5-pro", MessageID: fmt.Sprintf("resp-%d", i), Status: 200, CostUSD: 0.01, Reliability: event.ReliabilityAccurate}
	usage = newEv(event.KindTokenUsage, fmt.Sprintf("gmsg-%d", i), at.Add(700*time.Millisecond))
	usage.Client, usage.SessionID, usage.Project = "gemini-cli", "gem-session", "/work/g"
	usage.TokenUsage = &event.TokenUsage{Tokens: tok, MessageID: fmt.Sprintf("uuid-%d", i), Model: "gemini-2.5-pro",
		CostUSD: 0.01, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	return turn, usage
}

// turns reads TurnsSQL whole: what cost counts.
func turns(t *testing.T, s *store.Store) (n int, sessions []string, input int64) {
	t.Helper()
	rows, err := s.DB.Query("SELECT session_id, input_tokens, proxy FROM ("+fmt.Sprintf(store.TurnsSQL, "1", "1")+")",
		sql.Named("window", store.JoinWindowMs))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var sid string
		var in, proxy int64
		if err := rows.Scan(&sid, &in, &proxy); err != nil {
			t.Fatal(err)
		}
		n++
		input += in
		sessions = append(sessions, fmt.Sprintf("%s/%d", sid, proxy))
	}
	sort.Strings(sessions)
	return n, sessions, input
}

// A session-less proxy turn and the transcript message of the same turn count once, at the proxy's
// figures, under the message's session, whichever is stored first and whether or not they come in
// one batch; turns with equal figures pair one to one; a turn alone (Gemini CLI's router call) and
// a message alone still count, the turn under the session of the turn after it; the rollups stay
// equal to a rebuild.
func TestStore_LinksSessionlessTurns(t *testing.T) {
	base := time.Date(2026, 6, 1, 10, 59, 50, 0, time.UTC) // the pairs straddle an hour's edge
	same := event.Tokens{Input: 900, Output: 40, CacheRead: 5000, Reasoning: 12}
	for _, order := range []string{"TurnFirst", "MessageFirst", "OneBatch"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var tr, us []event.Event
			for i := 0; i < 3; i++ { // three turns with the same figures, seconds apart
				a, b := sessionless(i, base.Add(time.Duration(i)*4*time.Second), same)
				tr, us = append(tr, a), append(us, b)
			}
			router, _ := sessionless(9, base.Add(time.Second), event.Tokens{Input: 77, Output: 3})
			_, lone := sessionless(8, base.Add(2*time.Hour), event.Tokens{Input: 500, Output: 9})
			tr, us = append(tr, router), append(us, lone)
			switch order {
			case "TurnFirst":
				write(t, s, tr, nil)
				write(t, s, us, nil)
			case "MessageFirst":
				write(t, s, us, nil)
				write(t, s, tr, nil)
			case "OneBatch":
				write(t, s, append(append([]event.Event{}, us[:2]...), append(tr, us[2:]...)...), nil)
			}
			n, sessions, input := turns(t, s)
			// The router's call, a second after the first turn, takes the session of the turn after it.
			want := []string{"gem-session/0", "gem-session/1", "gem-session/1", "gem-session/1", "gem-session/1"}
			if n != 5 || !reflect.DeepEqual(sessions, want) || input != 3*900+77+500 {
				t.Fatalf("counted %d turns %v, input %d; want 5 %v, input %d", n, sessions, input, want, 3*900+77+500)
			}
			var linked int
			s.DB.QueryRow("SELECT count(DISTINCT transcript_message_id) FROM api_turns WHERE transcript_message_id NOT IN ('', ?) AND project = '/work/g'",
				store.NextTurnMark).Scan(&linked)
			if linked != 3 {
				t.Errorf("%d proxy turns linked to distinct messages, want 3", linked)
			}
			got := dumpRollups(t, s)
			if err := s.RebuildRollups(ctx); err != nil {
				t.Fatal(err)
			}
			if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("kept rollups differ from a rebuild:\n%v\n%v", got, want)
			}
			// Delivered again (at-least-once): nothing changes.
			write(t, s, append(tr, us...), nil)
			if n2, _, _ := turns(t, s); n2 != n {
				t.Errorf("after a redelivery %d turns, want %d", n2, n)
			}
		})
	}
	// Figures that differ, a turn of another client or model, or one farther than the join window
	// is not linked.
	t.Run("NoMatch", func(t *testing.T) {
		ctx := context.Background()
		s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var evs []event.Event
		for i, f := range []func(a, b *event.Event){
			func(a, b *event.Event) { b.TokenUsage.Output++ },
			func(a, b *event.Event) { b.Client = "qwen-code" },
			func(a, b *event.Event) { b.TokenUsage.Model = "gemini-2.5-flash" },
			func(a, b *event.Event) {
				b.Time = a.Time.Add(time.Duration(store.JoinWindowMs+1000) * time.Millisecond)
			},
		} {
			a, b := sessionless(i, base.Add(time.Duration(i)*time.Hour), same)
			f(&a, &b)
			evs = append(evs, a, b)
		}
		write(t, s, evs, nil)
		if n, _, _ := turns(t, s); n != 8 {
			t.Errorf("%d turns counted, want 8 (nothing linked)", n)
		}
	})
}

// A transcript message that keeps the API's response id (Pi) is the proxy turn of that id: the
// turn, of client "unknown" because Pi sends no mark, takes the message's session, project and
// client, whichever is stored first, even when the figures differ; a turn the proxy named for
// another client keeps its client and no session. Each counts once; the rollups equal a rebuild.
func TestStore_LinksTurnsByMessageID(t *testing.T) {
	at := time.Date(2026, 6, 1, 10, 59, 50, 0, time.UTC)
	pair := func(i int, proxyClient string) (turn, usage event.Event) {
		turn, usage = sessionless(i, at.Add(time.Duration(i)*time.Minute), event.Tokens{Input: 900, Output: 40, CacheRead: 5000})
		turn.Client = proxyClient
		turn.APITurn.Model = "gpt-5.2"
		usage.Client, usage.SessionID, usage.Project = "pi", "pi-session", "/work/pi"
		usage.TokenUsage.MessageID = turn.APITurn.MessageID
		usage.TokenUsage.Model = "gpt-5.2"
		usage.TokenUsage.Output = 41 // the client's copy may differ: the id decides
		return turn, usage
	}
	for _, order := range []string{"TurnFirst", "MessageFirst", "OneBatch"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			t1, u1 := pair(1, "unknown")
			t2, u2 := pair(2, "cline")
			switch order {
			case "TurnFirst":
				write(t, s, []event.Event{t1, t2}, nil)
				write(t, s, []event.Event{u1, u2}, nil)
			case "MessageFirst":
				write(t, s, []event.Event{u1, u2}, nil)
				write(t, s, []event.Event{t1, t2}, nil)
			case "OneBatch":
				write(t, s, []event.Event{u1, t1, t2, u2}, nil)
			}
			n, sessions, input := turns(t, s)
			if want := []string{"/1", "pi-session/1"}; n != 2 || !reflect.DeepEqual(sessions, want) || input != 2*900 {
				t.Fatalf("counted %d turns %v, input %d; want 2 %v, input %d", n, sessions, input, want, 2*900)
			}
			var client, session, project string
			s.DB.QueryRow("SELECT client, session_id, project FROM api_turns WHERE message_id = ?", t1.APITurn.MessageID).Scan(&client, &session, &project)
			if client != "pi" || session != "pi-session" || project != "/work/pi" {
				t.Errorf("the unknown turn is client %q session %q project %q, want pi pi-session /work/pi", client, session, project)
			}
			s.DB.QueryRow("SELECT client, session_id FROM api_turns WHERE message_id = ?", t2.APITurn.MessageID).Scan(&client, &session)
			if client != "cline" || session != "" {
				t.Errorf("the named turn is client %q session %q, want cline and no session", client, session)
			}
			got := dumpRollups(t, s)
			if err := s.RebuildRollups(ctx); err != nil {
				t.Fatal(err)
			}
			if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("kept rollups differ from a rebuild:\n%v\n%v", got, want)
			}
		})
	}
}

// A store made before the rollups (schema 0004) with rows in it migrates to today's schema: the
// rollup rebuilds of 0005 and 0008 wait for the column 0010 adds, then equal a rebuild.
func TestStore_MigratesFromSchema4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db := storeAtSchema(t, path, 4)
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < 5; i++ {
		if _, err := db.Exec(`INSERT INTO api_turns (event_id, ts, client, session_id, project, provider, endpoint, model, message_id,
			request_id, stream, status, error_class, error_message, stop_reason, latency_ms, ttfb_ms, input_tokens, output_tokens,
			cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, reliability, messages,
			tools, bytes_in, bytes_out, partial) VALUES (?, ?, 'claude-code', 's1', '/p', 'anthropic', '/v1/messages', 'claude-sonnet-4-5',
			?, '', 1, 200, '', '', 'end_turn', 1, 1, 10, 20, 30, 0, 0, 0, 0.5, 'accurate', 1, 0, 1, 1, 0)`,
			fmt.Sprint("e", i), at+int64(i)*600_000, fmt.Sprint("m", i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := dumpRollups(t, s)
	if len(got) == 0 {
		t.Fatal("no rollups after migrating a store with rows")
	}
	if err := s.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("rollups after the migration differ from a rebuild")
	}
	var cost float64
	s.DB.QueryRow("SELECT sum(cost_usd) FROM usage_sessions").Scan(&cost)
	if strings.TrimSpace(fmt.Sprintf("%.2f", cost)) != "2.50" {
		t.Errorf("usage_sessions sums $%v, want $2.50", cost)
	}
}

// A turn the proxy could not name (client unknown: Continue's CLI sends only the OpenAI SDK's
// marks) and the message of a client that keeps the whole prompt as its input (Continue records
// prompt_tokens, cached tokens included, and no cached count) are one turn when the model, the
// output and the whole prompt agree: it counts once, at the proxy's split, under the message's
// session and client, whichever is stored first. A named turn still needs the same split, and a
// different prompt links nothing.
func TestStore_LinksUnknownTurnsByWholePrompt(t *testing.T) {
	at := time.Date(2026, 12, 6, 18, 30, 15, 0, time.UTC)
	pair := func(i int, turnClient string, msg event.Tokens) []event.Event {
		turn := newEv(event.KindAPITurn, fmt.Sprintf("uturn-%d", i), at.Add(time.Duration(i)*time.Hour))
		turn.Client, turn.SessionID, turn.Project = turnClient, "", ""
		turn.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 120, CacheRead: 1000, Output: 45}, Provider: "openai",
			Endpoint: "/v1/responses", Model: "gpt-5.2", MessageID: fmt.Sprintf("resp_%d", i), Status: 200, Reliability: event.ReliabilityAccurate}
		usage := newEv(event.KindTokenUsage, fmt.Sprintf("cmsg-%d", i), turn.Time.Add(2*time.Second))
		usage.Client, usage.SessionID, usage.Project = "continue-cli", "cn-session", "/work/c"
		usage.TokenUsage = &event.TokenUsage{Tokens: msg, MessageID: fmt.Sprintf("cn-%d", i), Model: "gpt-5.2",
			Reliability: event.ReliabilityApproximate, Origin: "transcript"}
		return []event.Event{turn, usage}
	}
	whole := event.Tokens{Input: 1120, Output: 45}
	for _, order := range []string{"TurnFirst", "MessageFirst", "OneBatch"} {
		t.Run(order, func(t *testing.T) {
			s, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs := pair(0, "unknown", whole)
			switch order {
			case "TurnFirst":
				write(t, s, evs[:1], nil)
				write(t, s, evs[1:], nil)
			case "MessageFirst":
				write(t, s, evs[1:], nil)
				write(t, s, evs[:1], nil)
			case "OneBatch":
				write(t, s, evs, nil)
			}
			n, sessions, input := turns(t, s)
			if n != 1 || !reflect.DeepEqual(sessions, []string{"cn-session/1"}) || input != 120 {
				t.Fatalf("counted %d turns %v, input %d; want one proxy turn in cn-session at the proxy's input 120", n, sessions, input)
			}
			var client string
			s.DB.QueryRow("SELECT client FROM api_turns").Scan(&client)
			if client != "continue-cli" {
				t.Errorf("the linked turn's client is %q, want the message's continue-cli", client)
			}
		})
	}
	t.Run("NoMatch", func(t *testing.T) {
		s, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "o.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var evs []event.Event
		evs = append(evs, pair(0, "unknown", event.Tokens{Input: 1121, Output: 45})...) // another prompt
		evs = append(evs, pair(1, "qwen-code", whole)...)                               // a named turn, another split
		evs = append(evs, pair(2, "unknown", event.Tokens{Input: 1120, Output: 46})...) // another output
		write(t, s, evs, nil)
		if n, _, _ := turns(t, s); n != 6 {
			t.Errorf("%d turns counted, want 6 (nothing linked)", n)
		}
	})
}
