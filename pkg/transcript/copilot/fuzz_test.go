package copilot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// badUsage is a usage a fuzzed parser must never return: a negative figure, reasoning above
// output or a cost that is not a number.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 ||
		u.Reasoning < 0 || u.Reasoning > u.Output || u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzRecord feeds arbitrary lines to a Copilot CLI parser: it must never panic, every event must
// validate, a second parser given the same lines must return the same events, and the state must
// survive a round trip.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"type":"session.start","data":{"sessionId":"s","startTime":"2026-03-02T10:00:00.000Z","selectedModel":"gpt-5","context":{"cwd":"/w","gitRoot":"/w","branch":"b"}},"id":"a","timestamp":"2026-03-02T10:00:00.000Z","parentId":null}`,
		`{"type":"user.message","data":{"content":"hi","transformedContent":"x"},"id":"b","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m","toolRequests":[{"toolCallId":"c","name":"view","arguments":{"path":"x"}},{"name":"bash","arguments":"ls"},{"toolCallId":"d","name":"q","mcpServerName":"s"}],"requestId":"r","parentToolCallId":"p"},"id":"c","timestamp":"2026-03-02T10:00:02.000Z","agentId":"ag"}`,
		`{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"view","arguments":{}},"id":"d","timestamp":"2026-03-02T10:00:03.000Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"result":{"content":7},"error":{"message":"e"}},"id":"e","timestamp":"bad"}`,
		`{"type":"tool.user_requested","data":{"toolCallId":"u","toolName":"bash","arguments":{"command":"x"}},"id":"f","timestamp":"2026-03-02T10:00:04.000Z"}`,
		`{"type":"session.shutdown","data":{"modelMetrics":{"m":{"usage":{"inputTokens":-5,"outputTokens":"9","cacheReadTokens":1e300,"cacheWriteTokens":3,"reasoningTokens":99}},"n":{"usage":"x"},"o":{}}},"id":"g","timestamp":"2026-03-02T10:05:00.000Z"}`,
		`{"type":"session.compaction_complete","data":{"success":true,"preCompactionTokens":"x"},"timestamp":"2026-03-02T10:06:00.000Z"}`,
		`{"type":"session.model_change","data":{"newModel":"claude-sonnet-4.6"},"id":"h","timestamp":"2026-03-02T10:07:00.000Z"}`,
		`{"type":"session.resume","data":{"context":{"cwd":"rel"}},"id":"i","timestamp":"2026-03-02T10:08:00.000Z"}`,
		`{"type":"session.error","data":{"errorType":"quota","message":"m"},"id":"j","timestamp":"2026-03-02T10:09:00.000Z"}`,
		`{"type":"abort","data":{"reason":"user"},"id":"k","timestamp":"2026-03-02T10:10:00.000Z"}`,
		`{"type":"assistant.usage","data":{},"ephemeral":true}`, `{"type":null}`, `{"type":7}`, `{}`, `[]`, "\xff", `{"type":"abort","data":[]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[2] + "\n" + seeds[3] + "\n" + seeds[4] + "\n" + seeds[6]))
	transcripttest.SeedLines(f, 24, 8192, fixCLI, filepath.Join(transcripttest.CorpusDir(corpusCLISub), fileCLI))
	a := New(nil)
	src := transcript.Source{Client: ClientCLI, Path: "/fuzz/session-state/00000000-0000-4000-8000-000000000001/events.jsonl",
		SessionID: "00000000-0000-4000-8000-000000000001"}
	f.Fuzz(func(t *testing.T, data []byte) {
		first := transcripttest.FuzzLines(t, a, src, data, badUsage)
		transcripttest.SameEvents(t, first, transcripttest.FuzzLines(t, a, src, data, badUsage))
	})
}

// FuzzVSCodeRecord feeds arbitrary documents to VS Code parsers, as a .json and as a .jsonl: they
// must never panic, every event must validate, the same document must give the same events, a
// document read again from the state must give none, and a failed read must leave the state.
func FuzzVSCodeRecord(f *testing.F) {
	f.Add([]byte(`{"version":3,"sessionId":"s","creationDate":1772445600000,"customTitle":"t","requests":[{"requestId":"r","timestamp":1772445601000,"modelId":"m","message":{"text":"hi"},"response":[{"kind":"toolInvocationSerialized","toolId":"copilot_readFile","toolCallId":"c","isComplete":true,"isConfirmed":{"type":1},"invocationMessage":{"value":"Reading [](file:///w/a.go)"}},{"value":"x","baseUri":{"path":"/w/","scheme":"file"}}],"result":{"metadata":{"toolCallRounds":[{"toolCalls":[{"name":"read_file","arguments":"{\"filePath\":\"/w/a.go\"}","id":"k"}]}],"toolCallResults":{"k":{"content":[{"value":"text"}]}},"cacheKey":"file:///w"}},"modelState":{"value":1}}]}`))
	f.Add([]byte(`{"requests":[{"requestId":"r","timestamp":"x","message":"old","response":[{"kind":"toolInvocation","toolSpecificData":{"kind":"terminal","command":"ls","terminalCommandState":{"exitCode":3,"duration":-1}}}],"isCanceled":true}]}`))
	f.Add([]byte(`{"kind":0,"v":{"sessionId":"s","requests":[]}}` + "\n" + `{"kind":2,"k":["requests"],"v":[{"requestId":"r","timestamp":1772445601000,"message":{"text":"q"},"response":[]}]}` + "\n" + `{"kind":1,"k":["requests",0,"modelState"],"v":{"value":3}}` + "\n" + `{"kind":3,"k":["requests",0,"x"]}`))
	f.Add([]byte(`{"kind":2,"k":[],"v":[1]}`))
	f.Add([]byte(`{"kind":0,"v":{}}` + "\n" + `{"kind":1,"k":["a",-1],"v":1}`))
	if data, err := os.ReadFile(fixVSCode); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		for _, name := range []string{"s.json", "s.jsonl"} {
			src := transcript.Source{Client: ClientVSCode, Path: "/fuzz/chatSessions/" + name, SessionID: "s", Document: true}
			p, _ := newVSCodeParser(src, nil)
			evs, err := p.Record(0, data)
			transcripttest.CheckFuzzed(t, evs, badUsage)
			if err != nil && len(evs) != 0 {
				t.Fatalf("%s: events with an error", name)
			}
			q, _ := newVSCodeParser(src, nil)
			again, _ := q.Record(0, data)
			if !bytes.Equal(transcripttest.MustJSON(t, evs), transcripttest.MustJSON(t, again)) {
				t.Fatalf("%s: two parsers gave different events", name)
			}
			state := p.State()
			r, err := newVSCodeParser(src, state)
			if err != nil {
				t.Fatalf("state %s does not load: %v", state, err)
			}
			if more, _ := r.Record(0, data); len(more) != 0 {
				t.Fatalf("%s: read again from its state, %d events: %s", name, len(more), transcripttest.MustJSON(t, more))
			}
			if !bytes.Equal(r.State(), state) && err == nil {
				// A re-read may only add what the first read could not know; it never loses state.
				var a, b vsState
				_ = json.Unmarshal(state, &a)
				_ = json.Unmarshal(r.State(), &b)
				if a.SessionID != b.SessionID || a.DoneN != b.DoneN {
					t.Fatalf("%s: state changed on a re-read:\n%s\n%s", name, state, r.State())
				}
			}
		}
	})
}
