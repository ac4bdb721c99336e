package openclaude

import (
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever the lines hold, the parser does not panic, every event it emits is valid
// and named openclaude's, an error is ErrMalformed, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	transcripttest.SeedLines(f, 16, 4<<10, fixture(f).Path)
	f.Add([]byte(`{"type":"assistant","sessionId":"s","timestamp":"2026-05-04T08:30:00Z","message":{"id":"m","model":"gpt-5","content":[{"type":"tool_use","id":"c","name":"mcp__x","input":[1]}],"usage":{"input_tokens":"5","output_tokens":-1}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := transcript.Source{Client: Client, Path: "/p/-x/s.jsonl", SessionID: "s"}
		for _, e := range transcripttest.FuzzLines(t, New(nil), src, data, nil) {
			if e.Client != Client {
				t.Fatalf("event %+v: want client %s", e, Client)
			}
		}
	})
}
