package mistralvibe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzRecord: whatever the document holds (a meta.json, read with the fixture's messages.jsonl
// beside it, or a Vibe 1 file), the parser does not panic, every event it emits has an id, this
// client and a time, the State it leaves loads again, and a re-read from it emits nothing.
func FuzzRecord(f *testing.F) {
	for _, rel := range paths {
		data, err := os.ReadFile(filepath.Join(logRoot(), rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"session_id": "x", "parent_session_id": "019c1a2b-zz", "start_time": "2026-01-01T00:00:00", "end_time": "1999-01-01T00:00:00Z", "stats": {"session_prompt_tokens": "5", "session_cached_tokens": 9e99}, "total_messages": -3, "config": {"active_model": 7}}`))
	f.Add([]byte(`{"metadata": {"stats": {}}, "messages": [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "github_x", "arguments": {"path": 1}}}]}, {"role": "tool", "tool_call_id": "a", "content": "ok: True\nserver: s\ntool: "}, 7]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, path := range []string{filepath.Join(logRoot(), paths[mainID]), filepath.Join(logRoot(), paths[legacyID])} {
			p := newTestParser(t, path, nil)
			evs, _ := p.Record(0, doc)
			for _, e := range evs {
				if e.ID == "" || e.Client != Client || e.Time.IsZero() {
					t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
				}
				if err := e.Validate(); err != nil {
					t.Fatalf("event %+v: %v", e, err)
				}
			}
			if _, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path}, p.State()); err != nil {
				t.Fatalf("the state it left does not load: %v", err)
			}
			if again, _ := newTestParser(t, path, p.State()).Record(0, doc); len(again) != 0 {
				t.Fatalf("a re-read from state %s emitted %d events", p.State(), len(again))
			}
		}
	})
}
