package auggie

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxSeen    = 1024
	maxModels  = 16
	maxBlock   = 63
)

// Node types of Auggie's exchanges (see the package doc).
const (
	reqText       = 0
	reqToolResult = 1
	reqIDEState   = 4
	respText      = 0
	respToolUse   = 5
	respThinking  = 8
	respBilling   = 9
	respUsage     = 10
	billedInUSD   = 2 // billing_metadata.usage_unit of a cost in dollars
)

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string   `json:"session,omitempty"` // the session events carry (a sub-agent's parent)
	Agent   string   `json:"agent,omitempty"`   // a sub-agent's own session id
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Models  []string `json:"models,omitempty"`
	Seen    []string `json:"seen,omitempty"`
}

// Parser reads one session document.
type Parser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	st      state
	emitted transcript.Emitted
	stats   transcript.Stats
}

func newParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("auggie parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

type session struct {
	SessionID   string `json:"sessionId"`
	Created     string `json:"created"`
	Title       string `json:"title"`
	CustomTitle string `json:"customTitle"`
	Parent      string `json:"parentConversationId"`
	AgentState  struct {
		ModelID string `json:"modelId"`
	} `json:"agentState"`
	ChatHistory []item `json:"chatHistory"`
}

type item struct {
	Exchange         *exchange `json:"exchange"`
	FinishedAt       string    `json:"finishedAt"`
	IsHistorySummary bool      `json:"isHistorySummary"`
}

type exchange struct {
	RequestID      string     `json:"request_id"`
	RequestMessage string     `json:"request_message"`
	ResponseText   string     `json:"response_text"`
	ModelID        string     `json:"model_id"`
	RequestNodes   []reqNode  `json:"request_nodes"`
	ResponseNodes  []respNode `json:"response_nodes"`
}

type reqNode struct {
	Type     flexInt `json:"type"`
	TextNode *struct {
		Content string `json:"content"`
	} `json:"text_node"`
	ToolResult *toolResult `json:"tool_result_node"`
	IDEState   *struct {
		WorkspaceFolders []struct {
			RepositoryRoot string `json:"repository_root"`
			FolderRoot     string `json:"folder_root"`
		} `json:"workspace_folders"`
		CurrentTerminal *struct {
			Cwd string `json:"current_working_directory"`
		} `json:"current_terminal"`
	} `json:"ide_state_node"`
}

type toolResult struct {
	ToolUseID    string  `json:"tool_use_id"`
	Content      string  `json:"content"`
	IsError      bool    `json:"is_error"`
	DurationMs   flexInt `json:"duration_ms"`
	ContentNodes []struct {
		Type        flexInt `json:"type"`
		TextContent string  `json:"text_content"`
	} `json:"content_nodes"`
}

type respNode struct {
	Type     flexInt  `json:"type"`
	Content  string   `json:"content"`
	ToolUse  *toolUse `json:"tool_use"`
	Thinking *struct {
		Content string `json:"content"`
		Summary string `json:"summary"`
	} `json:"thinking"`
	TokenUsage *struct {
		Input         flexInt `json:"input_tokens"`
		Output        flexInt `json:"output_tokens"`
		CacheRead     flexInt `json:"cache_read_input_tokens"`
		CacheCreation flexInt `json:"cache_creation_input_tokens"`
	} `json:"token_usage"`
	Billing *struct {
		CostUSD   flexFloat `json:"cost_usd"`
		UsageUnit flexInt   `json:"usage_unit"`
	} `json:"billing_metadata"`
	TimestampMs flexInt `json:"timestamp_ms"`
}

type toolUse struct {
	ToolUseID     string  `json:"tool_use_id"`
	ToolName      string  `json:"tool_name"`
	InputJSON     string  `json:"input_json"`
	MCPServerName string  `json:"mcp_server_name"`
	MCPToolName   string  `json:"mcp_tool_name"`
	StartedAtMs   flexInt `json:"started_at_ms"`
	CompletedAtMs flexInt `json:"completed_at_ms"`
}

// Record reads the whole document.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var d session
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.session(&d), &p.st.Seen, maxSeen), nil
}

func (p *Parser) session(d *session) []event.Event {
	own := transcript.FirstNonEmpty(p.src.SessionID, strings.TrimSuffix(filepath.Base(p.src.Path), ".json"), d.SessionID)
	if p.st.Session == "" {
		p.st.Session = own
		if parent := strings.TrimSpace(d.Parent); parent != "" && parent != own {
			p.st.Session, p.st.Agent = parent, own
		}
	}
	for i := range d.ChatHistory {
		if x := d.ChatHistory[i].Exchange; x != nil {
			for _, n := range x.RequestNodes {
				if s := n.IDEState; int64(n.Type) == reqIDEState && s != nil {
					for _, f := range s.WorkspaceFolders {
						transcript.SetCwd(&p.st.Cwd, &p.st.Project, transcript.FirstNonEmpty(f.RepositoryRoot, f.FolderRoot))
					}
					if s.CurrentTerminal != nil {
						transcript.SetCwd(&p.st.Cwd, &p.st.Project, s.CurrentTerminal.Cwd)
					}
				}
			}
		}
		if p.st.Cwd != "" {
			break
		}
	}
	created, hasCreated := transcript.ParseTime(d.Created)
	var evs []event.Event
	if !p.st.Started && hasCreated && p.st.Agent == "" {
		p.st.Started = true
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), created)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, StartedAt: created}
		evs = append(evs, ev)
	}
	if title, byUser := transcript.FirstNonEmpty(d.CustomTitle, d.Title), strings.TrimSpace(d.CustomTitle) != ""; title != "" && hasCreated && p.st.Agent == "" {
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), created)
		ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TitleByUser: byUser, TranscriptPath: p.src.Path}
		evs = append(evs, ev)
	}
	results := map[string]*toolResult{}
	for i := range d.ChatHistory {
		if x := d.ChatHistory[i].Exchange; x != nil {
			for _, n := range x.RequestNodes {
				if r := n.ToolResult; int64(n.Type) == reqToolResult && r != nil && r.ToolUseID != "" {
					results[r.ToolUseID] = r
				}
			}
		}
	}
	t := created
	for i := range d.ChatHistory {
		it := &d.ChatHistory[i]
		x := it.Exchange
		if x == nil || it.IsHistorySummary {
			continue
		}
		if ts, ok := transcript.ParseTime(it.FinishedAt); ok {
			t = ts
		} else if ts, ok := firstNodeTime(x); ok {
			t = ts
		}
		if t.IsZero() {
			continue // no time for it yet
		}
		evs = append(evs, p.exchange(int64(i), x, transcript.FirstNonEmpty(x.ModelID, d.AgentState.ModelID), t, results)...)
	}
	return evs
}

func firstNodeTime(x *exchange) (time.Time, bool) {
	for _, n := range x.ResponseNodes {
		if ms := int64(n.TimestampMs); ms > 31536000000 && ms < 9e12 {
			return time.UnixMilli(ms).UTC(), true
		}
	}
	return time.Time{}, false
}

func (p *Parser) exchange(i int64, x *exchange, model string, t time.Time, results map[string]*toolResult) []event.Event {
	key := transcript.FirstNonEmpty(x.RequestID, "item "+strconv.FormatInt(i, 10))
	var evs []event.Event
	prompt := strings.TrimSpace(x.RequestMessage)
	if prompt == "" {
		var parts []string
		for _, n := range x.RequestNodes {
			if int64(n.Type) == reqText && n.TextNode != nil && strings.TrimSpace(n.TextNode.Content) != "" {
				parts = append(parts, strings.TrimSpace(n.TextNode.Content))
			}
		}
		prompt = strings.Join(parts, "\n")
	}
	if prompt != "" {
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, RequestID: x.RequestID,
			AgentID: p.st.Agent, Sidechain: p.st.Agent != "", Transcript: p.src.Path}
		evs = append(evs, ev)
		evs = append(evs, p.textMessage(event.RoleUser, i, 0, t, prompt, key, "")...)
	}
	evs = append(evs, p.modelEvent(model, t)...)
	var usage *respNode
	clientUSD := 0.0
	text := false
	for j := range x.ResponseNodes {
		n := &x.ResponseNodes[j]
		switch int64(n.Type) {
		case respText:
			if strings.TrimSpace(n.Content) != "" {
				text = true
				evs = append(evs, p.textMessage(event.RoleAssistant, i, j+1, t, n.Content, key, model)...)
			}
		case respThinking:
			if n.Thinking != nil {
				evs = append(evs, p.textMessage(event.RoleThinking, i, j+1, t, transcript.FirstNonEmpty(n.Thinking.Content, n.Thinking.Summary), key, model)...)
			}
		case respToolUse:
			if n.ToolUse != nil && n.ToolUse.ToolUseID != "" {
				call := p.call(n.ToolUse, results[n.ToolUse.ToolUseID], key, x.RequestID, model, t)
				evs = append(evs, call, p.message(i, j+1, t, event.Message{Role: event.RoleToolCall, Text: call.Action.Target,
					Tool: n.ToolUse.ToolName, ToolUseID: n.ToolUse.ToolUseID, MessageID: key, Model: model}))
			}
		case respBilling:
			if b := n.Billing; b != nil && int64(b.UsageUnit) == billedInUSD && float64(b.CostUSD) > 0 {
				clientUSD += float64(b.CostUSD)
			}
		case respUsage:
			if u := n.TokenUsage; usage == nil && u != nil && int64(u.Input)+int64(u.Output)+int64(u.CacheRead)+int64(u.CacheCreation) > 0 {
				usage = n
			}
		}
	}
	if !text && strings.TrimSpace(x.ResponseText) != "" {
		evs = append(evs, p.textMessage(event.RoleAssistant, i, maxBlock, t, x.ResponseText, key, model)...)
	}
	if usage != nil {
		u := usage.TokenUsage
		tok := event.Tokens{Input: max(int64(u.Input), 0), Output: max(int64(u.Output), 0),
			CacheRead: max(int64(u.CacheRead), 0), CacheCreation: max(int64(u.CacheCreation), 0)}
		if tu := transcript.PricedUsage(p.prices(), model, x.RequestID, tok, clientUSD, t); tu != nil {
			tu.RequestID, tu.AgentID = x.RequestID, p.st.Agent
			ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", transcript.FirstNonEmpty(p.st.Agent, p.st.Session), key), t)
			ev.TokenUsage = tu
			evs = append(evs, ev)
		}
	}
	return evs
}

func (p *Parser) call(u *toolUse, r *toolResult, msgID, requestID, model string, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal([]byte(u.InputJSON), &in)
	ty, target := p.toolOf(u, in)
	a := &event.Action{Type: ty, Tool: u.ToolName, Target: clipTarget(target), ToolUseID: u.ToolUseID, MessageID: msgID,
		RequestID: requestID, Model: model, AgentID: p.st.Agent, Sidechain: p.st.Agent != "", InputHash: inputHash(u.InputJSON),
		Transcript: p.src.Path}
	if r != nil {
		out := r.Content
		if out == "" {
			var parts []string
			for _, c := range r.ContentNodes {
				if c.TextContent != "" {
					parts = append(parts, c.TextContent)
				}
			}
			out = strings.Join(parts, "\n")
		}
		ok := !r.IsError
		a.Success = &ok
		if !ok {
			a.Error = clipError(transcript.FirstNonEmpty(out, "tool error"))
		}
		a.Output = clipOutput(out)
		a.OutputSize = int64(len(out))
		a.DurationMs = max(int64(r.DurationMs), 0)
		if a.DurationMs == 0 && u.CompletedAtMs > u.StartedAtMs && u.StartedAtMs > 0 {
			a.DurationMs = int64(u.CompletedAtMs - u.StartedAtMs)
		}
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, u.ToolUseID), t)
	ev.Action = a
	return ev
}

// patchFile finds the first file a patch names.
var patchFile = regexp.MustCompile(`(?m)^\*\*\*\s+(?:Add|Update|Delete)\s+File:\s+(.+)$`)

// toolOf maps a tool call to its action type and target (see the package doc).
func (p *Parser) toolOf(u *toolUse, in map[string]any) (event.ActionType, string) {
	if server := strings.TrimSpace(u.MCPServerName); server != "" {
		tool := transcript.FirstNonEmpty(u.MCPToolName, strings.TrimSuffix(u.ToolName, "_"+server))
		return event.ActionMCPCall, server + "/" + tool
	}
	name := u.ToolName
	switch name {
	case "view":
		if transcript.Arg(in, "type") == "directory" {
			return event.ActionSearchFiles, p.relPath(transcript.Arg(in, "path"))
		}
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "path"))
	case "view-range-untruncated":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "path"))
	case "save-file":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "path"))
	case "str-replace-editor":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "path"))
	case "apply_patch":
		if changes, ok := in["changes"].([]any); ok && len(changes) > 0 {
			if c, ok := changes[0].(map[string]any); ok {
				return event.ActionEditFile, p.relPath(transcript.Arg(c, "path"))
			}
		}
		if m := patchFile.FindStringSubmatch(transcript.Arg(in, "input")); m != nil {
			return event.ActionEditFile, p.relPath(strings.TrimSpace(m[1]))
		}
		return event.ActionEditFile, ""
	case "remove-files":
		var paths []string
		if list, ok := in["file_paths"].([]any); ok {
			for _, f := range list {
				if s, ok := f.(string); ok && strings.TrimSpace(s) != "" {
					paths = append(paths, p.relPath(s))
				}
			}
		}
		return event.ActionEditFile, strings.Join(paths, ", ")
	case "launch-process":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "read-process", "write-process", "kill-process", "list-processes", "read-terminal":
		if id := transcript.Arg(in, "terminal_id"); id != "" {
			return event.ActionRunCommand, "terminal " + id
		}
		if f, ok := in["terminal_id"].(float64); ok {
			return event.ActionRunCommand, "terminal " + strconv.FormatFloat(f, 'f', -1, 64)
		}
		return event.ActionRunCommand, ""
	case "grep-search":
		t := transcript.Arg(in, "query", "search_term")
		if dir := transcript.Arg(in, "directory_absolute_path"); dir != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "search-untruncated":
		return event.ActionSearchText, transcript.Arg(in, "search_term")
	case "codebase-retrieval", "git-commit-retrieval", "conversation-retrieval":
		return event.ActionSearchText, transcript.Arg(in, "information_request", "query")
	case "web-search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "web-fetch", "open-browser":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "add_tasks", "update_tasks", "view_tasklist", "reorganize_tasklist":
		return event.ActionTodoUpdate, ""
	case "ask-user":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	if name == "sub-agent" || strings.HasPrefix(name, "sub-agent-") {
		agent := transcript.FirstNonEmpty(transcript.Arg(in, "name"), strings.TrimPrefix(strings.TrimPrefix(name, "sub-agent"), "-"))
		task := transcript.Arg(in, "instruction", "prompt", "description")
		if agent != "" && task != "" {
			return event.ActionSpawnSubagent, agent + ": " + task
		}
		return event.ActionSpawnSubagent, transcript.FirstNonEmpty(task, agent)
	}
	return event.ActionUnknown, ""
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if p.st.Agent != "" || !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "model\x00"+model), t)
	ev.Session = &event.Session{State: event.SessionActive, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	return []event.Event{ev}
}

func (p *Parser) message(record int64, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), transcript.FirstNonEmpty(p.st.Agent, p.st.Session), m.MessageID, strconv.Itoa(blk)), t)
	m.Seq = record*64 + int64(min(blk, maxBlock))
	m.AgentID, m.Sidechain = p.st.Agent, p.st.Agent != ""
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, record int64, blk int, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(record, blk, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

// flexInt reads a count written as a number or a numeric string; anything else is 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(b)), `"`), 64)
	if err != nil || f != f || f > 1e15 || f < -1e15 {
		f = 0
	}
	*n = flexInt(f)
	return nil
}

// flexFloat reads an amount written as a number or a numeric string; anything else is 0.
type flexFloat float64

func (n *flexFloat) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(b)), `"`), 64)
	if err != nil || f != f || f > 1e9 || f < -1e9 {
		f = 0
	}
	*n = flexFloat(f)
	return nil
}

func inputHash(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return ""
	}
	h := sha256.Sum256([]byte(raw))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
