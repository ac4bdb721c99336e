package iflow

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord feeds arbitrary lines to one parser: it must never panic, every event it returns
// must validate, token counts must not be negative, and its state must load again.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"type":"user","uuid":"u","sessionId":"session-p","cwd":"/w","timestamp":"2026-02-27T09:00:05Z","message":{"role":"user","content":[{"type":"image"},{"type":"tool_result","tool_use_id":"c","content":{"functionResponse":{"name":7,"response":{"error":{"message":"m"}}}}}]},"toolUseResult":{"status":"cancelled"}}`,
		`{"type":"assistant","uuid":"a","timestamp":"2026-02-27T09:00:06Z","message":{"id":"m","model":"glm-4.7","content":[{"type":"tool_use","id":"c","name":"mcp__x","input":[1]},{"type":"tool_use","name":"read_many_files","input":{"paths":[1,"a"]}}],"usage":{"input_tokens":"-5","output_tokens":1e300,"cache_read_input_tokens":"x"}}}`,
		`{"type":"user","timestamp":"2026-02-27T09:00:07Z","message":{"content":[{"type":"tool_result","tool_use_id":"d","content":{"callId":"d","responseParts":{"functionResponse":{"response":{"output":{"a":1}}}},"resultDisplay":{"fileDiff":"x"}}}]}}`,
		`{"type":"user","isCompactSummary":true,"message":{"content":"summary"}}`, `{"type":"user","isMeta":true,"message":{"content":"ctx"}}`,
		`{"type":"weird","sessionId":""}`, `{"type":"assistant","timestamp":"bad","message":{"content":"x"}}`, `{"message":null}`, "\xff", `[]`, `{}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	transcripttest.SeedLines(f, 16, 8192, mainFile, subFile)
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/fuzz/-w/session-s.jsonl", SessionID: "session-s"}
	f.Fuzz(func(t *testing.T, data []byte) {
		transcripttest.FuzzLines(t, a, src, data, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
		})
	})
}
