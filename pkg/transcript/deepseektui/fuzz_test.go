package deepseektui

import (
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever the document holds, the parser does not panic, every event it emits
// validates and has this client, a second read from the state it left loads, and a document read
// twice emits nothing the second time.
func FuzzRecord(f *testing.F) {
	// Small seeds (the fixture's shapes, cut down): the fuzzer minimizes every input it finds
	// interesting, which takes long on a document of several kilobytes.
	f.Add([]byte(`{"metadata":{"id":"s","title":"fix it","created_at":"2026-03-05T14:20:03.418529Z","updated_at":"2026-03-05T14:31:47Z","model":"deepseek-v4-pro","workspace":"/nonexistent-observer/w"},"messages":[{"role":"user","content":[{"type":"text","text":"fix it"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"tool_use","id":"a","name":"read_file","input":{"path":"x.rs"}},{"type":"tool_use","id":"b","name":"exec_shell","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"},{"type":"tool_result","tool_use_id":"b","content":"no","is_error":true}]}]}`))
	f.Add([]byte(`{"metadata":{"created_at":"2026-03-05T14:20:03Z","model":7},"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"mcp_","input":[1]},{"type":"tool_use","name":"apply_patch","input":{"patch":"*** Update File: x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"t"}],"is_error":true}]}]}`))
	f.Add([]byte(`{"metadata":{"updated_at":"2026-03-05T14:20:03Z","title":"New Session"},"messages":[{"role":"user","content":"x"},7,null,{"role":"x"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		src := transcript.Source{Client: Client, Path: "/fuzz/s.json", SessionID: "s", Document: true}
		p, err := New(nil).NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := p.Record(0, doc)
		transcripttest.CheckFuzzed(t, evs, nil)
		for _, e := range evs {
			if e.Client != Client {
				t.Fatalf("event %+v: want client %s", e, Client)
			}
		}
		q, err2 := New(nil).NewParser(src, p.State())
		if err2 != nil {
			t.Fatalf("the state it left does not load: %v", err2)
		}
		if again, _ := q.Record(0, doc); err == nil && len(again) != 0 {
			t.Fatalf("a second read emitted %d events", len(again))
		}
	})
}
