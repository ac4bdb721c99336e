package cortex

import (
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever a document or a companion line holds, the parser does not panic, every
// event it emits is valid (an id, this client, a time), and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, path := range []string{docPath(f), companionPath(f)} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"created_at":"2026-01-01T00:00:00Z","history":[{"role":"assistant","content":[{"type":"tool_use","tool_use":{"tool_use_id":"a","name":"mcp__x","input":[1]}}]},{"role":"user","content":[{"type":"tool_result","tool_result":{"tool_use_id":"a","status":"success","content":[{"type":"text","text":7}]}}]}]}`))
	f.Add([]byte(`{"role":"user","user_sent_time":"bad","content":[{"type":"tool_result","tool_result":{"tool_use_id":"x","name":"READ","status":"denied"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, src := range []transcript.Source{
			{Client: Client, Path: "/c/s.json", SessionID: "s", Document: true},
			{Client: Client, Path: "/c/s.history.jsonl", SessionID: "s"},
		} {
			p, err := New(nil).NewParser(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := p.Record(0, data)
			transcripttest.CheckFuzzed(t, evs, nil)
			for _, e := range evs {
				if e.ID == "" || e.Client != Client || e.Time.IsZero() {
					t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
				}
			}
			if _, err := New(nil).NewParser(src, p.State()); err != nil {
				t.Fatalf("the state it left does not load: %v", err)
			}
		}
	})
}
