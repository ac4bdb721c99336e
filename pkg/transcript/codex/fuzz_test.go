package codex

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
		`{"timestamp":"2026-03-01T10:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w","forked_from_id":"p"}}`,
		`{"timestamp":"2026-03-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5","turn_id":"t1"}}`,
		tokenCountLine("2026-03-01T10:00:02Z", 100, 50, 10, 2),
		`{"timestamp":"2026-03-01T10:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":-5}}}}`,
		`{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c","arguments":"{\"cmd\":\"cat a\"}"}}`,
		`{"timestamp":"2026-03-01T10:00:04Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Chunk ID: 1\nWall time: 1 seconds\nProcess running with session ID 7\nOutput:\n"}}`,
		`{"timestamp":"2026-03-01T10:00:05Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","call_id":"d","arguments":"{\"session_id\":7}"}}`,
		`{"timestamp":"2026-03-01T10:00:06Z","type":"response_item","payload":{"type":"function_call_output","call_id":"d","output":"Process exited with code 3\nOutput:\nboom"}}`,
		`{"timestamp":"2026-03-01T10:00:07Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","exit_code":0,"duration":{"secs":1,"nanos":5}}}`,
		`{"timestamp":"2026-03-01T10:00:07Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"e","success":false,"changes":{"a":{"type":"add"}}}}`,
		`{"timestamp":"2026-03-01T10:00:07Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"m","invocation":{"server":"s","tool":"t"},"result":{"Err":"x"}}}`,
		`{"timestamp":"2026-03-01T10:00:08Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"e","input":"*** Begin Patch\n*** Add File: x\n*** End Patch"}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"open_page","url":"https://x"}}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"token_usage_record","payload":{"response_id":"r","usage":{"input_tokens":9}}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"compacted","payload":{"message":"m"}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"content":[{"type":"reasoning_text","text":"r"}]}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"},{"text":""}]}}`,
		`{"timestamp":"2026-03-01T10:00:09Z","type":"response_item","payload":{"type":"function_call"}}`,
		`{"id":"legacy","timestamp":"2025-05-01T00:00:00Z"}`,
		`{"record_type":"state"}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}`,
		`{"type":"local_shell_call","call_id":"l","action":{"command":["ls"]}}`,
		"\xff\xfe", `[]`, `{}`, `{"type":7}`, `{"timestamp":"garbage","type":"event_msg","payload":{"type":"error","message":"e"}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[1] + "\n" + seeds[2] + "\n" + seeds[4] + "\n" + seeds[5] + "\n" + seeds[6] + "\n" + seeds[7]))
	for _, name := range corpusFiles {
		transcripttest.SeedLines(f, 12, 4096, filepath.Join(corpusDir, name))
	}
	a := New("")
	src := transcript.Source{Path: "/fuzz/rollout.jsonl"}
	f.Fuzz(func(t *testing.T, data []byte) {
		transcripttest.FuzzLines(t, a, src, data, func(u *event.TokenUsage) bool {
			return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.Reasoning < 0
		})
	})
}
