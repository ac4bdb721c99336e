package vscopilot

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever the lines hold, the parser does not panic, every event it emits is valid
// (an id, this client, a time), its usage is never negative, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	transcripttest.SeedLines(f, 4, 16<<10, tracePath(trace1), tracePath(trace2))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"s","name":"chat x","startTimeUnixNano":1781293600000000000,"attributes":[{"key":"gen_ai.conversation.id","value":{"stringValue":"c"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"5"}},{"key":"gen_ai.usage.cache_read.input_tokens","value":{"intValue":"9"}},{"key":"gen_ai.output.messages","value":{"stringValue":"[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"name\":\"mcp_x\",\"arguments\":\"[1]\"}]}]"}}],"status":{"code":"STATUS_CODE_ERROR"}}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := transcript.Source{Client: Client, Path: "/t/x_VSGitHubCopilot_traces.jsonl"}
		for _, e := range transcripttest.FuzzLines(t, New(nil), src, data, negative) {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() || e.SessionID == "" {
				t.Fatalf("event %+v: want an id, client %s, a time and a conversation", e, Client)
			}
		}
	})
}

func negative(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.Reasoning > u.Output
}
