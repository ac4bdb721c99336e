package grokbuild

import (
	"bytes"
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever a line holds, the parser does not panic, every event it emits has an id,
// this client and a time, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, path := range []string{mainPath(f), subPath(f)} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"timestamp":"1784575476","method":"_x.ai/session/update","params":{"update":{"sessionUpdate":"turn_completed","usage":{"inputTokens":"5","cachedReadTokens":9,"costUsdTicks":-1,"modelUsage":{"":{}}}}}}`))
	f.Add([]byte(`{"timestamp":1784575476,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"x","status":"completed","rawOutput":"ok","content":{"a":1}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "sessions/%2Fw/s/updates.jsonl", SessionID: "s"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, line)
		for _, e := range evs {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: "u.jsonl"}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
