package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// One model call seen by the proxy, by the client's OTLP telemetry and by its transcript counts
// once, at the proxy's figures; seen by OTLP and the transcript, once at OTLP's; a Codex call (no
// request id in its telemetry) seen by the proxy and OTLP within the join window, once. In any
// order of arrival, straddling an hour, the rollups stay equal to a rebuild.
func TestStore_OTLPTurnsCountOnce(t *testing.T) {
	base := time.Date(2026, 6, 1, 10, 59, 58, 0, time.UTC)
	proxyTok := event.Tokens{Input: 120, Output: 45, CacheRead: 1000, CacheCreation: 300, CacheCreation1h: 100}
	otlpTok := event.Tokens{Input: 120, Output: 45, CacheRead: 1000, CacheCreation: 300} // no 1h split
	mk := func() (proxy, otlp, transcriptRow, otlpOnly, transcriptOfOTLPOnly, codexProxy, codexOTLP event.Event) {
		proxy = newEv(event.KindAPITurn, "p1", base)
		proxy.Client, proxy.SessionID = "claude-code", "s1"
		proxy.APITurn = &event.APITurn{Tokens: proxyTok, Provider: "anthropic", Model: "claude-sonnet-4-5", MessageID: "msg_1",
			RequestID: "req_1", Status: 200, CostUSD: 0.5, Reliability: event.ReliabilityAccurate}
		otlp = newEv(event.KindAPITurn, "o1", base.Add(3*time.Second)) // the next hour
		otlp.Client, otlp.SessionID = "claude-code", "s1"
		otlp.APITurn = &event.APITurn{Tokens: otlpTok, Provider: "anthropic", Model: "claude-sonnet-4-5", RequestID: "req_1",
			Status: 200, CostUSD: 0.4, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
		transcriptRow = newEv(event.KindTokenUsage, "u1", base.Add(time.Second))
		transcriptRow.Client, transcriptRow.SessionID = "claude-code", "s1"
		transcriptRow.TokenUsage = &event.TokenUsage{Tokens: otlpTok, MessageID: "msg_1", RequestID: "req_1", Model: "claude-sonnet-4-5",
			CostUSD: 0.4, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
		// A request the proxy did not see (the client not pointed at it): OTLP and transcript.
		otlpOnly = newEv(event.KindAPITurn, "o2", base.Add(time.Hour))
		otlpOnly.Client, otlpOnly.SessionID = "claude-code", "s1"
		otlpOnly.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 7, Output: 3}, Provider: "anthropic", Model: "claude-sonnet-4-5",
			RequestID: "req_2", Status: 200, CostUSD: 0.01, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
		transcriptOfOTLPOnly = newEv(event.KindTokenUsage, "u2", base.Add(time.Hour+time.Second))
		transcriptOfOTLPOnly.Client, transcriptOfOTLPOnly.SessionID = "claude-code", "s1"
		transcriptOfOTLPOnly.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 7, Output: 1}, MessageID: "msg_2", RequestID: "req_2",
			Model: "claude-sonnet-4-5", CostUSD: 0.009, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
		codexProxy = newEv(event.KindAPITurn, "p3", base.Add(2*time.Hour))
		codexProxy.Client, codexProxy.SessionID = "codex", "c1"
		codexProxy.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 120, Output: 45, CacheRead: 1000}, Provider: "openai", Model: "gpt-5",
			MessageID: "resp_1", Status: 200, CostUSD: 0.2, Reliability: event.ReliabilityAccurate}
		codexOTLP = newEv(event.KindAPITurn, "o3", base.Add(2*time.Hour+40*time.Millisecond))
		codexOTLP.Client, codexOTLP.SessionID = "codex", "c1"
		codexOTLP.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 120, Output: 45, CacheRead: 1000}, Provider: "openai", Model: "gpt-5",
			Status: 200, CostUSD: 0.2, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
		return
	}
	// Codex 0.171 keys its transcript usage by response id, which its OTLP turn does not carry: a
	// session's OTLP turn and transcript row within the join window are one turn.
	codexRow := func() event.Event {
		u := newEv(event.KindTokenUsage, "u3", base.Add(5*time.Hour))
		u.Client, u.SessionID = "codex", "c2"
		u.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 50, Output: 5}, MessageID: "resp_9", Model: "gpt-5",
			CostUSD: 0.05, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
		return u
	}
	codexOTLPOnly := func() event.Event {
		o := newEv(event.KindAPITurn, "o4", base.Add(5*time.Hour+10*time.Millisecond))
		o.Client, o.SessionID = "codex", "c2"
		o.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 50, Output: 5}, Provider: "openai", Model: "gpt-5",
			Status: 200, CostUSD: 0.05, Reliability: event.ReliabilityAccurate, Origin: "otlp"}
		return o
	}
	for _, order := range []string{"ProxyFirst", "OTLPFirst", "TranscriptFirst", "OneBatch"} {
		t.Run(order, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p, o, tr, oo, tro, cp, co := mk()
			switch order {
			case "ProxyFirst":
				write(t, s, []event.Event{p, cp}, nil)
				write(t, s, []event.Event{o, oo, co}, nil)
				write(t, s, []event.Event{tr, tro}, nil)
			case "OTLPFirst":
				write(t, s, []event.Event{o, oo, co}, nil)
				write(t, s, []event.Event{tr, tro}, nil)
				write(t, s, []event.Event{p, cp}, nil)
			case "TranscriptFirst":
				write(t, s, []event.Event{tr, tro}, nil)
				write(t, s, []event.Event{o, oo, co}, nil)
				write(t, s, []event.Event{p, cp}, nil)
			case "OneBatch":
				write(t, s, []event.Event{tr, o, co, p, tro, oo, cp}, nil)
			}
			if order == "TranscriptFirst" {
				write(t, s, []event.Event{codexRow()}, nil)
				write(t, s, []event.Event{codexOTLPOnly()}, nil)
			} else {
				write(t, s, []event.Event{codexOTLPOnly(), codexRow()}, nil)
			}
			n, sessions, input := turns(t, s)
			want := []string{"c1/1", "c2/0", "s1/0", "s1/1"} // proxy=0: OTLP turns of requests the proxy did not see
			if n != 4 || !reflect.DeepEqual(sessions, want) || input != 120+7+120+50 {
				t.Fatalf("counted %d turns %v, input %d; want 4 %v, input %d", n, sessions, input, want, 120+7+120+50)
			}
			var cache1h int64
			var usd float64
			s.DB.QueryRow("SELECT sum(cache_creation_1h_tokens), sum(cost_usd) FROM ("+fmt.Sprintf(store.TurnsSQL, "1", "1")+")",
				sqlNamedWindow()).Scan(&cache1h, &usd)
			if cache1h != 100 || fmt.Sprintf("%.3f", usd) != "0.760" {
				t.Errorf("1h cache writes %d, cost %.3f: want the proxy's 100 and 0.5+0.01+0.2+0.05", cache1h, usd)
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

func sqlNamedWindow() any { return sql.Named("window", store.JoinWindowMs) }

// A Codex session's two responses 20 s apart, the proxy seeing only one: the other's OTLP turn
// still counts (a turn stands for one turn only: same figures), and so does a transcript row whose
// figures match no OTLP turn.
func TestStore_OTLPWindowMatchesFigures(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	turn := func(id, origin string, at time.Time, in int64) event.Event {
		e := newEv(event.KindAPITurn, id, at)
		e.Client, e.SessionID = "codex", "c9"
		e.APITurn = &event.APITurn{Tokens: event.Tokens{Input: in, Output: 5}, Provider: "openai", Model: "gpt-5", Status: 200,
			CostUSD: 0.01, Reliability: event.ReliabilityAccurate, Origin: origin}
		return e
	}
	row := newEv(event.KindTokenUsage, "u9", base.Add(40*time.Second))
	row.Client, row.SessionID = "codex", "c9"
	row.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 300, Output: 5}, MessageID: "resp_x", Model: "gpt-5",
		CostUSD: 0.01, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	write(t, s, []event.Event{
		turn("p1", "", base, 100),                         // the proxy saw the first response
		turn("o1", "otlp", base.Add(time.Second), 100),    // OTLP saw both
		turn("o2", "otlp", base.Add(20*time.Second), 200), // the proxy missed this one
		row, // a third response only the transcript has
	}, nil)
	n, _, input := turns(t, s)
	if n != 3 || input != 100+200+300 {
		t.Fatalf("counted %d turns, input %d; want 3 (proxy, the OTLP turn it missed, the transcript row), input 600", n, input)
	}
}
