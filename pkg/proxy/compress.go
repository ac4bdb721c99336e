package proxy

import (
	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
)

// compressAPI names the request API of a route that compression knows, or "".
func compressAPI(rt route) string {
	switch {
	case rt.provider == Anthropic && rt.endpoint == "/v1/messages":
		return compress.APIAnthropic
	case rt.provider == OpenAI && rt.endpoint == "/v1/chat/completions":
		return compress.APIChat
	case rt.provider == OpenAI && rt.endpoint == "/v1/responses":
		return compress.APIResponses
	}
	return ""
}

// compressionEvents puts the totals of a compressed request on its turn and returns one
// compression event per decision. Token figures are estimates: a quarter of the bytes.
func (p *Proxy) compressionEvents(tc *turnCtx, turn *event.Event, t *event.APITurn) []event.Event {
	res := tc.compressed
	if res == nil {
		return nil
	}
	mode := p.cfg.Compressor.Mode()
	saved := tc.bytesIn - int64(len(res.Body))
	t.Compression = &event.TurnCompression{Mode: mode, Decisions: len(res.Decisions), BytesBefore: tc.bytesIn,
		BytesAfter: int64(len(res.Body)), TokensSaved: max(saved, 0) / 4}
	evs := make([]event.Event, 0, len(res.Decisions))
	for _, d := range res.Decisions {
		ev := event.New(event.KindCompression, "observer-proxy")
		ev.Time, ev.ID = turn.Time, event.RandomID()
		ev.Client, ev.SessionID, ev.Host, ev.User = turn.Client, turn.SessionID, turn.Host, turn.User
		c := &event.Compression{Mechanism: d.Mechanism, Mode: mode, Model: t.Model, Provider: t.Provider,
			TurnID: turn.ID, MessageIndex: d.Index, Count: d.Count, Score: d.Score,
			BytesBefore: int64(d.Before), BytesAfter: int64(d.After),
			TokensBefore: int64(d.Before) / 4, TokensAfter: int64(d.After) / 4, StashID: d.StashID}
		if d.Original != "" {
			c.Original = scrub.String(d.Original)
		}
		if p.cfg.Coster != nil && c.TokensBefore > c.TokensAfter && t.Model != "" {
			if usd, known := p.cfg.Coster.Cost(t.Model, event.Tokens{Input: c.TokensBefore - c.TokensAfter}); known {
				c.SavedUSD = usd
			}
		}
		ev.Compression = c
		evs = append(evs, ev)
	}
	return evs
}
