package continuecli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever the document holds, the parser does not panic, and every event it emits
// has an id, this client and a time.
func FuzzRecord(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "sessions", fixtureID+".json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"history":[{"message":{"role":"assistant","toolCalls":[{"id":"x","function":{"name":"Bash","arguments":"{"}}],"usage":{"prompt_tokens":"12","completion_tokens":-3}}}]}`))
	f.Add([]byte(`{"sessionId":"s","history":[{"message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image"}]}},{"message":{"role":"tool"}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: filepath.Join(t.TempDir(), "s.json"), Document: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, doc)
		for _, e := range evs {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "s.json"}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
