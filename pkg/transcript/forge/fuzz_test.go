package forge

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord feeds arbitrary conversation rows (the context, the title, the time columns) to the
// database parser's event builder, twice in a row as a later pass would: it never panics, what
// it emits validates, the same row gives the same events, the state it leaves loads again, and a
// second read of the same row from that state emits no message again.
func FuzzRecord(f *testing.F) {
	// Small seeds (the fixtures' shapes, cut down): the fuzzer minimizes every input it finds
	// interesting, which takes long on a document of several kilobytes.
	f.Add(`{"messages":[{"message":{"text":{"role":"System","content":"<current_working_directory>/nonexistent-observer/w</current_working_directory>"}}},{"message":{"text":{"role":"User","content":"<task>x</task>","raw_content":{"text":"x"},"model":"claude-sonnet-4-5"}}},{"message":{"text":{"role":"Assistant","content":"ok","reasoning_details":[{"text":"hm"}],"tool_calls":[{"name":"read","call_id":"a","arguments":{"path":"/nonexistent-observer/w/x.rs"}},{"name":"task","call_id":"b","arguments":"{\"agent_id\":\"sage\"}"}]}},"usage":{"prompt_tokens":{"actual":10},"completion_tokens":{"actual":2},"cached_tokens":{"actual":4},"cost":0.1}},{"message":{"tool":{"name":"read","call_id":"a","output":{"is_error":true,"values":[{"text":"no"},{"ai":{"value":"v"}},"empty"]}}}}]}`,
		"T", "2026-03-10 16:42:07.513209", "2026-03-10 16:49:52")
	f.Add(`{"messages":[{"text":{"role":"User","content":"go","model":"gpt-5"}},{"text":{"role":"Assistant","content":"done","model":"gpt-5","tool_calls":[{"name":"mcp_s_tool_t","call_id":7,"arguments":[1]}]},"usage":{"prompt_tokens":{"approx":5},"completion_tokens":{"actual":"9"},"cached_tokens":{"actual":99}}},{"tool":{"call_id":"7"}},{"message":{"image":{}}},7,null]}`,
		"", "", "2026-01-01T00:00:00Z")
	f.Add(`{"messages":[{"message":{"text":{"role":"Robot","content":"?"}},"usage":{"prompt_tokens":{"actual":-3},"completion_tokens":{"actual":1e300},"cached_tokens":{"actual":"x"},"cost":-1}}]}`,
		"\xff", "bad", "bad")
	f.Fuzz(func(t *testing.T, ctx, title, created, updated string) {
		r := row{id: "c-1", title: title, context: ctx, created: created, updated: updated}
		run := func(prev convState) ([]event.Event, convState) {
			p := newDBParser(New(nil), transcript.Source{Client: Client, Path: "/x/.forge.db", Database: true}, nil)
			var st transcript.Stats
			evs, next, _ := p.conversation(&r, prev, &st)
			return evs, next
		}
		a, next := run(convState{})
		b, _ := run(convState{})
		transcripttest.CheckFuzzed(t, a, badUsage)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic:\n%+v\n%+v", a, b)
		}
		raw, err := json.Marshal(dbState{Convs: map[string]convState{"c-1": next}})
		if err != nil {
			t.Fatal(err)
		}
		var back dbState
		if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back.Convs["c-1"], next) {
			t.Fatalf("state %s does not load again: %v", raw, err)
		}
		again, _ := run(next)
		for _, e := range again {
			if e.Kind == event.KindMessage {
				t.Fatalf("a second read of the same row emitted a message again: %+v", e.Message)
			}
		}
	})
}
