package antigravity

import (
	"bytes"
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever a line holds, the parser does not panic, every event it emits has an id,
// this client and a time, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, path := range []string{fixture(f, "antigravity-cli", cliID), fixture(f, "antigravity", ideID)} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"type":"PLANNER_RESPONSE","created_at":"bad","tool_calls":[{"name":"mcp_","args":[1]},{"name":"","args":null}]}`))
	f.Add([]byte(`{"step_index":-3,"source":"X","type":"RUN_COMMAND","status":"CANCELED","content":7}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "brain/x/.system_generated/logs/transcript.jsonl", SessionID: "x"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range [][]byte{[]byte(`{"step_index":0,"source":"MODEL","type":"PLANNER_RESPONSE","created_at":"2026-05-28T07:42:00Z","tool_calls":[{"name":"run_command","args":{"CommandLine":"ls"}}]}`), line} {
			evs, _ := p.Record(0, l)
			for _, e := range evs {
				if e.ID == "" || e.Client != Client || e.Time.IsZero() {
					t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
				}
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "t.jsonl"}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
