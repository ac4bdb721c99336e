package zcode

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

func sourceFor(name string) transcript.Source {
	return transcript.Source{Client: Client, Path: name + "/" + DBName, Database: true}
}

func defaultPrices() *pricing.Table { return pricing.Default() }

// FuzzRecord: whatever a model_usage row and its session hold (names, ids, figures, times of any
// form), the events a pass makes of them have an id, this client and a time, and never a negative
// figure.
func FuzzRecord(f *testing.F) {
	f.Add("ses_1", "", "/home/dev/x", "1", "glm-4.6", "completed", int64(1830), int64(412), int64(96), int64(0), int64(14200), int64(1781863201000), int64(1781863209500), "1781863200000")
	f.Add("a", "a", "", "", "", "completed", int64(-5), int64(3), int64(99), int64(-1), int64(2), int64(0), int64(1781863209), "2026-06-19T10:00:00Z")
	f.Add("child", "ghost", "rel/dir", "t", "m", "streaming", int64(1), int64(1), int64(0), int64(0), int64(0), int64(1e18), int64(-1), "x")
	f.Fuzz(func(t *testing.T, session, parent, dir, turn, model, status string, in, out, reasoning, cacheRead, cacheWrite, started, completed int64, created string) {
		p := newParser(sourceFor("f"), nil, nil)
		p.prices = defaultPrices
		r := &rows{
			usage: []usageRow{{rowid: 1, session: session, turn: turn, model: model, status: status, input: in, output: out,
				reasoning: reasoning, cacheRead: cacheRead, cacheWrite: cacheWrite, started: started, completed: completed}},
			sessions: map[string]sessionRow{session: {id: session, parent: parent, dir: dir, title: turn, created: unixMs(created)},
				parent: {id: parent, parent: session}},
		}
		for _, e := range p.events(r) {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
			if u := e.TokenUsage; u != nil && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.Reasoning > u.Output || u.CostUSD < 0) {
				t.Fatalf("usage %+v", u)
			}
			if e.Kind == event.KindSession && e.Session == nil {
				t.Fatalf("session event without a session: %+v", e)
			}
		}
	})
}
