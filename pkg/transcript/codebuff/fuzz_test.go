package codebuff

import (
	"os"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// badUsage is a usage a fuzzed parser must never return: a negative figure or a cost that is not
// a number.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord: whatever the chat holds, the parser does not panic, every event it emits validates
// and has this client, a fresh parser emits the same, the State it leaves loads again, and a
// re-read from it emits nothing.
func FuzzRecord(f *testing.F) {
	for _, id := range []string{webapp, clitool, partial} {
		data, err := os.ReadFile(chatPaths[id])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"id":"a","variant":"ai","timestamp":"13:99 PM","credits":"x","metadata":{"usage":{"prompt_tokens":"5","prompt_tokens_details":{"cached_tokens":9}},"runState":{"sessionState":{"fileContext":{"cwd":7}}}},"blocks":[{"type":"agent","agentId":"g","blocks":[{"type":"agent","agentId":"g","blocks":"x"}]},{"type":"tool","toolCallId":"t","toolName":"read_files","input":{"paths":[1,{"path":"/a"}]},"outputRaw":{"type":"json","value":{"exitCode":-1}}}]}]`))
	f.Add([]byte(`[{"variant":"user","content":"x","timestamp":1e300},{"variant":"error","content":"y","createdAt":-5},{"variant":"ai","blocks":[{"type":"ask-user","toolCallId":"q","questions":[{"question":null}],"skipped":true}]}]`))
	src := transcript.Source{Client: Client, Path: "/x/chats/2026-02-03T09-15-00.000Z/chat-messages.json", SessionID: "2026-02-03T09-15-00.000Z", Document: true}
	f.Fuzz(func(t *testing.T, doc []byte) {
		a := New(nil)
		p, err := a.NewParser(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := p.Record(0, doc)
		transcripttest.CheckFuzzed(t, evs, badUsage)
		for _, e := range evs {
			if e.Client != Client || e.SessionID != src.SessionID {
				t.Fatalf("event %+v: want client %s and the chat's session", e, Client)
			}
		}
		q, _ := a.NewParser(src, nil)
		evs2, err2 := q.Record(0, doc)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(evs, evs2) {
			t.Fatalf("not deterministic")
		}
		state := p.State()
		r, err := a.NewParser(src, state)
		if err != nil {
			t.Fatalf("the state it left does not load: %v", err)
		}
		if again, _ := r.Record(0, doc); len(again) != 0 {
			t.Fatalf("a re-read from state %s emitted %d events", state, len(again))
		}
	})
}
