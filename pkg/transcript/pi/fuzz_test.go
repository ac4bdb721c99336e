package pi

import (
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord feeds arbitrary lines to one parser: it must never panic, every event it returns must
// validate, token counts must not be negative, and its state must survive a round trip.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w","parentSession":"/a/2026-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000000.jsonl"}`,
		`{"type":"session","id":"s","timestamp":"2025-11-02T09:00:00.000Z","cwd":"/w","modelId":"m","branchedFrom":"x"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AAA","mimeType":"image/png"}],"timestamp":1767348001000}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"path":"@x"}},{"type":"toolCall","name":"grep","arguments":{"pattern":"p","path":"d"}}],"provider":"p","model":"claude-sonnet-4-5","usage":{"input":-1,"output":"7","cacheRead":1.5,"cacheWrite":1e300,"cost":{"total":-2}},"stopReason":"toolUse","timestamp":1767348002000}}`,
		`{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-02T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":"text","isError":true,"timestamp":1}}`,
		`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"x","exitCode":null,"cancelled":true,"timestamp":1767348002000}}`,
		`{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"e","timestamp":1767348002000}}`,
		`{"type":"compaction","id":"d","parentId":"c","timestamp":"2026-01-02T10:00:04.000Z","summary":"s","firstKeptEntryId":"a","tokensBefore":100}`,
		`{"type":"compaction","timestamp":"2025-01-02T10:00:04.000Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":"x"}`,
		`{"type":"model_change","id":"e","parentId":"d","timestamp":"2026-01-02T10:00:05.000Z","provider":"p","modelId":"m2"}`,
		`{"type":"branch_summary","id":"f","parentId":"a","timestamp":"2026-01-02T10:00:06.000Z","fromId":"e","summary":"s"}`,
		`{"type":"custom_message","customType":"x","content":"c","display":true}`,
		`{"type":"message","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"thinking","thinking":""},{"type":"text","text":"r"},{"type":"text","text":7}],"responseId":"r","timestamp":1767348002000}}`,
		`{"type":"label","targetId":"a","label":"l"}`, `{"type":"session_info","name":"n"}`,
		"\xff\xfe", `[]`, `{}`, `{"type":7}`, `{"type":"message","message":[]}`, `{"type":"message","timestamp":"garbage","message":{"role":"user","content":"x"}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[2] + "\n" + seeds[3] + "\n" + seeds[4] + "\n" + seeds[7]))
	transcripttest.SeedLines(f, 16, 8192, fixV1, fixRPC, filepath.Join(corpusDir(), fileLarge))
	a := New(nil)
	src := transcript.Source{Path: "/fuzz/2026-01-02T10-00-00-000Z_00000000-0000-4000-8000-000000000001.jsonl"}
	f.Fuzz(func(t *testing.T, data []byte) {
		transcripttest.FuzzLines(t, a, src, data, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 ||
				u.CacheCreation < 0 || u.Reasoning < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
		})
	})
}
