package mistralvibe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what it keeps.
const (
	maxTarget   = 500
	maxError    = 2 << 10
	maxOutput   = 8 << 10
	maxMessage  = 64 << 10
	maxModels   = 16
	maxAnchors  = 512
	maxPart     = 63
	maxMessages = 1 << 30 // bytes of messages.jsonl read
)

// state is what a parser keeps between reads: JSON, small, no transcript text.
type state struct {
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Title   string   `json:"title,omitempty"` // the hash of the title reported
	Models  []string `json:"models,omitempty"`
	// N is the number of messages read so far; Anchors are [message index, unix ms] pairs, in
	// increasing index order: the first message's time and, for each read that found new
	// messages, the time of the last one it covered.
	N       int64      `json:"n,omitempty"`
	Anchors [][2]int64 `json:"anchors,omitempty"`
	// Base is what a continued session's parent counted already (prompt, completion, cached),
	// Based whether it was decided.
	Base  *[3]int64 `json:"base,omitempty"`
	Based bool      `json:"based,omitempty"`
	// Done is the number of messages whose events were all reported (the first ones, see the
	// package doc); of a meta.json's messages.jsonl, Off is the bytes they take and Line and Mark
	// the length and hash of the last one's line; of a Vibe 1 document, Mark is a hash of those
	// messages. Seen are the fingerprints of the events of the messages after them and of the
	// usage, as last emitted.
	Done int64    `json:"done,omitempty"`
	Off  int64    `json:"off,omitempty"`
	Line int64    `json:"line,omitempty"`
	Mark string   `json:"mark,omitempty"`
	Seen []string `json:"seen,omitempty"`
}

// Parser reads one session.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
	legacy bool // a Vibe 1 document
	dirs   *dirIndex
}

func newParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices, legacy: filepath.Base(src.Path) != metaFile}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("mistral-vibe parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// meta is a session's metadata: meta.json, or a Vibe 1 document's "metadata".
type meta struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id"`
	StartTime       string `json:"start_time"`
	EndTime         string `json:"end_time"`
	GitBranch       string `json:"git_branch"`
	Environment     struct {
		WorkingDirectory string `json:"working_directory"`
	} `json:"environment"`
	WorkingDir    string          `json:"working_dir"`
	Title         string          `json:"title"`
	TitleSource   string          `json:"title_source"`
	Stats         stats           `json:"stats"`
	TotalMessages json.RawMessage `json:"total_messages"`
	Config        json.RawMessage `json:"config"`
	AgentConfig   json.RawMessage `json:"agent_config"`
}

type stats struct {
	Steps            json.RawMessage `json:"steps"`
	Prompt           json.RawMessage `json:"session_prompt_tokens"`
	Completion       json.RawMessage `json:"session_completion_tokens"`
	Cached           json.RawMessage `json:"session_cached_tokens"`
	InputPrice       json.RawMessage `json:"input_price_per_million"`
	OutputPrice      json.RawMessage `json:"output_price_per_million"`
	CachedInputPrice json.RawMessage `json:"cached_input_price_per_million"`
}

// config is the part of Vibe's configuration dump read.
type config struct {
	ActiveModel string `json:"active_model"`
	Models      []struct {
		Name             string          `json:"name"`
		Alias            string          `json:"alias"`
		InputPrice       json.RawMessage `json:"input_price"`
		OutputPrice      json.RawMessage `json:"output_price"`
		CachedInputPrice json.RawMessage `json:"cached_input_price"`
	} `json:"models"`
	MCPServers []struct {
		Name  string `json:"name"`
		Alias string `json:"alias"`
	} `json:"mcp_servers"`
}

// legacyDoc is a Vibe 1 session file.
type legacyDoc struct {
	Metadata *meta             `json:"metadata"`
	Messages []json.RawMessage `json:"messages"`
}

// message is one LLMMessage dump.
type message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Injected         bool            `json:"injected"`
	ContextBoundary  string          `json:"context_boundary"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	ToolCalls        []toolCall      `json:"tool_calls"`
	Name             string          `json:"name"`
	ToolCallID       string          `json:"tool_call_id"`
	MessageID        string          `json:"message_id"`
}

type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// Record reads the whole document (a meta.json with its messages.jsonl, or a Vibe 1 file): the
// messages State.Done covers yield no events again (see the package doc). A document that does
// not parse emits nothing and leaves the state as it was.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var m meta
	var msgs []message // the messages from done on
	var lines []span   // their lines in messages.jsonl
	var raws [][]byte  // a Vibe 1 document's messages, all
	done := 0
	if p.legacy {
		var d legacyDoc
		if err := transcript.DecodeDocument(raw, &d); err != nil {
			return nil, err
		}
		if d.Metadata == nil {
			return nil, transcript.Malformed(Client, "%s has no metadata", p.src.Path)
		}
		m = *d.Metadata
		var all []message
		for _, r := range d.Messages {
			var mm message
			if json.Unmarshal(r, &mm) != nil {
				p.stats.CountUnknown("message that does not decode")
				continue
			}
			if mm.Role != "system" {
				all = append(all, mm)
				raws = append(raws, r)
			}
		}
		if n := int(p.st.Done); n > 0 && n <= len(raws) && p.st.Mark == prefixHash(raws[:n]) {
			done = n
		}
		msgs = all[done:]
	} else {
		if err := transcript.DecodeDocument(raw, &m); err != nil {
			return nil, err
		}
		var off int64
		if p.st.Based || strings.TrimSpace(m.ParentSessionID) == "" {
			// A continued session is read from its first message until its parent's figures are
			// decided (they are decided by that message).
			done, off = p.resumeLines()
		}
		limit := -1
		if total := transcript.Count(m.TotalMessages); total > 0 {
			limit = max(int(total)-done, 0)
		}
		msgs, lines = p.readMessages(off, limit)
	}
	evs, final, tail := p.session(&m, done, msgs)
	evs = p.keep(evs, tail)
	switch {
	case final <= done:
		if done == 0 {
			p.st.Done, p.st.Off, p.st.Line, p.st.Mark = 0, 0, 0, ""
		}
	case p.legacy:
		p.st.Done, p.st.Mark = int64(final), prefixHash(raws[:final])
	default:
		l := lines[final-done-1]
		p.st.Done, p.st.Off, p.st.Line, p.st.Mark = int64(final), l.end, l.end-l.start, l.hash
	}
	return evs, nil
}

// span is a message's line in messages.jsonl: its bytes [start, end) and their hash.
type span struct {
	start, end int64
	hash       string
}

// resumeLines returns the messages State.Done covers and the bytes of messages.jsonl they take,
// when the file still holds the line State names there; else nothing (read it from its start).
func (p *Parser) resumeLines() (int, int64) {
	if p.st.Done <= 0 || p.st.Off <= 0 || p.st.Line <= 0 || p.st.Line > p.st.Off || p.st.Line > maxMessages {
		return 0, 0
	}
	f, err := os.Open(filepath.Join(filepath.Dir(p.src.Path), messagesFile))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	buf := make([]byte, p.st.Line)
	if _, err := f.ReadAt(buf, p.st.Off-p.st.Line); err != nil || lineHash(buf) != p.st.Mark {
		return 0, 0
	}
	return int(p.st.Done), p.st.Off
}

// readMessages reads the messages.jsonl beside the meta.json from byte off: its complete lines,
// at most limit messages when limit >= 0 (the messages the meta.json covers), with their lines.
func (p *Parser) readMessages(off int64, limit int) ([]message, []span) {
	f, err := os.Open(filepath.Join(filepath.Dir(p.src.Path), messagesFile))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, nil
		}
	}
	r := bufio.NewReaderSize(io.LimitReader(f, max(maxMessages-off, 0)), 64<<10)
	var out []message
	var lines []span
	pos := off
	for limit < 0 || len(out) < limit {
		raw, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF, or a last line still being written
		}
		start := pos
		pos += int64(len(raw))
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		var m message
		if !utf8.Valid(line) || json.Unmarshal(line, &m) != nil {
			p.stats.CountUnknown("messages.jsonl line that does not parse")
			continue
		}
		if m.Role != "system" {
			out = append(out, m)
			lines = append(lines, span{start: start, end: pos, hash: lineHash(raw)})
		}
	}
	return out, lines
}

// keep drops from evs those emitted before exactly as they are (their fingerprints in Seen) and
// makes Seen the fingerprints of evs[tail:], the events checked again at the next read; the
// events before tail are reported for good.
func (p *Parser) keep(evs []event.Event, tail int) []event.Event {
	old := make(map[string]bool, len(p.st.Seen))
	for _, f := range p.st.Seen {
		old[f] = true
	}
	var seen []string
	out := evs[:0]
	for i := range evs {
		f := transcript.Fingerprint(&evs[i])
		if f != "" && i >= tail {
			seen = append(seen, f)
		}
		if f != "" && old[f] {
			continue
		}
		out = append(out, evs[i])
	}
	p.st.Seen = seen
	return out
}

func lineHash(line []byte) string {
	h := sha256.Sum256(line)
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

// prefixHash hashes a Vibe 1 document's first messages.
func prefixHash(raws [][]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, r := range raws {
		binary.LittleEndian.PutUint64(n[:], uint64(len(r)))
		h.Write(n[:])
		h.Write(r)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// session returns the session's events from message done on (msgs are those messages), the
// number of messages whose events are now all reported (final) and the index among the events of
// the first one to check again at the next read (the events of the messages from final on, and
// the usage).
func (p *Parser) session(m *meta, done int, msgs []message) ([]event.Event, int, int) {
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(m.SessionID, p.src.SessionID, p.nameID())
	}
	transcript.SetCwd(&p.st.Cwd, &p.st.Project, transcript.FirstNonEmpty(m.Environment.WorkingDirectory, m.WorkingDir))
	start, hasStart := parseTime(m.StartTime)
	end, hasEnd := parseTime(m.EndTime)
	if !hasStart {
		start = p.modTime()
		if hasEnd {
			start = end
		}
	}
	if !hasEnd {
		end = p.modTime()
	}
	p.noteTimes(done+len(msgs), start, end)
	startAt := time.UnixMilli(p.st.Anchors[0][1]).UTC()

	cfg := p.config(m)
	model, alias := cfg.model()
	var evs []event.Event
	if !p.st.Started {
		p.st.Started = true
		ev := p.sessionEvent(event.SessionStarted, "", startAt)
		ev.Session.ParentSessionID = strings.TrimSpace(m.ParentSessionID)
		ev.Session.GitBranch = strings.TrimSpace(m.GitBranch)
		evs = append(evs, ev)
	}
	if title := strings.TrimSpace(m.Title); title != "" && m.TitleSource == "manual" && transcript.TextHash(title) != p.st.Title {
		p.st.Title = transcript.TextHash(title)
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), end)
		ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TitleByUser: true, TranscriptPath: p.src.Path}
		evs = append(evs, ev)
	}
	if transcript.NewModel(&p.st.Models, model, maxModels) {
		evs = append(evs, p.sessionEvent(event.SessionActive, model, startAt))
	}
	mevs, final, tail := p.messages(done, msgs, model, cfg)
	tail += len(evs)
	evs = append(evs, mevs...)
	if ev, ok := p.usage(m, msgs, model, alias, cfg, startAt); ok {
		evs = append(evs, ev)
	}
	return evs, final, tail
}

// nameID is the session named by its file: a directory's name, or a Vibe 1 file's.
func (p *Parser) nameID() string {
	if p.legacy {
		return strings.TrimSuffix(filepath.Base(p.src.Path), ".json")
	}
	return filepath.Base(filepath.Dir(p.src.Path))
}

// config decodes the configuration dump (config, or Vibe 1's agent_config), leniently.
func (p *Parser) config(m *meta) *config {
	c := &config{}
	for _, raw := range []json.RawMessage{m.Config, m.AgentConfig} {
		if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, c) == nil && c.ActiveModel != "" {
			return c
		}
		c = &config{}
	}
	return c
}

// model returns the active model's name and its alias (the alias is the name when the
// configuration lists no such model).
func (c *config) model() (name, alias string) {
	alias = strings.TrimSpace(c.ActiveModel)
	for _, m := range c.Models {
		if strings.TrimSpace(m.Alias) == alias && strings.TrimSpace(m.Name) != "" {
			return strings.TrimSpace(m.Name), alias
		}
	}
	return alias, alias
}

// ---------------------------------------------------------------------------------------------
// Messages and actions

// messages returns the events of msgs, the messages from index base on, the index of the first
// message whose events may still change (final: the last assistant message when a call of it has
// no result yet and the turn went no further; else past the last message) and the index of its
// first event.
func (p *Parser) messages(base int, msgs []message, model string, cfg *config) (evs []event.Event, final, tail int) {
	results := map[string]*message{}
	for i := range msgs {
		if m := &msgs[i]; m.Role == "tool" && m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
	}
	final = base + len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role != "tool" {
			for _, c := range m.ToolCalls {
				if strings.TrimSpace(c.ID) != "" && results[c.ID] == nil && m.Role == "assistant" {
					final = base + i
				}
			}
			break
		}
	}
	tail = -1
	for j := range msgs {
		i := base + j
		if i == final {
			tail = len(evs)
		}
		m := &msgs[j]
		t := p.timeOf(i)
		key := p.messageKey(m, i)
		switch m.Role {
		case "user":
			text := strings.TrimSpace(contentText(m.Content))
			switch {
			case text == "":
			case m.Injected && m.ContextBoundary == "compaction":
				ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), "compaction", key), t)
				ev.Action = &event.Action{Type: event.ActionContextCompacted, MessageID: m.MessageID, Model: model, Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleSummary, key, i, 0, t, text, m.MessageID, "")...)
			case m.Injected:
			default:
				ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), "prompt", key), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), MessageID: m.MessageID, Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleUser, key, i, 0, t, text, m.MessageID, "")...)
			}
		case "assistant":
			evs = append(evs, p.textMessage(event.RoleThinking, key, i, 0, t, contentText(m.ReasoningContent), m.MessageID, model)...)
			evs = append(evs, p.textMessage(event.RoleAssistant, key, i, 1, t, contentText(m.Content), m.MessageID, model)...)
			for j := range m.ToolCalls {
				c := &m.ToolCalls[j]
				if strings.TrimSpace(c.ID) == "" {
					continue
				}
				call := p.call(c, results[c.ID], key, m.MessageID, model, cfg, t)
				evs = append(evs, call, p.message(key, i, j+2, t, event.Message{Role: event.RoleToolCall, Text: call.Action.Target,
					Tool: call.Action.Tool, ToolUseID: c.ID, MessageID: m.MessageID, Model: model}))
			}
		case "tool":
			// results, read with their calls
		default:
			p.stats.CountUnknown("role " + m.Role)
		}
	}
	if tail < 0 {
		tail = len(evs)
	}
	return evs, final, tail
}

// messageKey names a message in ids: its message_id (kept by a fork's copies), else the session
// and its index.
func (p *Parser) messageKey(m *message, i int) string {
	if id := strings.TrimSpace(m.MessageID); id != "" {
		return "m\x00" + id
	}
	return "i\x00" + p.st.Session + "\x00" + strconv.Itoa(i)
}

// contentText is a content's text: a string, or the text of its parts.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, pt := range parts {
		if strings.TrimSpace(pt.Text) != "" {
			out = append(out, pt.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (p *Parser) call(c *toolCall, res *message, key, msgID, model string, cfg *config, t time.Time) event.Event {
	name := strings.TrimSpace(c.Function.Name)
	args := argsText(c.Function.Arguments)
	var in map[string]any
	_ = json.Unmarshal([]byte(args), &in)
	var out string
	if res != nil {
		out = contentText(res.Content)
	}
	ty, target := p.toolOf(name, in, cfg, out)
	a := &event.Action{Type: ty, Tool: name, Target: clipTarget(target), ToolUseID: c.ID, MessageID: msgID, Model: model,
		InputHash: inputHash(args), Transcript: p.src.Path}
	if res != nil {
		ok, text := outcome(out)
		a.Success = &ok
		if !ok {
			a.Error = clipError(transcript.FirstNonEmpty(text, "the tool failed"))
		}
		a.OutputSize = int64(len(text))
		a.Output = clipOutput(text)
	}
	// Keyed by its message too: a provider's call ids may be counters (functions.bash:0) that
	// repeat in every session.
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), key, c.ID), t)
	ev.Action = a
	return ev
}

// argsText is a call's arguments as JSON text (Vibe writes a JSON string; an object is taken as
// it is).
func argsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// outcome reads a tool message: whether the call succeeded, and its text without Vibe's tags.
func outcome(content string) (bool, string) {
	c := strings.TrimSpace(content)
	for _, tag := range []string{"tool_error", "user_cancellation"} {
		open, close := "<"+tag+">", "</"+tag+">"
		if rest, ok := strings.CutPrefix(c, open); ok {
			rest, _ = strings.CutSuffix(rest, close)
			return false, strings.TrimSpace(rest)
		}
	}
	switch {
	case c == "Tool execution not permitted.",
		strings.HasPrefix(c, "Tool '") && (strings.Contains(c, "' blocked by denylist") || strings.HasSuffix(c, "' is permanently disabled")),
		strings.HasPrefix(c, "Error getting tool '"),
		strings.HasPrefix(c, "ok: False\n"):
		return false, c
	}
	return true, content
}

// toolOf maps a tool call to its action type and target; out is its result's text (an MCP
// result names its tool).
func (p *Parser) toolOf(name string, in map[string]any, cfg *config, out string) (event.ActionType, string) {
	switch name {
	case "bash":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "read_file":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "path", "file_path"))
	case "write_file":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "path", "file_path"))
	case "search_replace", "edit":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "file_path", "path"))
	case "grep":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" && dir != "." {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "glob":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" && dir != "." {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchFiles, t
	case "ls":
		return event.ActionSearchFiles, p.relPath(transcript.FirstNonEmpty(transcript.Arg(in, "path"), "."))
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "web_fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "task":
		return event.ActionSpawnSubagent, transcript.Arg(in, "task", "description", "prompt")
	case "todo":
		return event.ActionTodoUpdate, ""
	case "ask_user_question":
		if qs, ok := in["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				return event.ActionAskUser, transcript.Arg(q, "question")
			}
		}
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	for _, s := range cfg.MCPServers {
		for _, server := range []string{s.Alias, s.Name} {
			if server = strings.TrimSpace(server); server != "" {
				if tool, ok := strings.CutPrefix(name, server+"_"); ok && tool != "" {
					return event.ActionMCPCall, server + "/" + tool
				}
			}
		}
	}
	if tool := mcpResultTool(out); tool != "" {
		if server, ok := strings.CutSuffix(name, "_"+tool); ok && server != "" {
			return event.ActionMCPCall, server + "/" + tool
		}
		return event.ActionMCPCall, tool
	}
	return event.ActionUnknown, ""
}

// mcpResultTool is the tool an MCP result ("ok: ...\nserver: ...\ntool: ...") names, or "".
func mcpResultTool(out string) string {
	if !strings.HasPrefix(out, "ok: ") || !strings.Contains(out, "\nserver: ") {
		return ""
	}
	_, rest, ok := strings.Cut(out, "\ntool: ")
	if !ok {
		return ""
	}
	tool, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(tool)
}

// ---------------------------------------------------------------------------------------------
// Token usage

func (p *Parser) usage(m *meta, msgs []message, model, alias string, cfg *config, t time.Time) (event.Event, bool) {
	prompt, completion, cached := transcript.Count(m.Stats.Prompt), transcript.Count(m.Stats.Completion), transcript.Count(m.Stats.Cached)
	if parent := strings.TrimSpace(m.ParentSessionID); parent != "" && !p.legacy {
		base := p.parentBase(parent, [3]int64{prompt, completion, cached}, msgs)
		if !p.st.Based {
			// Not decided yet (no message to decide by): its figures may still hold the parent's,
			// which a usage under the session's id could never take back.
			return event.Event{}, false
		}
		if base != nil {
			prompt, completion, cached = prompt-base[0], completion-base[1], cached-base[2]
		}
	}
	cached = max(min(cached, prompt), 0)
	tok := event.Tokens{Input: max(prompt-cached, 0), Output: max(completion, 0), CacheRead: cached}
	table := p.prices()
	if _, _, known := table.Lookup(model); !known && alias != model {
		if _, _, known := table.Lookup(alias); known {
			model = alias
		}
	}
	u := transcript.PricedUsage(table, model, "", tok, p.clientCost(m, cfg, tok), t)
	if u == nil {
		return event.Event{}, false
	}
	ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", p.st.Session), t)
	ev.TokenUsage = u
	return ev, true
}

// clientCost is what Vibe's own prices (per million tokens: the stats', else the active model's
// entry) make of tok.
func (p *Parser) clientCost(m *meta, cfg *config, tok event.Tokens) float64 {
	in, out, cachedIn := price(m.Stats.InputPrice), price(m.Stats.OutputPrice), price(m.Stats.CachedInputPrice)
	if in == 0 && out == 0 {
		for _, mc := range cfg.Models {
			if strings.TrimSpace(mc.Alias) == strings.TrimSpace(cfg.ActiveModel) {
				in, out, cachedIn = price(mc.InputPrice), price(mc.OutputPrice), price(mc.CachedInputPrice)
				break
			}
		}
	}
	if cachedIn == 0 {
		cachedIn = in
	}
	return (float64(tok.Input)*in + float64(tok.CacheRead)*cachedIn + float64(tok.Output)*out) / 1e6
}

func price(raw json.RawMessage) float64 {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(raw)), `"`), 64)
	if err != nil || f != f || f < 0 || f > 1e4 {
		return 0
	}
	return f
}

// parentBase is what the parent of a continued session counted already, nil for a fork or when
// the parent cannot be found (see the package doc). The decision is kept in State once the
// session has messages to decide by.
func (p *Parser) parentBase(parent string, own [3]int64, msgs []message) *[3]int64 {
	if p.st.Based {
		return p.st.Base
	}
	if len(msgs) == 0 {
		return nil
	}
	p.st.Based = true
	pm, pmsgs, ok := findParent(p.dirs, filepath.Dir(filepath.Dir(p.src.Path)), parent)
	if !ok {
		return nil
	}
	base := [3]int64{transcript.Count(pm.Stats.Prompt), transcript.Count(pm.Stats.Completion), transcript.Count(pm.Stats.Cached)}
	fork := len(pmsgs) > 0 && msgs[0].MessageID != "" && msgs[0].MessageID == pmsgs[0].MessageID
	if fork || own[0] < base[0] || own[1] < base[1] || own[2] < base[2] {
		return nil
	}
	p.st.Base = &base
	return p.st.Base
}

// findParent finds the session id in the log directory dir: a directory named *_<id[:8]> whose
// meta.json names it; it returns its metadata and its first message.
func findParent(dirs *dirIndex, dir, id string) (meta, []message, bool) {
	short := id
	if len(short) > 8 {
		short = short[:8]
	}
	if dirs == nil {
		dirs = &dirIndex{}
	}
	matches := slices.Clone(dirs.candidates(dir, short))
	slices.Sort(matches)
	for _, d := range matches {
		data, err := os.ReadFile(filepath.Join(d, metaFile))
		if err != nil {
			continue
		}
		var m meta
		if json.Unmarshal(data, &m) != nil || m.SessionID != id {
			continue
		}
		pp := &Parser{src: transcript.Source{Path: filepath.Join(d, metaFile)}}
		first, _ := pp.readMessages(0, 1)
		return m, first, true
	}
	return meta{}, nil, false
}

// ---------------------------------------------------------------------------------------------
// Times

// noteTimes records when the messages not read before were written: the first message at the
// session's start, the last one read now at the meta.json's end time (a time never earlier than
// the anchors before it).
func (p *Parser) noteTimes(n int, start, end time.Time) {
	if len(p.st.Anchors) == 0 {
		p.st.Anchors = [][2]int64{{0, start.UnixMilli()}}
	}
	if int64(n) <= p.st.N {
		return
	}
	last := p.st.Anchors[len(p.st.Anchors)-1]
	ms := max(end.UnixMilli(), last[1])
	idx := int64(n - 1)
	if idx > last[0] {
		p.st.Anchors = append(p.st.Anchors, [2]int64{idx, ms})
		if k := len(p.st.Anchors); k > maxAnchors {
			p.st.Anchors = slices.Clone(p.st.Anchors[k-maxAnchors:])
		}
	}
	p.st.N = int64(n)
}

// timeOf is message i's time: between the anchors around it, in proportion to its index.
func (p *Parser) timeOf(i int) time.Time {
	a := p.st.Anchors
	idx := int64(i)
	ms := a[0][1]
	for k := range a {
		if a[k][0] > idx {
			if k > 0 {
				lo, hi := a[k-1], a[k]
				ms = lo[1] + int64(float64(hi[1]-lo[1])*float64(idx-lo[0])/float64(hi[0]-lo[0]))
			}
			return time.UnixMilli(ms).UTC()
		}
		ms = a[k][1]
	}
	return time.UnixMilli(ms).UTC()
}

// parseTime reads Vibe's ISO 8601 times: with a zone (Vibe 2, UTC), or without one (Vibe 1's
// local time).
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.Local)
	if err != nil || t.Year() <= 1970 || t.Year() >= 2262 {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// modTime is the document's modification time (now, when it cannot be read).
func (p *Parser) modTime() time.Time {
	if fi, err := os.Stat(p.src.Path); err == nil {
		return fi.ModTime().UTC()
	}
	return time.Now().UTC()
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, envelope

func (p *Parser) sessionEvent(st, model string, t time.Time) event.Event {
	key := "started"
	if st != event.SessionStarted {
		key = "model\x00" + model
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: st, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	if st == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

func (p *Parser) message(key string, record, part int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), key, strconv.Itoa(part)), t)
	m.Seq = int64(record)*64 + int64(min(part, maxPart))
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role, key string, record, part int, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(key, record, part, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

func inputHash(args string) string {
	if strings.TrimSpace(args) == "" {
		return ""
	}
	h := sha256.Sum256([]byte(args))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
