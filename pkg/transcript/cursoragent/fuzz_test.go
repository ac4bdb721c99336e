package cursoragent

import (
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord feeds arbitrary lines to one parser: it must never panic, every event it returns must
// validate (an id, this client, a time), no token usage may appear (the format has none), and its
// state must load again.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Friday, Aug 14, 2026, 1:23 PM (UTC-5)</timestamp>\n<user_query>\nfix it\n</user_query>"}]}}`,
		`{"role":"user","message":{"content":"<timestamp>2026-07-17T07:08:09.123456-06:00</timestamp>\n<user_query>\nping"}}`,
		`{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>x</timestamp>"}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"text","text":"ok"},{"type":"tool_use","name":"Shell","input":{"command":"ls","working_directory":"/fuzz/w"}},{"type":"tool_use","id":"t1","name":"CallMcpTool","input":{"server":"s","toolName":"t"}}]}}`,
		`{"role":"assistant","message":{"content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","name":"ApplyPatch","input":{"patch":"*** Update File: a.go\n"}},{"type":"tool_use","name":"","input":7},{"type":"tool_use","name":"Glob","input":[1]}]}}`,
		`{"type":"turn_ended","status":"error","error":{"message":"boom"}}`,
		`{"type":"turn_ended","status":"aborted"}`, `{"type":"turn_ended","status":"weird"}`,
		`{"type":"metadata"}`, `{"role":"system","message":{"content":"s"}}`, `{"role":"user"}`,
		`{"role":7}`, "\xff\xfe", `[]`, `{}`, `{"role":"assistant","message":{"content":{"a":1}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[3] + "\n" + seeds[5]))
	transcripttest.SeedLines(f, 16, 8192, cliFile, ideFile, subFile)
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/fuzz/projects/zz-fuzz/agent-transcripts/f/subagents/g.jsonl"}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := transcripttest.FuzzLines(t, a, src, data, func(*event.TokenUsage) bool { return true })
		for _, e := range evs {
			if e.Client != Client || e.SessionID != "f" || e.Time.IsZero() {
				t.Fatalf("event %+v: want client %s, the parent's session f and a time", e, Client)
			}
		}
	})
}
