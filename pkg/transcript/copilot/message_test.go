package copilot

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// convDir holds the conversation goldens (apart from the figures' goldens, which name corpus
// files).
var convDir = filepath.Join("testdata", "golden", "conversation")

// cliRawRoles counts, straight from a CLI log with encoding/json, the records and blocks that are
// messages: a typed user message, an assistant message's reasoning text, its content and each of
// its tool requests, a tool the user ran, a compaction's summary.
func cliRawRoles(t *testing.T, path string) map[string]int {
	n := map[string]int{}
	requested := map[string]bool{}
	for _, l := range transcripttest.ReadLines(t, path) {
		var r struct {
			Type string `json:"type"`
			Data struct {
				Content                 string `json:"content"`
				Source                  string `json:"source"`
				IsAutopilotContinuation bool   `json:"isAutopilotContinuation"`
				ReasoningText           string `json:"reasoningText"`
				ToolRequests            []struct {
					ToolCallID string `json:"toolCallId"`
				} `json:"toolRequests"`
				ToolCallID     string `json:"toolCallId"`
				Success        bool   `json:"success"`
				SummaryContent string `json:"summaryContent"`
			} `json:"data"`
		}
		if json.Unmarshal(l, &r) != nil {
			continue
		}
		d := r.Data
		switch r.Type {
		case "user.message":
			if strings.TrimSpace(d.Content) != "" && !d.IsAutopilotContinuation && !strings.HasPrefix(d.Source, "skill") {
				n[event.RoleUser]++
			}
		case "assistant.message":
			if strings.TrimSpace(d.ReasoningText) != "" {
				n[event.RoleThinking]++
			}
			if strings.TrimSpace(d.Content) != "" {
				n[event.RoleAssistant]++
			}
			for _, tr := range d.ToolRequests {
				n[event.RoleToolCall]++
				requested[tr.ToolCallID] = true
			}
		case "tool.user_requested", "tool.execution_start":
			if !requested[d.ToolCallID] {
				n[event.RoleToolCall]++
				requested[d.ToolCallID] = true
			}
		case "session.compaction_complete":
			if d.Success && strings.TrimSpace(d.SummaryContent) != "" {
				n[event.RoleSummary]++
			}
		}
	}
	return n
}

// vsRawRoles counts, straight from a VS Code session (.json) with encoding/json, the messages of
// its finished requests: the prompt, each run of markdown (file references inside it), each run
// of thinking, each tool invocation.
func vsRawRoles(t *testing.T, data []byte) map[string]int {
	var d struct {
		Requests []struct {
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Response []map[string]any `json:"response"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, q := range d.Requests {
		if strings.TrimSpace(q.Message.Text) != "" {
			n[event.RoleUser]++
		}
		run, text := "", ""
		end := func() {
			if run != "" && strings.TrimSpace(text) != "" {
				n[run]++
			}
			run, text = "", ""
		}
		for _, part := range q.Response {
			kind, _ := part["kind"].(string)
			v, _ := part["value"].(string)
			switch kind {
			case "", "inlineReference":
				if run != event.RoleAssistant {
					end()
					run = event.RoleAssistant
				}
				text += v + kind
			case "thinking":
				if run != event.RoleThinking {
					end()
					run = event.RoleThinking
				}
				text += v
			case "toolInvocationSerialized":
				end()
				n[event.RoleToolCall]++
			}
		}
		end()
	}
	return n
}

// Every corpus file's conversation: its golden, its counts per role against the raw file's, the
// same ids at a second read.
func TestCorpus_Conversation(t *testing.T) {
	t.Run("cli", func(t *testing.T) {
		for _, name := range transcripttest.CorpusNames(t, "Copilot CLI", transcripttest.CorpusDir(corpusCLISub), ".jsonl") {
			t.Run(name, func(t *testing.T) {
				path := transcripttest.CorpusFile(t, transcripttest.CorpusDir(corpusCLISub), name)
				evs, _ := parseCLIFile(t, New(nil), cliSrc(path))
				transcripttest.Golden(t, filepath.Join(convDir, name+".golden.json"), transcripttest.ConversationLines(evs), *update)
				if got, want := transcripttest.RoleCounts(evs), cliRawRoles(t, path); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("messages per role %v, the log holds %v", got, want)
				}
				again, _ := parseCLIFile(t, New(nil), cliSrc(path))
				transcripttest.UniqueMessageIDs(t, evs)
				transcripttest.SameMessageIDs(t, evs, again)
			})
		}
	})
	t.Run("vscode", func(t *testing.T) {
		for _, name := range transcripttest.CorpusNames(t, "VS Code Copilot Chat", transcripttest.CorpusDir(corpusVSCodeSub), ".json") {
			t.Run(name, func(t *testing.T) {
				path := transcripttest.CorpusFile(t, transcripttest.CorpusDir(corpusVSCodeSub), name)
				evs, data := readVSFile(t, path)
				transcripttest.Golden(t, filepath.Join(convDir, name+".golden.json"), transcripttest.ConversationLines(evs), *update)
				if got, want := transcripttest.RoleCounts(evs), vsRawRoles(t, data); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("messages per role %v, the session holds %v", got, want)
				}
				again, _, _ := readDoc(t, vsSrc(path), nil, data)
				transcripttest.UniqueMessageIDs(t, evs)
				transcripttest.SameMessageIDs(t, evs, again)
			})
		}
	})
}

// The fixtures' conversations.
func TestFixtures_Conversation(t *testing.T) {
	for _, path := range []string{fixCLI, fixCLILegacy} {
		name := "fixture-" + SessionIDFromPath(path) + ".jsonl"
		t.Run(name, func(t *testing.T) {
			src := cliSrc(absPath(t, path))
			evs, _ := parseCLIFile(t, New(nil), src)
			transcripttest.Golden(t, filepath.Join(convDir, name+".golden.json"), transcripttest.ConversationLines(evs), *update)
			if got, want := transcripttest.RoleCounts(evs), cliRawRoles(t, src.Path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("messages per role %v, the log holds %v", got, want)
			}
		})
	}
	t.Run("vscode", func(t *testing.T) {
		evs, _ := readFixtureLog(t)
		name := "fixture-" + fixVSCodeID + ".jsonl"
		transcripttest.Golden(t, filepath.Join(convDir, name+".golden.json"), transcripttest.ConversationLines(evs), *update)
		transcripttest.UniqueMessageIDs(t, evs)
	})
}

// The CLI: the typed prompt (not autopilot's nudge, not a skill's message), the reasoning, the
// reply, each tool request in its place (the action's target, its id), a sub-agent's messages
// under its agent, a tool the user ran, a compaction's summary.
func TestCLIParser_Messages(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	evs, _ := parseCLILines(t, "/x/session-state/s.jsonl",
		`{"type":"session.start","data":{"sessionId":"s","selectedModel":"claude-sonnet-4.6","context":{"cwd":"/w"}},"id":"a","timestamp":"2026-03-02T10:00:00.000Z"}`,
		`{"type":"system.message","data":{"role":"system","content":"You are the GitHub Copilot CLI"},"id":"sy","timestamp":"2026-03-02T10:00:00.500Z"}`,
		`{"type":"user.message","data":{"content":"fix the test","transformedContent":"<current_datetime>x</current_datetime> fix the test"},"id":"u1","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m1","content":"Looking. key `+key+`","reasoningText":"the test is in a_test.go","reasoningOpaque":"zz",`+
			`"toolRequests":[{"toolCallId":"c1","name":"view","arguments":{"path":"/w/a_test.go"}},{"toolCallId":"c2","name":"task","arguments":{"agent_type":"explore","description":"find callers"}}]},"id":"a1","timestamp":"2026-03-02T10:00:02.000Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m2","content":"","reasoningOpaque":"only-encrypted","parentToolCallId":"c2","toolRequests":[{"toolCallId":"c3","name":"grep","arguments":{"pattern":"Foo"}}]},"id":"a2","timestamp":"2026-03-02T10:00:03.000Z"}`,
		`{"type":"user.message","data":{"content":"","transformedContent":"You have not finished"},"id":"u2","timestamp":"2026-03-02T10:00:04.000Z"}`,
		`{"type":"user.message","data":{"content":"keep going","isAutopilotContinuation":true},"id":"u3","timestamp":"2026-03-02T10:00:04.500Z"}`,
		`{"type":"user.message","data":{"content":"skill text","source":"skill-pdf"},"id":"u4","timestamp":"2026-03-02T10:00:04.600Z"}`,
		`{"type":"tool.user_requested","data":{"toolCallId":"c4","toolName":"bash","arguments":{"command":"ls"}},"id":"t4","timestamp":"2026-03-02T10:00:05.000Z"}`,
		`{"type":"tool.execution_start","data":{"toolCallId":"c4","toolName":"bash","arguments":{"command":"ls"}},"id":"t5","timestamp":"2026-03-02T10:00:05.100Z"}`,
		`{"type":"session.compaction_complete","data":{"success":true,"preCompactionTokens":1000,"summaryContent":"We fixed a_test.go"},"id":"k1","timestamp":"2026-03-02T10:00:06.000Z"}`)
	transcripttest.CheckConversation(t, evs,
		"user\t\tfix the test",
		"thinking\t\tthe test is in a_test.go",
		"assistant\t\tLooking. key [REDACTED:openai-key]",
		"tool_call\tview\ta_test.go",
		"tool_call\ttask\texplore: find callers",
		"[c2] tool_call\tgrep\tFoo",
		"tool_call\tbash\tls",
		"summary\t\tWe fixed a_test.go",
	)
	if got := strings.Join(transcripttest.ConversationLines(evs), "\n"); strings.Contains(got, key) || !strings.Contains(got, "Looking. key ") {
		t.Errorf("the reply's secret: %s", got)
	}
	for _, e := range transcripttest.Conversation(evs) {
		m := e.Message
		if m.Role != event.RoleToolCall {
			continue
		}
		var act *event.Action
		for _, x := range evs {
			if x.Action != nil && x.Action.ToolUseID == m.ToolUseID {
				act = x.Action
			}
		}
		if act == nil || m.Text != act.Target || m.Tool != act.Tool || m.AgentID != act.AgentID || m.Sidechain != act.Sidechain ||
			e.ID != event.ID(ClientCLI, "message", "s", map[string]string{"c1": "a1", "c2": "a1", "c3": "a2", "c4": "t4"}[m.ToolUseID],
				map[string]string{"c1": "2", "c2": "3", "c3": "2", "c4": "0"}[m.ToolUseID]) {
			t.Errorf("call message %+v (%s), action %+v", m, e.ID, act)
		}
	}
	if ms := transcripttest.Conversation(evs); ms[1].Message.MessageID != "m1" || ms[1].Message.Model != "claude-sonnet-4.6" ||
		!ms[5].Message.Sidechain || ms[5].Message.AgentID != "c2" {
		t.Errorf("messages %+v %+v", ms[1].Message, ms[5].Message)
	}
}

// VS Code: the prompt at once; the response's markdown runs, thinking and tool calls once the
// request is finished (its text grows while it runs, and a stored message does not change).
func TestVSCodeParser_Messages(t *testing.T) {
	req := func(state int, result string) string {
		return `{"version":3,"sessionId":"s","creationDate":1772445600000,"requests":[{"requestId":"r1","responseId":"p1","modelId":"copilot/gpt-5",` +
			`"timestamp":1772445601000,"message":{"text":"where is main?"},"response":[` +
			`{"kind":"thinking","value":"look for "},{"kind":"thinking","value":["main.go"]},{"kind":"thinking","value":"","metadata":{"encrypted":"x"}},` +
			`{"value":"I'll search "},{"kind":"progressTaskSerialized","content":{"value":"Optimizing"}},{"value":"the tree."},` +
			`{"kind":"toolInvocationSerialized","toolId":"copilot_findFiles","toolCallId":"t1","isComplete":true,"invocationMessage":"Searching for ` + "`main.go`" + `"},` +
			`{"value":"It is in "},{"kind":"inlineReference","inlineReference":{"path":"/w/cmd/main.go","scheme":"file"}},{"value":"."}],` +
			`"modelState":{"value":` + fmt.Sprint(state) + `}` + result + `}]}`
	}
	running := req(0, "")
	evs, st, err := readDoc(t, vsSrc("/x/chatSessions/s.json"), nil, []byte(running))
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckConversation(t, evs, "user\t\twhere is main?")
	evs2, _, err := readDoc(t, vsSrc("/x/chatSessions/s.json"), st, []byte(req(1, `,"result":{}`)))
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.CheckConversation(t, evs2,
		"thinking\t\tlook for main.go",
		"assistant\t\tI'll search the tree.",
		"tool_call\tcopilot_findFiles\tmain.go",
		"assistant\t\tIt is in main.go.",
	)
	for _, e := range transcripttest.Conversation(evs2) {
		if m := e.Message; m.MessageID != "p1" || m.Model != "copilot/gpt-5" || m.Role == event.RoleToolCall && m.ToolUseID != "t1" {
			t.Errorf("message %+v", m)
		}
	}
	// Without state, the whole conversation with the same ids.
	all, _, _ := readDoc(t, vsSrc("/x/chatSessions/s.json"), nil, []byte(req(1, `,"result":{}`)))
	ids := transcripttest.UniqueMessageIDs(t, all)
	for _, id := range transcripttest.UniqueMessageIDs(t, append(evs, evs2...)) {
		if !strings.Contains(strings.Join(ids, ","), id) {
			t.Errorf("id %s not given again", id)
		}
	}
}
