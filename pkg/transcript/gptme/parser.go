package gptme

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxItem    = 63
	maxTools   = 32 // tool calls read from one message
)

// localZone is the zone a naive timestamp is read in (a variable for the tests).
var localZone = time.Local

// state is what a parser keeps between lines: JSON, small, no text of the transcript.
type state struct {
	Started     bool   `json:"started,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	Project     string `json:"project,omitempty"`
	Model       string `json:"model,omitempty"`
	Last        int64  `json:"last,omitempty"`         // unix ns of the last message's time
	Pending     string `json:"pending,omitempty"`      // action id of the markdown call awaiting its result
	PendingTool string `json:"pending_tool,omitempty"` // its tool
}

// Parser reads one conversation.jsonl.
type Parser struct {
	src     transcript.Source
	session string
	prices  func() *pricing.Table
	st      state
	stats   transcript.Stats
}

func newParser(src transcript.Source, raw []byte, prices func() *pricing.Table) (*Parser, error) {
	if prices == nil {
		prices = pricing.Default
	}
	p := &Parser{src: src, prices: prices, session: strings.TrimSpace(src.SessionID)}
	if p.session == "" {
		p.session = filepath.Base(filepath.Dir(src.Path))
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p.st); err != nil {
			return nil, fmt.Errorf("gptme parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// message is one line: Message.to_dict().
type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Timestamp string          `json:"timestamp"`
	Hide      bool            `json:"hide"`
	CallID    string          `json:"call_id"`
	Metadata  *metadata       `json:"metadata"`
}

type metadata struct {
	Model string `json:"model"`
	Cost  number `json:"cost"`
	Usage *usage `json:"usage"`
	usage        // the token counts older releases kept at the top of metadata
}

type usage struct {
	InputTokens         count `json:"input_tokens"`
	OutputTokens        count `json:"output_tokens"`
	CacheReadTokens     count `json:"cache_read_tokens"`
	CacheCreationTokens count `json:"cache_creation_tokens"`
	ReasoningTokens     count `json:"reasoning_tokens"`
}

func (u *usage) tokens() event.Tokens {
	out := int64(u.OutputTokens)
	return event.Tokens{Input: int64(u.InputTokens), Output: out, CacheRead: int64(u.CacheReadTokens),
		CacheCreation: int64(u.CacheCreationTokens), Reasoning: min(int64(u.ReasoningTokens), out)}
}

// count reads a token count (transcript.Count: a number or numeric string; else 0).
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	*c = count(transcript.Count(b))
	return nil
}

// number reads a cost: a finite, non-negative number; else 0.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(b)), `"`), 64)
	if err != nil || f != f || f < 0 || f > 1e9 {
		f = 0
	}
	*n = number(f)
	return nil
}

// Record reads one line.
func (p *Parser) Record(off int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, transcript.Malformed(Client, "line at offset %d is not UTF-8", off)
	}
	var m message
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return nil, transcript.Malformed(Client, "line at offset %d is not a JSON message", off)
	}
	at, ok := parseTimestamp(m.Timestamp)
	if !ok {
		if p.st.Last == 0 {
			p.stats.CountUnknown("message without time")
			return nil, nil
		}
		at = time.Unix(0, p.st.Last).UTC()
	}
	p.st.Last = at.UnixNano()
	r := &reader{p: p, at: at, off: off, msg: &m, content: contentText(m.Content)}
	if !p.st.Started {
		r.start()
	}
	r.key = m.Timestamp + ":" + shortHash(m.Role+"\x00"+r.content)
	switch m.Role {
	case "user":
		p.st.Pending, p.st.PendingTool = "", ""
		r.user()
	case "assistant":
		p.st.Pending, p.st.PendingTool = "", ""
		r.assistant()
	case "system":
		r.system()
	default:
		p.stats.CountUnknown("role " + transcript.CutBytes(m.Role, 32))
	}
	return r.evs, nil
}

// reader reads one message.
type reader struct {
	p       *Parser
	at      time.Time
	off     int64
	msg     *message
	content string
	key     string
	evs     []event.Event
}

// start reads the conversation's config.toml and workspace link, and emits the session's start.
func (r *reader) start() {
	st := &r.p.st
	st.Started = true
	dir := filepath.Dir(r.p.src.Path)
	var cfg struct {
		Chat struct {
			Name      string `toml:"name"`
			Model     string `toml:"model"`
			Workspace string `toml:"workspace"`
		} `toml:"chat"`
	}
	if data, err := readSmall(filepath.Join(dir, "config.toml")); err == nil {
		_ = toml.Unmarshal(data, &cfg)
	}
	cwd := ""
	link := filepath.Join(dir, "workspace")
	if target, err := os.Readlink(link); err == nil {
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		cwd = target
	} else if fi, err := os.Stat(link); err == nil && fi.IsDir() {
		cwd = link
	}
	if cwd == "" {
		if w := strings.TrimSpace(cfg.Chat.Workspace); w != "" && w != "@log" {
			cwd = transcript.ExpandHome(w)
		}
	}
	if cwd = strings.TrimSpace(cwd); cwd != "" && len(cwd) < 4096 && utf8.ValidString(cwd) && filepath.IsAbs(cwd) {
		st.Cwd = filepath.Clean(cwd)
		st.Project = project.Root(st.Cwd)
	}
	st.Model = transcript.CutRunes(strings.TrimSpace(cfg.Chat.Model), 200)
	ev := r.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), r.p.session, "started"))
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: st.Cwd, TranscriptPath: r.p.src.Path, Model: st.Model, StartedAt: r.at}
	r.evs = append(r.evs, ev)
	if name := strings.TrimSpace(cfg.Chat.Name); name != "" && name != r.p.session {
		t := r.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), r.p.session, "title", name))
		t.Session = &event.Session{State: event.SessionActive, Title: transcript.Clip(name, maxTarget), TitleByUser: true,
			TranscriptPath: r.p.src.Path}
		r.evs = append(r.evs, t)
	}
}

func readSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > 1<<20 {
		return nil, fmt.Errorf("%s: too large", path)
	}
	return os.ReadFile(path)
}

func (r *reader) user() {
	text := strings.TrimSpace(r.content)
	if r.msg.Hide || text == "" {
		return
	}
	a := r.newEvent(event.KindAction, event.ID(Client, "prompt", r.p.session, r.key))
	a.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: r.key,
		Transcript: r.p.src.Path}
	r.evs = append(r.evs, a)
	r.text(0, event.RoleUser, text, "")
}

// thinkBlock matches a reasoning block in an assistant's text.
var thinkBlock = regexp.MustCompile(`(?s)<(think|thinking)>(.*?)</(?:think|thinking)>`)

func (r *reader) assistant() {
	model := r.p.st.Model
	if md := r.msg.Metadata; md != nil && strings.TrimSpace(md.Model) != "" {
		model = transcript.CutRunes(strings.TrimSpace(md.Model), 200)
	}
	item := 0
	for _, m := range thinkBlock.FindAllStringSubmatch(r.content, 8) {
		r.text(item, event.RoleThinking, m[2], model)
		item++
	}
	text := thinkBlock.ReplaceAllString(r.content, "")
	r.text(8, event.RoleAssistant, text, model)
	for i, tu := range toolUses(text) {
		id := event.ID(Client, string(event.KindAction), r.p.session, r.key, strconv.Itoa(i))
		if tu.callID != "" {
			id = event.ID(Client, string(event.KindAction), r.p.session, tu.callID)
		}
		ty, target := r.toolOf(tu)
		a := r.newEvent(event.KindAction, id)
		a.Action = &event.Action{Type: ty, Tool: transcript.CutRunes(tu.name, 200), Target: transcript.ClipTarget(target, maxTarget),
			ToolUseID: transcript.CutBytes(tu.callID, 200), MessageID: r.key, Model: model, InputHash: hashOf(tu.raw), Transcript: r.p.src.Path}
		r.evs = append(r.evs, a)
		r.message(9+i, event.Message{Role: event.RoleToolCall, Text: a.Action.Target, Tool: a.Action.Tool, ToolUseID: a.Action.ToolUseID,
			MessageID: r.key, Model: model})
		if tu.callID == "" {
			r.p.st.Pending, r.p.st.PendingTool = id, transcript.CutRunes(tu.name, 64)
		}
	}
	r.usage(model)
}

// system reads a system message: a tool call's result, or nothing.
func (r *reader) system() {
	id, tool := "", ""
	switch {
	case r.msg.CallID != "":
		id = event.ID(Client, string(event.KindAction), r.p.session, r.msg.CallID)
	case r.p.st.Pending != "":
		id, tool = r.p.st.Pending, r.p.st.PendingTool
		r.p.st.Pending, r.p.st.PendingTool = "", ""
	default:
		return
	}
	ok, errText := outcome(r.content)
	ty := event.ActionUnknown
	if tool != "" {
		ty, _ = r.toolOf(toolUse{name: tool})
	}
	a := &event.Action{Type: ty, Tool: tool, ToolUseID: transcript.CutBytes(r.msg.CallID, 200), Success: &ok, Transcript: r.p.src.Path,
		OutputSize: int64(len(r.content)), Output: transcript.Clip(r.content, maxOutput)}
	if !ok {
		a.Error = transcript.Clip(strings.TrimSpace(errText), maxError)
	}
	ev := r.newEvent(event.KindAction, id)
	ev.Action = a
	r.evs = append(r.evs, ev)
}

// outcome reads a tool result (see the package doc).
func outcome(text string) (bool, string) {
	first := ""
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			first = l
			break
		}
	}
	lower := strings.ToLower(first)
	switch {
	case strings.HasPrefix(lower, "error"), strings.HasPrefix(lower, "failed"),
		strings.HasPrefix(first, "Command timed out"), strings.HasPrefix(first, "Command interrupted"),
		strings.HasPrefix(first, "Command denied"):
		return false, text
	}
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "Return code: "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n != 0 {
				return false, text
			}
		}
	}
	return true, ""
}

func (r *reader) usage(model string) {
	md := r.msg.Metadata
	if md == nil {
		return
	}
	u := md.Usage
	if u == nil {
		u = &md.usage
	}
	tu := transcript.PricedUsage(r.p.prices(), model, r.key, u.tokens(), float64(md.Cost), r.at)
	if tu == nil {
		return
	}
	// Keyed by the message's time and role, not its content: an /edit of the message's text
	// keeps its metadata, and the request it stands for was made once.
	id := event.ID(Client, "usage", r.p.session, r.key)
	if ts := strings.TrimSpace(r.msg.Timestamp); ts != "" {
		id = event.ID(Client, "usage", r.p.session, ts, r.msg.Role)
	}
	ev := r.newEvent(event.KindTokenUsage, id)
	ev.TokenUsage = tu
	r.evs = append(r.evs, ev)
}

func (r *reader) text(item int, role, text, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	r.message(item, event.Message{Role: role, Text: text, MessageID: r.key, Model: model})
}

func (r *reader) message(item int, m event.Message) {
	ev := r.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), r.p.session, r.key, strconv.Itoa(item)))
	m.Seq = r.off*64 + int64(min(item, maxItem))
	ev.Message = &m
	r.evs = append(r.evs, ev)
}

func (r *reader) newEvent(kind event.Kind, id string) event.Event {
	return event.Event{ID: id, Kind: kind, Time: r.at, Source: Component, Client: Client, SessionID: r.p.session,
		Project: r.p.st.Project, V: event.SchemaVersion}
}

func (r *reader) relPath(file string) string {
	return transcript.RelPath(transcript.ExpandHome(file), r.p.st.Cwd, r.p.st.Project)
}

// parseTimestamp reads a message's timestamp: naive ISO 8601 in the local zone (Python's
// datetime.now().isoformat()), or RFC 3339 with a zone.
func parseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999-07:00"} {
		if t, err := time.ParseInLocation(layout, s, localZone); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// contentText is a message's content: a string, or the text of a list of parts.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
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
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func hashOf(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return shortHash(s)
}
