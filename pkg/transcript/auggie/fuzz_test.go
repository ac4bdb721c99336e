package auggie

import (
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// FuzzRecord: whatever the document holds, the parser does not panic, every event it emits is
// valid (an id, this client, a time), and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	for _, id := range []string{mainID, subID} {
		data, err := os.ReadFile(path(id))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"created":"2026-01-01T00:00:00Z","chatHistory":[{"exchange":{"response_nodes":[{"type":"5","tool_use":{"tool_use_id":"a","tool_name":"sub-agent","input_json":"[1]"}},{"type":10,"token_usage":{"input_tokens":"7","output_tokens":-3}}]}},{"exchange":{"request_nodes":[{"type":1,"tool_result_node":{"tool_use_id":"a","is_error":true}}]},"finishedAt":"bad"}]}`))
	f.Add([]byte(`{"parentConversationId":"p","chatHistory":[{"finishedAt":"2026-01-01T00:00:00Z","exchange":{"response_nodes":[{"type":9,"billing_metadata":{"cost_usd":"1e300","usage_unit":2}},{"type":10,"token_usage":{"output_tokens":1}}],"model_id":"zzz"}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		src := transcript.Source{Client: Client, Path: "/s/x.json", SessionID: "x", Document: true}
		p, err := New(nil).NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := p.Record(0, doc)
		transcripttest.CheckFuzzed(t, evs, nil)
		for _, e := range evs {
			if e.ID == "" || e.Client != Client || e.Time.IsZero() {
				t.Fatalf("event %+v: want an id, client %s and a time", e, Client)
			}
		}
		if _, err := New(nil).NewParser(src, p.State()); err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
	})
}
