package cli

import (
	"context"
	"os"
	"time"

	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// writerModel is the language-model summarizer of the writer's memory loop ([memory] model), or
// nil when no model is configured: then nothing is built and no call is ever made. Its calls are
// priced with the writer's prices and published on the writer's bus as api_turns of client
// "observer".
func writerModel(e *env, st *store.Store, pf *prices.Follower, cl *bus.Client, teamHub bool) memory.ModelSummarizer {
	mc := memory.ModelFromConfig(e.cfg)
	if mc == nil {
		return nil
	}
	if teamHub {
		// A hub's store holds its members' sessions, whose prompts are not the hub's to send, and
		// its writer consumes the team stream, not the api_turns it would publish.
		e.logger.Warn("[memory] model is ignored on a team hub's writer", "model", mc.Model)
		return nil
	}
	mc.DB, mc.Prices, mc.Logger = st.DB, pf, e.logger
	if rdb, err := st.ReadDB(); err == nil {
		mc.Read = rdb
	}
	mc.Publish = func(ctx context.Context, ev *event.Event) error {
		_, err := cl.Publish(ctx, ev)
		return err
	}
	e.logger.Info("language-model summaries are on", "model", mc.Model, "provider", mc.Provider, "upstream", mc.Upstream,
		"daily_cap_usd", mc.DailyCapUSD, "min_new_bytes", mc.MinNewBytes, "min_new_text", mc.MinNewText)
	if os.Getenv(mc.APIKeyEnv) == "" {
		e.logger.Warn("[memory] model is set but its API key is not in the environment: no summary will be made until it is",
			"variable", mc.APIKeyEnv)
	}
	if _, _, known := pf.Quote(mc.Model, event.Tokens{Input: 1}, time.Time{}); !known {
		e.logger.Warn("[memory] model has no known price: it is not called, since the daily cap could not hold; add [pricing.models]",
			"model", mc.Model)
	}
	return mc
}
