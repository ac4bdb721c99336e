package cline

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source every event carries.
const Component = "observer-watch"

// Limits on what leaves the parser.
const (
	maxTarget = 500
	maxError  = 2 << 10
	maxOutput = 8 << 10
	maxSeen   = 1024
	maxModels = 16
)

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Models  []string `json:"models,omitempty"`
	Seen    []string `json:"seen,omitempty"` // fingerprints of the events emitted lately
}

// Parser reads one document: a CLI session's messages or an extension task's ui messages.
type Parser struct {
	client  string
	vscode  bool
	src     transcript.Source
	prices  func() *pricing.Table
	st      state
	emitted transcript.Emitted
	stats   transcript.Stats
}

func newParser(client string, vscode bool, src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{client: client, vscode: vscode, src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("cline parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

func malformed(format string, args ...any) error {
	return transcript.Malformed("", format, args...)
}

func (p *Parser) unknown(kind string) {
	if p.stats.Unknown == nil {
		p.stats.Unknown = map[string]int64{}
	}
	p.stats.Unknown[kind]++
}

// Record reads the whole document. A document that does not parse emits nothing and leaves the
// state as it was.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	p.stats.Lines++
	defer func() {
		if err != nil {
			p.stats.Malformed++
		}
		p.stats.Events += int64(len(evs))
	}()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, malformed("document is empty (being written?)")
	}
	if !utf8.Valid(raw) {
		return nil, malformed("document is not UTF-8")
	}
	saved := p.st
	saved.Models = slices.Clone(p.st.Models)
	if p.vscode {
		evs, err = p.uiMessages(raw)
	} else {
		evs, err = p.cliDocument(raw)
	}
	if err != nil {
		p.st = saved
		return nil, err
	}
	return p.emitted.Keep(evs, &p.st.Seen, maxSeen), nil
}

// ---------------------------------------------------------------------------------------------
// Cline CLI

type cliDoc struct {
	SessionID    string       `json:"sessionId"`
	Messages     []cliMessage `json:"messages"`
	SystemPrompt string       `json:"system_prompt"`
}

type cliMessage struct {
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Ts        json.RawMessage `json:"ts"`
	Content   json.RawMessage `json:"content"`
	ModelInfo struct {
		ID       string `json:"id"`
		Provider string `json:"provider"`
	} `json:"modelInfo"`
	Metrics *cliMetrics `json:"metrics"`
}

type cliMetrics struct {
	InputTokens      flexInt   `json:"inputTokens"`
	OutputTokens     flexInt   `json:"outputTokens"`
	CacheReadTokens  flexInt   `json:"cacheReadTokens"`
	CacheWriteTokens flexInt   `json:"cacheWriteTokens"`
	Cost             flexFloat `json:"cost"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// cliMeta is the session's metadata file, <id>.json beside the messages.
type cliMeta struct {
	SessionID     string `json:"session_id"`
	StartedAt     string `json:"started_at"`
	Cwd           string `json:"cwd"`
	WorkspaceRoot string `json:"workspace_root"`
	Model         string `json:"model"`
	Prompt        string `json:"prompt"`
	Metadata      struct {
		Title string `json:"title"`
	} `json:"metadata"`
}

// markup is a tag with or without attributes (<user_input mode="act">, </user_input>).
var markup = regexp.MustCompile(`</?[A-Za-z][\w-]*(\s[^<>]*)?>`)

// title returns the session's own title from its metadata: metadata.title when it is not the
// first line of the prompt, which is what the CLI writes there unless the session was given a
// title (imported from another tool, forked).
func (m *cliMeta) title() (string, bool) {
	title, ok := event.CleanTitle(m.Metadata.Title)
	if !ok {
		return "", false
	}
	for _, line := range strings.Split(markup.ReplaceAllString(m.Prompt, " "), "\n") {
		if first, ok := event.CleanTitle(line); ok {
			return title, first != title
		}
	}
	return title, true
}

func (p *Parser) readMeta() (m cliMeta) {
	path, ok := strings.CutSuffix(p.src.Path, ".messages.json")
	if !ok {
		return m
	}
	b, err := os.ReadFile(path + ".json")
	if err == nil && len(b) < 1<<20 {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func (p *Parser) cliDocument(raw []byte) ([]event.Event, error) {
	if raw[0] != '{' {
		return nil, malformed("document is not a JSON object")
	}
	var d cliDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, malformed("document does not parse (written while read, or damaged): %v", err)
	}
	if p.st.Session == "" {
		p.st.Session = firstNonEmpty(d.SessionID, p.src.SessionID, strings.TrimSuffix(filepath.Base(p.src.Path), ".messages.json"))
	}
	var evs []event.Event
	if !p.st.Started {
		meta := p.readMeta()
		cwd := firstNonEmpty(meta.Cwd, meta.WorkspaceRoot, workingDir(d.SystemPrompt))
		p.setCwd(cwd)
		start, ok := transcript.ParseTime(meta.StartedAt)
		if !ok && len(d.Messages) > 0 {
			start, ok = msTime(d.Messages[0].Ts)
		}
		if ok {
			p.st.Started = true
			evs = append(evs, p.sessionEvent(event.SessionStarted, "", start))
			if title, ok := meta.title(); ok {
				ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.st.Session, "title", title), start)
				ev.Session = &event.Session{Title: title, TranscriptPath: p.src.Path}
				evs = append(evs, ev)
			}
		}
	}
	// Results first, so each call carries its outcome.
	results := map[string]*block{}
	blocks := make([][]block, len(d.Messages))
	for i := range d.Messages {
		blocks[i] = contentBlocks(d.Messages[i].Content)
		for j := range blocks[i] {
			if b := &blocks[i][j]; b.Type == "tool_result" && b.ToolUseID != "" {
				results[b.ToolUseID] = b
			}
		}
	}
	for i := range d.Messages {
		m := &d.Messages[i]
		t, ok := msTime(m.Ts)
		if !ok {
			continue
		}
		key := firstNonEmpty(m.ID, fmt.Sprint(i))
		switch m.Role {
		case "user":
			if prompt := userPrompt(blocks[i]); prompt != "" {
				ev := p.newEvent(event.KindAction, p.actionID(key), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: m.ID,
					Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleUser, key, i, 0, t, prompt, m.ID, "")...)
			}
		case "assistant":
			model := m.ModelInfo.ID
			evs = append(evs, p.modelEvent(model, t)...)
			if m.Metrics != nil {
				x := m.Metrics
				tok := netTokens(int64(x.InputTokens), int64(x.OutputTokens), int64(x.CacheReadTokens), int64(x.CacheWriteTokens), false)
				if ev, ok := p.usage(event.ID(p.client, "usage", p.st.Session, m.ID), m.ID, model, tok, float64(x.Cost), t); ok {
					evs = append(evs, ev)
				}
			}
			for j, b := range blocks[i] {
				switch b.Type {
				case "text":
					evs = append(evs, p.textMessage(event.RoleAssistant, key, i, j, t, b.Text, m.ID, model)...)
				case "thinking":
					evs = append(evs, p.textMessage(event.RoleThinking, key, i, j, t, b.Thinking, m.ID, model)...)
				case "tool_use":
					if b.ID != "" {
						call := p.cliCall(m, &b, results[b.ID], t)
						evs = append(evs, call, p.callMessage(call.Action, key, i, j, t))
					}
				}
			}
		default:
			p.unknown("role " + m.Role)
		}
	}
	return evs, nil
}

func (p *Parser) cliCall(m *cliMessage, b *block, res *block, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := p.toolOf(b.Name, in)
	a := &event.Action{Type: ty, Tool: b.Name, Target: clipTarget(target), ToolUseID: b.ID, MessageID: m.ID,
		Model: m.ModelInfo.ID, InputHash: inputHash(b.Input), Transcript: p.src.Path}
	if res != nil {
		out, errText, failed := resultText(res.Content)
		ok := !res.IsError && !failed
		a.Success = &ok
		if !ok {
			a.Error = clipError(firstNonEmpty(errText, out))
		}
		a.OutputSize = int64(len(out))
		a.Output = clipOutput(out)
	}
	ev := p.newEvent(event.KindAction, p.actionID(b.ID), t)
	ev.Action = a
	return ev
}

// userPrompt is what the user typed in a user message: the text inside <user_input>, else plain
// text that is not a tool result or a bracketed system insert.
func userPrompt(bs []block) string {
	var parts []string
	for _, b := range bs {
		if b.Type == "tool_result" {
			return ""
		}
		if b.Type != "text" {
			continue
		}
		s := strings.TrimSpace(b.Text)
		if i := strings.Index(s, "<user_input"); i >= 0 {
			rest := s[i:]
			if j := strings.IndexByte(rest, '>'); j >= 0 {
				rest = rest[j+1:]
			}
			rest, _, _ = strings.Cut(rest, "</user_input>")
			parts = append(parts, strings.TrimSpace(rest))
		} else if s != "" && !strings.HasPrefix(s, "<") {
			parts = append(parts, s)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// contentBlocks reads a message's content: a string is one text block.
func contentBlocks(raw json.RawMessage) []block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return []block{{Type: "text", Text: s}}
	}
	if raw[0] != '[' {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]block, 0, len(items))
	for _, it := range items {
		var b block
		if json.Unmarshal(it, &b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// resultText flattens a tool_result's content: a string, text blocks, or the CLI's result items
// {query, result, success, error}. failed is true when an item says success false.
func resultText(raw json.RawMessage) (out, errText string, failed bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", "", false
	}
	switch raw[0] {
	case '"':
		_ = json.Unmarshal(raw, &out)
		return out, "", false
	case '[':
		var items []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Result  json.RawMessage `json:"result"`
			Error   string          `json:"error"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(raw, &items) != nil {
			return string(raw), "", false
		}
		var outs, errs []string
		for _, it := range items {
			switch {
			case it.Text != "":
				outs = append(outs, it.Text)
			case len(it.Result) > 0:
				var s string
				if json.Unmarshal(it.Result, &s) != nil {
					s = string(it.Result)
				}
				if s != "" {
					outs = append(outs, s)
				}
			}
			if it.Error != "" {
				errs = append(errs, it.Error)
			}
			if it.Success != nil && !*it.Success {
				failed = true
			}
		}
		return strings.Join(outs, "\n"), strings.Join(errs, "\n"), failed
	}
	return string(raw), "", false
}

// workingDir reads the "Working Directory: <dir>" line of the CLI's system prompt.
func workingDir(sys string) string {
	_, rest, ok := strings.Cut(sys, "Working Directory: ")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line)
}

// ---------------------------------------------------------------------------------------------
// Usage

// netTokens converts a client's figures into observer's buckets (see the package doc): when
// included, input holds the cache reads and writes.
func netTokens(in, out, read, write int64, anthropic bool) event.Tokens {
	in, out, read, write = max(in, 0), max(out, 0), max(read, 0), max(write, 0)
	if !anthropic && in >= read+write {
		in -= read + write
	}
	return event.Tokens{Input: in, Output: out, CacheRead: read, CacheCreation: write}
}

func (p *Parser) usage(id, msgID, model string, tok event.Tokens, clientCost float64, t time.Time) (event.Event, bool) {
	u := transcript.PricedUsage(p.prices(), model, msgID, tok, clientCost, t)
	if u == nil {
		return event.Event{}, false
	}
	ev := p.newEvent(event.KindTokenUsage, id, t)
	ev.TokenUsage = u
	return ev, true
}

// ---------------------------------------------------------------------------------------------
// Sessions

func (p *Parser) setCwd(cwd string) {
	if cwd == "" || p.st.Cwd != "" {
		return
	}
	p.st.Cwd = filepath.Clean(cwd)
	if filepath.IsAbs(p.st.Cwd) {
		p.st.Project = project.Root(p.st.Cwd)
	}
}

func (p *Parser) sessionEvent(state, model string, t time.Time) event.Event {
	key := "started"
	if state != event.SessionStarted {
		key = "model\x00" + model
	}
	ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: state, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	if state == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

// modelEvent reports a model the session had not reported yet.
func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	return []event.Event{p.sessionEvent(event.SessionActive, model, t)}
}

// ---------------------------------------------------------------------------------------------
// Emitting only what changed

// ---------------------------------------------------------------------------------------------
// Envelope and helpers

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: p.client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) actionID(key string) string {
	return event.ID(p.client, string(event.KindAction), p.st.Session, key)
}

// msTime reads unix milliseconds (a number or a numeric string).
func msTime(raw json.RawMessage) (time.Time, bool) {
	var n flexInt
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return time.Time{}, false
	}
	ms := int64(n)
	if ms <= 31536000000 || ms >= 9e12 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// flexInt reads a count written as a number (integral or not) or a numeric string; anything else,
// and a negative or absurd value, is 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	*n = flexInt(transcript.Count(b))
	return nil
}

// flexFloat reads a cost; anything that is not a finite non-negative number is 0.
type flexFloat float64

func (n *flexFloat) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f != f || f < 0 || f > 1e9 {
		*n = 0
		return nil
	}
	*n = flexFloat(f)
	return nil
}

func inputHash(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	h := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

// relPath makes a file path relative to the project when it lies inside it.
func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }
