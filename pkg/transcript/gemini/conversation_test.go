package gemini

import (
	"bytes"
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

// rawMessage is a Gemini CLI message as encoding/json reads it.
type rawMessage struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Content  json.RawMessage `json:"content"`
	Display  json.RawMessage `json:"displayContent"`
	Thoughts []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	ToolCalls []struct {
		Name string `json:"name"`
	} `json:"toolCalls"`
}

// rawText returns content's text parts (not thoughts) joined, and whether it has a function
// response or inline data.
func rawText(raw json.RawMessage) (text string, responses, images bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), false, false
	}
	var parts []struct {
		Text             *string         `json:"text"`
		Thought          bool            `json:"thought"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
		InlineData       json.RawMessage `json:"inlineData"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Text != nil && !p.Thought {
			texts = append(texts, *p.Text)
		}
		responses = responses || p.FunctionResponse != nil
		images = images || p.InlineData != nil
	}
	return strings.TrimSpace(strings.Join(texts, "\n")), responses, images
}

// rawMessages reads a corpus file's messages with encoding/json alone: a document's list, or a
// .jsonl's message lines (the last write of an id wins, in the place of its first) and $set lists.
func rawMessages(t *testing.T, path string) []rawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".json") {
		var doc struct{ Messages []rawMessage }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Messages
	}
	var list []rawMessage
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			rawMessage
			Set *struct {
				Messages []rawMessage `json:"messages"`
			} `json:"$set"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &rec) != nil {
			continue
		}
		switch {
		case rec.Set != nil && rec.Set.Messages != nil:
			list = rec.Set.Messages
		case rec.ID != "" && rec.Type != "":
			i := 0
			for i < len(list) && list[i].ID != rec.ID {
				i++
			}
			if i == len(list) {
				list = append(list, rec.rawMessage)
			} else {
				list[i] = rec.rawMessage
			}
		}
	}
	return list
}

// rawCounts counts what must become a message: a user message with typed text (or only an image),
// but the <session_context>, <hook_context> and continuation turns Gemini CLI sends itself and the
// function responses; a model message's thoughts (one thinking message) and text; each tool call.
func rawCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, m := range rawMessages(t, path) {
		text, responses, images := rawText(m.Content)
		switch m.Type {
		case "user":
			display, _, _ := rawText(m.Display)
			switch {
			case text == "" && responses, strings.HasPrefix(text, "<session_context>"),
				strings.HasPrefix(text, "<hook_context>"), text == "Please continue.", text == "System: Please continue.":
			case display != "" || text != "" || images:
				out[event.RoleUser]++
			}
		case "gemini", "qwen":
			for _, th := range m.Thoughts {
				if strings.TrimSpace(th.Subject+th.Description) != "" {
					out[event.RoleThinking]++
					break
				}
			}
			if text != "" {
				out[event.RoleAssistant]++
			}
			for _, c := range m.ToolCalls {
				if c.Name != "" {
					out[event.RoleToolCall]++
				}
			}
		}
	}
	return out
}

// Every corpus file's conversation is its messages, in count and order: the golden files hold
// the sequence (go test -update rewrites them), and the count per role is checked against a walk
// of the raw file. A second read gives the same messages under the same ids.
func TestCorpus_Conversation(t *testing.T) {
	for _, name := range corpusNames(t) {
		t.Run(name, func(t *testing.T) {
			path := corpus(t, name)
			evs, _ := parseFile(t, New(nil), srcOf(path))
			msgs := transcripttest.Conversation(evs)
			transcripttest.GoldenText(t, filepath.Join("testdata", "golden", "conversation", name+".txt"),
				transcripttest.ConversationText(msgs), *update)
			if got, want := transcripttest.RoleCounts(msgs), rawCounts(t, path); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("messages per role = %v, the raw file holds %v", got, want)
			}
			again, _ := parseFile(t, New(nil), srcOf(path))
			transcripttest.SameEvents(t, transcripttest.Conversation(again), msgs)
			// A tool call's message carries its action's id and target.
			calls := map[string]*event.Action{}
			for _, e := range evs {
				if a := e.Action; a != nil && a.ToolUseID != "" && calls[a.ToolUseID] == nil {
					calls[a.ToolUseID] = a
				}
			}
			for _, e := range msgs {
				if m := e.Message; m.Role == event.RoleToolCall {
					if a := calls[m.ToolUseID]; a == nil || a.Tool != m.Tool || a.Target != m.Text {
						t.Errorf("message %+v, action %+v", m, a)
					}
				}
			}
		})
	}
}

// The fixture document: a prompt, a model message with a thought and tool calls, an error and an
// info message (no messages), a reply, a prompt sent with its files expanded (the typed text is the
// message), an image. Read whole or re-read as it grows, the messages and their ids are the same,
// and an unchanged document read again emits none.
func TestParser_DocumentMessages(t *testing.T) {
	src := srcOf(inLayout(t, fixtureDoc, "/work/demo"))
	once, _, err := reread(t, src, nil, docVariant(t, 8, nil))
	if err != nil {
		t.Fatal(err)
	}
	msgs := transcripttest.Conversation(once)
	var roles []string
	for _, e := range msgs {
		roles = append(roles, e.Message.Role)
		if e.Message.AgentID != "" || e.SessionID == "" || e.Project != "/work/demo" {
			t.Errorf("envelope %+v", e)
		}
	}
	want := "user thinking tool_call tool_call tool_call tool_call tool_call tool_call tool_call assistant user user assistant"
	if strings.Join(roles, " ") != want {
		t.Errorf("roles %q\n%s", roles, transcripttest.ConversationText(msgs))
	}
	if m := msgs[1].Message; m.Text != "**Plan**\n\nread, test, fix" || m.MessageID != "m1" || m.Model != "gemini-2.5-pro" {
		t.Errorf("thinking %+v", m)
	}
	var state []byte
	var all []event.Event
	for n := 1; n <= 8; n++ {
		evs, st, err := reread(t, src, state, docVariant(t, n, nil))
		if err != nil {
			t.Fatal(err)
		}
		state, all = st, append(all, evs...)
		if again, _, _ := reread(t, src, state, docVariant(t, n, nil)); len(again) != 0 {
			t.Errorf("%d messages: read again emitted %d events", n, len(again))
		}
	}
	if a, b := transcripttest.MustJSON(t, transcripttest.Conversation(all)), transcripttest.MustJSON(t, msgs); !bytes.Equal(a, b) {
		t.Errorf("grown:\n%s\nonce:\n%s", a, b)
	}
}

// The .jsonl fixture: the <session_context> and a function response are no messages; a message
// rewritten with its tool calls adds the calls' messages once; what a $set list repeats after a
// rewind is not emitted again.
func TestParser_JSONLMessages(t *testing.T) {
	evs, _ := parseFile(t, New(nil), srcOf(absFixture(t, fixtureJSONL)))
	msgs := transcripttest.Conversation(evs)
	if n := len(transcripttest.Messages(evs)); n != len(msgs) {
		t.Errorf("%d message events for %d messages", n, len(msgs))
	}
	transcripttest.CheckConversation(t, msgs, "user\t\tread a.txt", "tool_call\tread_file\ta.txt", "assistant\t\ta.txt says hello", "assistant\t\tagain")
}

// Secrets in a prompt, a thought and a reply are scrubbed; a subagent's file gives its messages
// the agent id.
func TestParser_MessagesScrubbedAndSubagent(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("A1b2C3d4", 6)
	lines := []string{
		`{"sessionId":"sub-1","projectHash":"x","startTime":"2026-03-02T09:00:00.000Z","kind":"subagent"}`,
		`{"id":"u","timestamp":"2026-03-02T09:00:01.000Z","type":"user","content":[{"text":"use ` + key + `"}]}`,
		`{"id":"g","timestamp":"2026-03-02T09:00:02.000Z","type":"gemini","content":"done with ` + key + `","thoughts":[{"subject":"Key","description":"` + key + `"}],"model":"gemini-3-flash-preview"}`,
	}
	src := transcript.Source{Client: Client, Path: "/h/.gemini/tmp/p/chats/parent-1/sub-1.jsonl", SessionID: "parent-1", AgentID: "sub-1"}
	evs, _ := transcripttest.ParseLines(t, New(nil).newParser, src, transcripttest.CheckEvents, lines...)
	msgs := transcripttest.Conversation(evs)
	if len(msgs) != 3 {
		t.Fatalf("conversation:\n%s", transcripttest.ConversationText(msgs))
	}
	for _, e := range msgs {
		if strings.Contains(e.Message.Text, key[:20]) || e.Message.AgentID != "sub-1" || e.SessionID != "parent-1" {
			t.Errorf("message %+v in %s", e.Message, e.SessionID)
		}
	}
}
