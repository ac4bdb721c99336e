package opencode

import (
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// FuzzData feeds arbitrary data columns to the message and part decoders: they never panic, and
// what they emit validates.
func FuzzData(f *testing.F) {
	f.Add([]byte(assistant(10, 4)), "user", "read")
	f.Add([]byte(`{"role":"assistant","error":{"name":"APIError","data":{"message":"boom"}},"tokens":{"input":-1}}`), "assistant", "bash")
	f.Add([]byte(`{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"output":"x","time":{"start":5,"end":1}}}`), "assistant", "")
	f.Add([]byte(`{"type":"text","text":"hi"}`), "user", "")
	f.Add([]byte(`{"type":"subtask","agent":"general","description":"d","prompt":"p"}`), "user", "")
	f.Add([]byte(`{"type":"tool","tool":"apply_patch","state":{"status":"error","input":{"patchText":"*** Update File: a.go\n"},"error":"e"}}`), "assistant", "")
	f.Add([]byte(`{"type":"compaction","auto":true}`), "user", "")
	f.Add([]byte(`{"type":"reasoning","text":"think","time":{"start":1,"end":2}}`), "assistant", "m")
	f.Add([]byte(`{"type":"text","text":"reply","time":{"start":1,"end":"x"}}`), "assistant", "m")
	f.Add([]byte(`{"type":"tool","state":{"status":"running"}}`), "assistant", "")
	f.Add([]byte(`{"type":`), "", "")
	f.Add([]byte(`[]`), "", "")
	f.Fuzz(func(t *testing.T, data []byte, role, model string) {
		p := newParser(New(nil), transcript.Source{Client: Client, Path: "/x/opencode.db", Database: true}, nil)
		r := &sessions{byID: map[string]sessionRow{"ses_a": {id: "ses_a", parent: "ses_b", dir: "/x"}, "ses_b": {id: "ses_b", parent: "ses_a"}}}
		o := p.owner(r, "ses_a")
		evs, _ := p.message(o, msgRow{id: "msg_1", session: "ses_a", created: 1, updated: 1, data: data})
		more, _ := p.part(o, partRow{id: "prt_1", message: "msg_1", session: "ses_a", created: 1, updated: 1, data: data, role: role, model: model})
		for _, e := range append(evs, more...) {
			if err := e.Validate(); err != nil {
				t.Fatalf("event %s does not validate: %v", e.ID, err)
			}
		}
	})
}
