package zed

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord feeds arbitrary thread rows (the JSON, its data type, the time columns) to the
// database parser's event builder, twice in a row as a later pass would: it never panics, what it
// emits validates, the same row gives the same events, the state it leaves loads again, and a
// second read of the same row from that state emits no new message.
func FuzzRecord(f *testing.F) {
	// Small seeds (the fixtures' shapes, cut down): the fuzzer minimizes every input it finds
	// interesting, which takes long on a document of several kilobytes.
	f.Add([]byte(`{"title":"T","messages":[{"User":{"id":"u1","content":[{"Text":"fix it"},{"Image":{}}]}},{"Agent":{"content":[{"Thinking":{"text":"hm"}},{"Text":"ok"},{"ToolUse":{"id":"a","name":"read_file","input":{"type":"json","value":{"path":"w/x.go"}}}},{"ToolUse":{"id":"b","name":"terminal","input":{"command":"ls"}}}],"tool_results":{"a":{"tool_use_id":"a","is_error":false,"content":{"Text":"x"}},"b":{"tool_use_id":"b","is_error":true,"content":"denied"}}}},"Resume"],"cumulative_token_usage":{"input_tokens":3,"output_tokens":4,"cache_creation_input_tokens":5,"cache_read_input_tokens":6},"request_token_usage":{"u1":{"input_tokens":1}},"model":{"provider":"anthropic","model":"claude-sonnet-4-5"},"initial_project_snapshot":{"worktree_snapshots":[{"worktree_path":"/nonexistent-observer/w","git_state":{"current_branch":"main"}}]},"version":"0.3.0"}`),
		"json", mainCreated, mainUpdated, "/nonexistent-observer/w")
	f.Add([]byte(`{"messages":[{"User":{"id":"u","content":[{"Text":"go"}]}},{"Agent":{"content":[{"ToolUse":{"id":"c","name":"find_path","input":{"type":"json","value":{"glob":"*"}}}}],"tool_results":{}}}],"request_token_usage":{"u":{"input_tokens":9,"output_tokens":2}},"model":{"provider":"openai","model":"gpt-5"}}`),
		"json", "", mainUpdated, "")
	f.Add([]byte(`{"messages":["Resume",{"Compaction":{}},{"Agent":{"content":[{"ToolUse":{"id":7,"name":"grep","input":{"type":"text","value":"x"}}}],"tool_results":{"7":{"is_error":"no","content":[{"Text":{"text":"a"}},{"Image":{}}]}}}}],"cumulative_token_usage":{"input_tokens":"12","output_tokens":-4},"request_token_usage":[1,2]}`),
		"json", "2026-01-01T00:00:00Z", "bad", "a\x00b")
	f.Add([]byte(`{"messages":[{"role":"user","segments":[{"type":"text","text":"x"}]},{"role":"assistant","tool_uses":[{"id":"t","name":"edit_file","input":{"path":"/abs/p","mode":"create"}}]}],"summary":"s"}`),
		"JSON", "", "2026-01-01T00:00:00+00:00", "")
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, "zstd", "", "", "")
	f.Add([]byte(`{}`), "json", "", "\xff", "") // an updated_at that is not UTF-8 still round-trips in the state
	f.Fuzz(func(t *testing.T, data []byte, dataType, created, updated, folders string) {
		r := row{id: "t-1", parent: "", updated: updated, created: created, summary: "S", dataType: dataType, folders: folders, data: data}
		run := func(prev threadState) ([]event.Event, threadState) {
			p := newDBParser(New(nil), srcDB("/x/threads.db"), nil)
			evs, next, _ := p.thread(&r, "t-1", prev)
			return evs, next
		}
		a, next := run(threadState{})
		b, _ := run(threadState{})
		transcripttest.CheckFuzzed(t, a, badUsage)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic:\n%+v\n%+v", a, b)
		}
		raw, err := json.Marshal(dbState{Threads: map[string]threadState{"t-1": next}})
		if err != nil {
			t.Fatal(err)
		}
		var back dbState
		if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back.Threads["t-1"], next) {
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
