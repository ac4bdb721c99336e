package proxy

import (
	"errors"
	"fmt"

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

// errCompressionPanic is a bug in compression, caught: the request went as it came.
var errCompressionPanic = errors.New("request compression panicked")

// compressSafely compresses a request body; a panic in compression is an error, and the body goes
// upstream as it came.
func compressSafely(c *compress.Compressor, api string, body []byte) (res *compress.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = &compress.Result{Body: body}, fmt.Errorf("%w: %v", errCompressionPanic, p)
		}
	}()
	return c.Request(api, body)
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
	for i, d := range res.Decisions {
		ev := event.New(event.KindCompression, "observer-proxy")
		// Derived from the turn's id: a decision published twice is stored once.
		ev.Time, ev.ID = turn.Time, event.ID(turn.ID, "compression", fmt.Sprint(i))
		ev.Client, ev.SessionID, ev.Host, ev.User = turn.Client, turn.SessionID, turn.Host, turn.User
		c := &event.Compression{Mechanism: d.Mechanism, Mode: mode, Model: t.Model, Provider: t.Provider,
			TurnID: turn.ID, MessageIndex: d.Index, Count: d.Count, Score: d.Score,
			BytesBefore: int64(d.Before), BytesAfter: int64(d.After),
			TokensBefore: int64(d.Before) / 4, TokensAfter: int64(d.After) / 4, StashID: d.StashID}
		if d.Original != "" {
			c.Original = scrub.String(d.Original)
		}
		if p.cfg.Coster != nil && c.TokensBefore > c.TokensAfter && t.Model != "" {
			// A new output saves input tokens; one compressed in an earlier request would have
			// been read from the prompt cache (cache_aware and cache modes keep it there), so it
			// saves cache reads.
			saved := event.Tokens{Input: c.TokensBefore - c.TokensAfter}
			if d.Repeat && mode != compress.ModeToken {
				saved = event.Tokens{CacheRead: saved.Input}
			}
			if usd, known := p.cfg.Coster.Cost(t.Model, saved); known {
				c.SavedUSD = usd
			}
		}
		ev.Compression = c
		evs = append(evs, ev)
	}
	return evs
}
