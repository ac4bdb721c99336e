package kimi

import (
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever a line holds, the parser does not panic, every event it emits has an id,
// this client and a time, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, path := range []string{mainWire(), subWire()} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		_, ls := lines(data)
		for _, l := range ls {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"timestamp": "1770000000", "message": {"type": "SubagentEvent", "payload": {"event": {"type": "SubagentEvent", "payload": {"event": {"type": "ToolResult", "payload": {"tool_call_id": "x", "return_value": {"is_error": true, "output": [{"type": "image_url"}]}}}}}}}}`))
	f.Add([]byte(`{"timestamp": 1e300, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": "7", "output": -3, "input_cache_read": 1.5}}}}`))
	f.Add([]byte(`{"message": {"type": "ToolCall", "payload": {"id": "a", "function": {"name": "Shell", "arguments": "{\"command\": 7}"}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p := newTestParser(t, mainWire(), nil)
		for _, l := range [][]byte{[]byte(`{"timestamp": 1770000000, "message": {"type": "ToolCall", "payload": {"id": "x", "function": {"name": "Grep", "arguments": "{}"}}}}`), line} {
			evs, _ := p.Record(0, l)
			for _, e := range evs {
				if e.ID == "" || e.Client != Client || e.Time.IsZero() {
					t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
				}
				if err := e.Validate(); err != nil {
					t.Fatalf("event %+v: %v", e, err)
				}
			}
		}
		if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: mainWire()}, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
