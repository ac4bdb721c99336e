package amp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever the document holds, the parser does not panic, every event it emits has
// an id, this client and a time, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, id := range []string{current, older} {
		data, err := os.ReadFile(filepath.Join("testdata", "threads", id+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"created":"1770000000000","messages":[{"role":"assistant","content":"x","usage":{"inputTokens":"5","timestamp":"bad"}}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"mcp__x","input":[1]}]},{"role":"user","content":[{"type":"tool_result","toolUseID":"a","run":{"status":"done","result":{"output":7}}}]}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "T-f.json", SessionID: "T-f", Document: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, doc)
		for _, e := range evs {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "T-f.json"}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
