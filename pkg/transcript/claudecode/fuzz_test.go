package claudecode

import (
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord feeds arbitrary lines to one parser: it must never panic, every event it returns must
// validate, with a known action type and no negative token count, and its state must survive a
// round trip.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"type":"assistant","uuid":"a","sessionId":"s","cwd":"/w","timestamp":"2026-03-01T10:00:00Z","requestId":"r","message":{"id":"m","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/w/a"}}],"usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":2}}}}`,
		`{"type":"user","uuid":"u","timestamp":"2026-03-01T10:00:01Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image","source":{"data":"AA"}}],"is_error":true}]},"toolUseResult":"Error: x"}`,
		`{"type":"user","uuid":"u2","timestamp":"2026-03-01T10:00:02Z","message":{"role":"user","content":"<command-name>/init</command-name><command-args>a</command-args>"}}`,
		`{"type":"user","uuid":"u3","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`,
		`{"type":"system","subtype":"api_error","uuid":"s1","timestamp":"2026-03-01T10:00:03Z","error":{"status":529,"error":{"error":{"message":"Overloaded"}}},"retryAttempt":1,"maxRetries":10}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"s2","compactMetadata":{"trigger":"auto","preTokens":1}}`,
		`{"type":"assistant","uuid":"a2","isApiErrorMessage":true,"apiErrorStatus":429,"message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error"}]}}`,
		`{"type":"assistant","message":{"id":"m","model":"m","content":[{"type":"server_tool_use","id":"st","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"st","content":{"type":"web_search_tool_result_error","error_code":"x"}}],"usage":{"output_tokens":-4,"input_tokens":"7","cache_creation":5}}}`,
		`{"type":"summary","summary":"s","leafUuid":"l"}`, `{"type":"file-history-snapshot"}`, `{"type":"progress","data":{}}`,
		`{"type":"mystery"}`, `{"type":7}`, `{}`, `[]`, `null`, "\xff\xfe", `{"type":"user","message":{"content":7}}`,
		`{"type":"user","timestamp":"garbage","message":{"content":"hi"}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[1] + "\n" + seeds[3]))
	transcripttest.SeedLines(f, 12, 8192,
		filepath.Join(corpusDir, fileCodemieMain), filepath.Join(corpusDir, fileTurn2), filepath.Join(corpusDir, file624))
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/fuzz/s.jsonl", SessionID: "s"}
	f.Fuzz(func(t *testing.T, data []byte) {
		transcripttest.FuzzLines(t, a, src, data, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 ||
				u.CacheCreation1h < 0 || u.CacheCreation1h > u.CacheCreation
		})
	})
}
