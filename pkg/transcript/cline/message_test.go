package cline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// cliRoles counts, straight from the raw document, the messages a CLI session holds: a user
// message with text and no tool result (what the user typed, not a bracketed insert), and the
// assistant's text, thinking and tool_use blocks.
func cliRoles(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Thinking string `json:"thinking"`
				ID       string `json:"id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, m := range d.Messages {
		prompt, result := false, false
		for _, b := range m.Content {
			text := strings.TrimSpace(b.Text)
			switch {
			case b.Type == "tool_result":
				result = true
			case m.Role == "user" && b.Type == "text" && (strings.Contains(text, "<user_input") || text != "" && text[0] != '<'):
				prompt = true
			case m.Role == "assistant" && b.Type == "text" && text != "":
				n[event.RoleAssistant]++
			case m.Role == "assistant" && b.Type == "thinking" && strings.TrimSpace(b.Thinking) != "":
				n[event.RoleThinking]++
			case m.Role == "assistant" && b.Type == "tool_use" && b.ID != "":
				n[event.RoleToolCall]++
			}
		}
		if prompt && !result {
			n[event.RoleUser]++
		}
	}
	return n
}

// The corpus session's conversation: its golden, and its counts per role against the raw
// document's.
func TestCorpus_Conversation(t *testing.T) {
	root := corpusSession(t)
	a := New([]string{root})
	evs, _ := parseAll(t, a)
	golden(t, "corpus-cli.conversation", transcripttest.ConversationLines(evs))
	want := cliRoles(t, filepath.Join(corpusDir(), fileMessages))
	if got := transcripttest.RoleCounts(evs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages per role %v, the document holds %v", got, want)
	}
	if want[event.RoleUser] != 2 || want[event.RoleThinking] != 3 {
		t.Errorf("the corpus session holds %v: 2 prompts and 3 thinking blocks expected", want)
	}
	transcripttest.UniqueMessageIDs(t, evs)
	again, _ := parseAll(t, a)
	transcripttest.SameMessageIDs(t, evs, again)
}

// The fixtures' conversations (the Cline CLI session recorded against the fake API, and the
// hand-written extension tasks).
func TestFixtures_Conversation(t *testing.T) {
	for name, a := range fixtureAdapters() {
		t.Run(name, func(t *testing.T) {
			evs, _ := parseAll(t, a)
			golden(t, name+".conversation", transcripttest.ConversationLines(evs))
			transcripttest.UniqueMessageIDs(t, evs)
			again, _ := parseAll(t, a)
			transcripttest.SameMessageIDs(t, evs, again)
		})
	}
	evs, _ := parseAll(t, New([]string{filepath.Join("testdata", "cli")}))
	srcs, _ := New([]string{filepath.Join("testdata", "cli")}).Discover()
	if want := cliRoles(t, srcs[0].Path); fmt.Sprint(transcripttest.RoleCounts(evs)) != fmt.Sprint(want) {
		t.Errorf("fake-cli messages per role %v, the document holds %v", transcripttest.RoleCounts(evs), want)
	}
}

// byRole returns the messages of one role, in order.
func byRole(evs []event.Event, role string) []event.Event {
	var out []event.Event
	for _, e := range transcripttest.Conversation(evs) {
		if e.Message.Role == role {
			out = append(out, e)
		}
	}
	return out
}

// The CLI's roles: the typed prompt (not a tool result, not a bracketed insert), thinking, the
// reply and each tool call, whose text is its action's target and whose id is its action's.
func TestParser_CLIMessages(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("B", 90)
	insert := `{"id":"u0","role":"user","ts":1796146907000,"content":[{"type":"text","text":"<environment_details>cwd</environment_details>"}]}`
	call := `{"id":"a1","role":"assistant","ts":1796146908192,"modelInfo":{"id":"claude-sonnet-4-5"},"content":[` +
		`{"type":"thinking","thinking":"look at main.go"},{"type":"thinking","thinking":""},{"type":"redacted_thinking","data":"xx"},` +
		`{"type":"text","text":"Reading it. token ` + key + `"},` +
		`{"type":"tool_use","id":"c1","name":"read_file","input":{"path":"/home/ann/proj/main.go"}}]}`
	res := `{"id":"r1","role":"user","ts":1796146909000,"content":[{"type":"tool_result","tool_use_id":"c1","content":"package main"}]}`
	src := cliSession(t, t.TempDir(), "s1", doc(insert, msgUser, call, res, msgFinal), metaJSON)
	evs, _ := parseSource(t, New(nil), src, nil)
	transcripttest.CheckConversation(t, evs,
		"user\t\tfix the build",
		"thinking\t\tlook at main.go",
		"assistant\t\tReading it. token [REDACTED:anthropic-key]",
		"tool_call\tread_file\tmain.go",
		"assistant\t\tdone",
	)
	var action *event.Action
	for _, e := range evs {
		if e.Action != nil && e.Action.ToolUseID == "c1" {
			action = e.Action
		}
	}
	calls := byRole(evs, event.RoleToolCall)
	if len(calls) != 1 || action == nil {
		t.Fatalf("calls %v, action %v", calls, action)
	}
	if m := calls[0].Message; m.ToolUseID != "c1" || m.Text != action.Target || m.MessageID != "a1" || m.Model != "claude-sonnet-4-5" {
		t.Errorf("call message %+v, action %+v", m, action)
	}
	if calls[0].ID != event.ID(Client, "message", "s1", "a1", "4") {
		t.Errorf("call message id %s", calls[0].ID)
	}
	for _, e := range byRole(evs, event.RoleAssistant) {
		if strings.Contains(e.Message.Text, key) {
			t.Errorf("secret kept: %q", e.Message.Text)
		}
		if e.SessionID != "s1" || e.Project != "/home/ann/proj" || e.Client != Client || e.Source != Component {
			t.Errorf("envelope %+v", e)
		}
	}
}

// The extensions' roles: the task and the user's feedback are prompts, say text the reply (but
// Roo's first text, the task), reasoning thinking, completion_result the final reply, the tool
// asks tool calls, a condensation's summary a summary; api requests, errors, checkpoints, partial
// messages and the completion ask are not messages.
func TestParser_VSCodeMessages(t *testing.T) {
	ui := `[
	{"ts":1767261600000,"type":"say","say":"task","text":"Add a flag"},
	{"ts":1767261600010,"type":"say","say":"api_req_started","text":"{\"request\":\"<task>Add a flag</task>\\n# Current Working Directory (/home/ann/proj) Files\",\"tokensIn\":10,\"tokensOut\":5}","modelInfo":{"providerId":"anthropic","modelId":"claude-sonnet-4-5"}},
	{"ts":1767261601000,"type":"say","say":"reasoning","text":"the flag goes in main.go"},
	{"ts":1767261602000,"type":"say","say":"text","text":"I'll read main.go first."},
	{"ts":1767261602500,"type":"say","say":"text","text":"partial repl","partial":true},
	{"ts":1767261603000,"type":"say","say":"tool","text":"{\"tool\":\"readFile\",\"path\":\"main.go\"}"},
	{"ts":1767261604000,"type":"ask","ask":"command","text":"go build ./..."},
	{"ts":1767261604500,"type":"say","say":"command_output","text":"ok"},
	{"ts":1767261604600,"type":"say","say":"checkpoint_created"},
	{"ts":1767261605000,"type":"ask","ask":"plan_mode_respond","text":"{\"response\":\"Plan: add it\",\"options\":[]}"},
	{"ts":1767261606000,"type":"ask","ask":"condense","text":"Context: the flag is half done"},
	{"ts":1767261607000,"type":"say","say":"completion_result","text":"Added the flag.HAS_CHANGES"},
	{"ts":1767261607001,"type":"ask","ask":"completion_result","text":""},
	{"ts":1767261608000,"type":"say","say":"user_feedback","text":"also document it"},
	{"ts":1767261608500,"type":"say","say":"error","text":"oops"}
	]`
	dir := filepath.Join(t.TempDir(), ExtensionCline, "tasks", "1767261600000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ui_messages.json")
	if err := os.WriteFile(path, []byte(ui), 0o644); err != nil {
		t.Fatal(err)
	}
	a := NewVSCode(ClientVSCode, nil)
	src := transcript.Source{Client: ClientVSCode, Path: path, SessionID: "1767261600000", Document: true}
	evs, _ := parseSource(t, a, src, nil)
	transcripttest.CheckConversation(t, evs,
		"user\t\tAdd a flag",
		"thinking\t\tthe flag goes in main.go",
		"assistant\t\tI'll read main.go first.",
		"tool_call\treadFile\tmain.go",
		"tool_call\texecute_command\tgo build ./...",
		"assistant\t\tPlan: add it",
		"summary\t\tContext: the flag is half done",
		"assistant\t\tAdded the flag.",
		"user\t\talso document it",
	)
	for _, e := range byRole(evs, event.RoleToolCall) {
		if e.Message.MessageID == "" || e.Message.Model != "claude-sonnet-4-5" {
			t.Errorf("call message %+v", e.Message)
		}
	}
	cmd := byRole(evs, event.RoleToolCall)[1]
	if cmd.ID != event.ID(ClientVSCode, "message", "1767261600000", "1767261604000", "0") || cmd.Message.MessageID != "1767261604000" {
		t.Errorf("command message %s %+v", cmd.ID, cmd.Message)
	}
	// Roo's condensation carries its summary.
	roo := `[{"ts":1767261600000,"type":"say","say":"text","text":"Do it"},` +
		`{"ts":1767261601000,"type":"say","say":"condense_context","contextCondense":{"cost":0.1,"summary":"Earlier: did half"}}]`
	rdir := filepath.Join(t.TempDir(), ExtensionRoo, "tasks", "t1")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		t.Fatal(err)
	}
	rpath := filepath.Join(rdir, "ui_messages.json")
	if err := os.WriteFile(rpath, []byte(roo), 0o644); err != nil {
		t.Fatal(err)
	}
	revs, _ := parseSource(t, NewVSCode(ClientRoo, nil), transcript.Source{Client: ClientRoo, Path: rpath, Document: true}, nil)
	transcripttest.CheckConversation(t, revs, "user\t\tDo it", "summary\t\tEarlier: did half")
}
