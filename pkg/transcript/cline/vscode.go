package cline

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// uiMessage is one ClineMessage of an extension task's ui_messages.json.
type uiMessage struct {
	Ts        json.RawMessage `json:"ts"`
	Type      string          `json:"type"`
	Ask       string          `json:"ask"`
	Say       string          `json:"say"`
	Text      string          `json:"text"`
	Partial   bool            `json:"partial"`
	ModelInfo struct {
		ProviderID string `json:"providerId"`
		ModelID    string `json:"modelId"`
	} `json:"modelInfo"`
	// ContextCondense is Roo's and Kilo's record of a condensation (say condense_context).
	ContextCondense struct {
		Summary string `json:"summary"`
	} `json:"contextCondense"`
}

// apiReq is the text of an api_req_started message.
type apiReq struct {
	Request                string    `json:"request"`
	TokensIn               flexInt   `json:"tokensIn"`
	TokensOut              flexInt   `json:"tokensOut"`
	CacheWrites            flexInt   `json:"cacheWrites"`
	CacheReads             flexInt   `json:"cacheReads"`
	Cost                   flexFloat `json:"cost"`
	APIProtocol            string    `json:"apiProtocol"`
	CancelReason           string    `json:"cancelReason"`
	StreamingFailedMessage string    `json:"streamingFailedMessage"`
	Model                  string    `json:"model"`
}

// cwdLine finds the working directory in the environment details the extensions send.
var cwdLine = regexp.MustCompile(`# Current Work(?:ing|space) Directory \(([^)\n]+)\)`)

// anthropicProviders report input net of the cache.
var anthropicProviders = map[string]bool{"anthropic": true, "bedrock": true, "vertex": true, "claude-code": true}

func (p *Parser) uiMessages(raw []byte) ([]event.Event, error) {
	if raw[0] != '[' {
		return nil, malformed("ui_messages is not a JSON array")
	}
	var msgs []uiMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, malformed("document does not parse (written while read, or damaged): %v", err)
	}
	if p.st.Session == "" {
		p.st.Session = firstNonEmpty(p.src.SessionID, filepath.Base(filepath.Dir(p.src.Path)))
	}
	if p.st.Cwd == "" {
		if m := cwdLine.FindSubmatch(raw); m != nil {
			// raw is JSON: the path is escaped as a JSON string's content.
			var s string
			if json.Unmarshal([]byte(`"`+string(m[1])+`"`), &s) == nil {
				p.setCwd(s)
			}
		}
	}
	var evs []event.Event
	model := ""
	lastCmd := -1 // index in evs of the last command, which command_output extends
	sawAPI := false
	for i := range msgs {
		m := &msgs[i]
		t, ok := msTime(m.Ts)
		if !ok || m.Partial {
			continue
		}
		if !p.st.Started {
			p.st.Started = true
			ev := p.sessionEvent(event.SessionStarted, "", t)
			evs = append(evs, ev)
		}
		key := strconv.FormatInt(t.UnixMilli(), 10)
		if m.ModelInfo.ModelID != "" {
			model = m.ModelInfo.ModelID
		}
		kind := m.Say
		if m.Type == "ask" {
			kind = m.Ask
		} else if m.Type != "say" {
			p.unknown("type " + m.Type)
			continue
		}
		action := func(ty event.ActionType, tool, target string) *event.Action {
			ev := p.newEvent(event.KindAction, p.actionID(key), t)
			ev.Action = &event.Action{Type: ty, Tool: tool, Target: clipTarget(target), MessageID: key, Model: model,
				Transcript: p.src.Path}
			evs = append(evs, ev)
			return ev.Action
		}
		// call is an action that is a tool call, placed in the conversation too.
		call := func(ty event.ActionType, tool, target string) *event.Action {
			a := action(ty, tool, target)
			evs = append(evs, p.callMessage(a, key, i, 0, t))
			return a
		}
		say := func(role, text string) {
			evs = append(evs, p.textMessage(role, key, i, 0, t, text, key, model)...)
		}
		switch kind {
		case "task", "user_feedback":
			action(event.ActionUserPrompt, "", m.Text)
			say(event.RoleUser, m.Text)
		case "text":
			if !sawAPI && i == 0 {
				action(event.ActionUserPrompt, "", m.Text) // Roo and Kilo say the task as text
				say(event.RoleUser, m.Text)
			} else {
				say(event.RoleAssistant, m.Text)
			}
		case "reasoning":
			say(event.RoleThinking, m.Text)
		case "plan_mode_respond":
			var in map[string]any
			if json.Unmarshal([]byte(m.Text), &in) == nil {
				say(event.RoleAssistant, str(in, "response"))
			} else {
				say(event.RoleAssistant, m.Text)
			}
		case "condense":
			say(event.RoleSummary, m.Text) // Cline's condense tool: the context the task goes on from
		case "api_req_started":
			sawAPI = true
			var r apiReq
			if json.Unmarshal([]byte(m.Text), &r) != nil {
				p.unknown("(malformed api_req_started)")
				continue
			}
			if model == "" {
				model = r.Model
			}
			evs = append(evs, p.modelEvent(model, t)...)
			anth := r.APIProtocol == "anthropic" || anthropicProviders[strings.ToLower(m.ModelInfo.ProviderID)] ||
				r.APIProtocol == "" && m.ModelInfo.ProviderID == ""
			tok := netTokens(int64(r.TokensIn), int64(r.TokensOut), int64(r.CacheReads), int64(r.CacheWrites), anth)
			if ev, ok := p.usage(event.ID(p.client, "usage", p.st.Session, key), key, model, tok, float64(r.Cost), t); ok {
				evs = append(evs, ev)
			}
			if r.StreamingFailedMessage != "" {
				f := false
				a := action(event.ActionAPIError, "", "")
				a.Success, a.Error = &f, clipError(r.StreamingFailedMessage)
			}
		case "api_req_failed", "error":
			f := false
			a := action(event.ActionAPIError, "", "")
			a.Success, a.Error = &f, clipError(m.Text)
		case "condense_context":
			action(event.ActionContextCompacted, "", "")
			say(event.RoleSummary, m.ContextCondense.Summary)
		case "command":
			lastCmd = len(evs)
			call(event.ActionRunCommand, "execute_command", strings.TrimSuffix(strings.TrimSpace(m.Text), "REQ_APP"))
		case "command_output":
			if lastCmd >= 0 && m.Text != "" {
				a := evs[lastCmd].Action
				out := a.Output
				if out != "" {
					out += "\n"
				}
				a.OutputSize += int64(len(m.Text))
				a.Output = clipOutput(out + m.Text)
			}
		case "tool":
			var in map[string]any
			if json.Unmarshal([]byte(m.Text), &in) != nil {
				p.unknown("(malformed tool)")
				continue
			}
			name, _ := in["tool"].(string)
			ty, target := p.toolOf(name, in)
			call(ty, name, target).InputHash = inputHash([]byte(m.Text))
		case "use_mcp_server":
			var in map[string]any
			_ = json.Unmarshal([]byte(m.Text), &in)
			name := "use_mcp_tool"
			if s, _ := in["type"].(string); s != "" {
				name = s
			}
			_, target := p.toolOf("use_mcp_tool", in)
			call(event.ActionMCPCall, name, target)
		case "followup":
			q := m.Text
			var in map[string]any
			if json.Unmarshal([]byte(m.Text), &in) == nil {
				q = str(in, "question")
			}
			call(event.ActionAskUser, "ask_followup_question", q)
		case "completion_result":
			if m.Type == "say" {
				action(event.ActionTaskComplete, "attempt_completion", m.Text)
				say(event.RoleAssistant, strings.TrimSuffix(strings.TrimSpace(m.Text), "HAS_CHANGES"))
			}
		case "new_task":
			call(event.ActionSpawnSubagent, "new_task", m.Text)
		case "browser_action_launch":
			call(event.ActionWebFetch, "browser_action", m.Text)
		}
	}
	return evs, nil
}
