package crush

import (
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzParts feeds arbitrary parts columns, roles and models to the message decoder: it never
// panics, and what it emits validates.
func FuzzParts(f *testing.F) {
	f.Add([]byte(`[{"type":"text","data":{"text":"hi"}},{"type":"finish","data":{"reason":"stop","time":0}}]`), "user", "")
	f.Add([]byte(`[{"type":"reasoning","data":{"thinking":"t"}},{"type":"text","data":{"text":"r","hidden":true}},{"type":"tool_call","data":{"finished":true}},{"type":"finish","data":{"reason":"end_turn"}}]`), "assistant", "m")
	f.Add([]byte(`[{"type":"tool_call","data":{"id":"c","name":"bash","input":"{\"command\":\"ls\"}","finished":true}},{"type":"finish","data":{"reason":"error","message":"m","details":"d","prompt_tokens":"12","completion_tokens":3.5,"cost":-1}}]`), "assistant", "gpt-5")
	f.Add([]byte(`[{"type":"tool_result","data":{"tool_call_id":"c","name":"bash","content":"x","metadata":"{\"start_time\":1767225600000,\"end_time\":1,\"exit_code\":2}","is_error":false}}]`), "tool", "")
	f.Add([]byte(`[{"type":"tool_call","data":{"id":"","name":"","input":"","finished":false}}]`), "assistant", "")
	f.Add([]byte("\x28\xb5\x2f\xfd\x00"), "user", "")
	f.Add([]byte(`[{"type":"text","data":"x"}]`), "user", "")
	f.Add([]byte(`[1,2]`), "system", "")
	f.Add([]byte(`{}`), "", "")
	f.Fuzz(func(t *testing.T, data []byte, role, model string) {
		p := newParser(New(nil), transcript.Source{Client: Client, Path: "/x/.crush/crush.db", Database: true}, nil)
		r := &rows{sessions: map[string]sessionRow{"a": {id: "a", parent: "b", summary: "m1"}, "b": {id: "b", parent: "a"}}}
		r.messages = []msgRow{{id: "m1", session: "a", role: role, model: model, created: 1767225600, updated: 1767225600, parts: data, summary: true}}
		for _, e := range p.events(r) {
			if err := e.Validate(); err != nil {
				t.Fatalf("event %s does not validate: %v", e.ID, err)
			}
			if e.Action != nil && !e.Action.Type.Valid() {
				t.Fatalf("event %s: action type %q", e.ID, e.Action.Type)
			}
		}
	})
}
