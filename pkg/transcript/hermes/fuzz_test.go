package hermes

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// badUsage is a usage a fuzzed parser must never return: a negative figure, reasoning beyond the
// output, or a cost that is not a sane number.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 || u.Reasoning > u.Output ||
		u.CostUSD < 0 || u.CostUSD != u.CostUSD || u.CostUSD > 1e6
}

// FuzzRecord feeds arbitrary rows (a message's role, content, tool calls and result fields, a
// session's and a usage row's figures and times) to the parser's event builder, the part of a
// pass that reads what Hermes wrote: it never panics, what it emits validates, the same rows give
// the same events, and the State it leaves loads again.
func FuzzRecord(f *testing.F) {
	f.Add("assistant", "The upload waits a fixed 50 ms.", `[{"id": "call_03", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"pytest -x\"}"}}]`,
		"", "1", "", "", "reasoning", 1770718515.0, 1770718500.0, int64(3000), int64(1200), 0.05, "anthropic/claude-sonnet-4.5")
	f.Add("tool", `{"output": "F", "exit_code": 1, "error": null}`, "", "call_03", "1", "", "", "", 1770718516.3, 1770718500.0, int64(-5), int64(1e15), -1.0, "")
	f.Add("user", "[CONTEXT COMPACTION] summary", "", "", "", "x", "0", "", 1e300, -1.0, int64(0), int64(0), 1e9, "gpt-5")
	f.Add("assistant", "", `[{"id":"c","function":{"name":"mcp_","arguments":7}},null,{"id":"d","name":"patch","arguments":{"patch":"*** Update File: a.go\n"}}]`,
		"", "", "", "", "", 1770718516.3, 0.0, int64(1), int64(2), 0.0, "\xff")
	f.Add("tool", "\x00", "[", "", "abc", "{}", "false", "", 0.0, 1770718500.0, int64(7), int64(3), 0.001, "m")
	f.Add("user", "\x00json:[{\"type\": \"text\", \"text\": \"see\"}, {\"type\": \"image_url\", \"image_url\": {\"url\": \"data:", "", "", "", "", "", "",
		1770718502.5, 1770718500.0, int64(0), int64(0), 0.0, "")
	f.Fuzz(func(t *testing.T, role, content, calls, callID, exitCode, errField, success, reasoning string, ts, started float64,
		in, out int64, cost float64, model string) {
		run := func() ([]event.Event, dbState) {
			p := newParser(srcDB("/x/state.db"), nil, pricing.Source(nil, nil))
			r := &rows{
				sessions: []sessionRow{{id: "s1", model: model, cwd: "/nonexistent-observer/w", title: content, titleSource: success,
					started: started, fig: figures{in: in, out: out, cacheRead: in / 2, reasoning: out * 2, est: cost, actual: cost / 2}}},
				usage: []usageRow{{session: "s1", model: model, task: errField, firstSeen: ts,
					fig: figures{in: out, out: in, cacheWrite: in, est: cost}}},
				messages: []msgRow{
					{rowID: 1, session: "s1", role: "assistant", calls: calls, ts: ts, reasoning: reasoning, content: content},
					{rowID: 2, session: "s1", role: role, content: content, callID: callID, calls: calls, tool: model, ts: ts,
						exitCode: exitCode, errField: errField, successField: success, outputField: reasoning, summary: success == "1",
						displayKind: errField},
					{rowID: 3, session: "other", role: role, content: content, ts: ts},
				},
			}
			st := dbState{}
			return p.events(r, &st), st
		}
		a, st := run()
		b, _ := run()
		transcripttest.CheckFuzzed(t, a, badUsage)
		for _, e := range a {
			if e.Client != Client {
				t.Fatalf("event %+v: want client %s", e, Client)
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic:\n%+v\n%+v", a, b)
		}
		raw, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if q := newParser(srcDB("/x/state.db"), raw, nil); string(q.State()) != string(raw) {
			t.Fatalf("the state %s does not load again", raw)
		}
	})
}
