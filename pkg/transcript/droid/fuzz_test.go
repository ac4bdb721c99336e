package droid

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever a line holds, neither parser panics, every event has an id, this client
// and a time, and the State left loads again.
func FuzzRecord(f *testing.F) {
	for _, name := range []string{
		filepath.Join(fixHome, "sessions", "-home-ann-shop", sessA+".jsonl"),
		filepath.Join(fixHome, "logs", "droid-log-single.log"),
	} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range splitLines(data) {
			f.Add(true, l)
			f.Add(false, l)
		}
	}
	f.Add(false, []byte(`[x] INFO: [Agent] Streaming result | Context: {"inputTokens":"5","tags":{"sessionId":"a","modelId":"custom:"}}`))
	f.Add(true, []byte(`{"type":"message","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q","content":[1,{"type":"text"}]}]}}`))
	f.Fuzz(func(t *testing.T, session bool, line []byte) {
		src := transcript.Source{Client: Client, Path: "/tmp/none/logs/droid-log-single.log"}
		if session {
			src = transcript.Source{Client: Client, Path: "/tmp/none/s.jsonl", SessionID: "s"}
		}
		a := New(nil)
		p, err := a.NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, line)
		for _, e := range evs {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := a.NewParser(src, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range data {
		if c == '\n' {
			out = append(out, data[start:i])
			start = i + 1
		}
	}
	return out
}
