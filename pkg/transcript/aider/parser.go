package aider

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits of what an event and the state carry.
const (
	maxTarget = 500
	maxPrompt = 4 << 10  // of the prompt being read, in State
	maxReply  = 64 << 10 // of the reply being read, and of its message
)

// Reading modes: what the last lines were.
const (
	modeIdle   = 0 // a session's start, or aider's "> " output: a "#### " line is a prompt
	modePrompt = 1 // a prompt's "#### " lines
	modeReply  = 2 // the reply's text: a "#### " line is a heading of it
)

// counts number the events of each kind in a session, for their ids.
type counts struct {
	Prompt  int `json:"p,omitempty"`
	Usage   int `json:"u,omitempty"`
	Edit    int `json:"e,omitempty"`
	Command int `json:"c,omitempty"`
	Model   int `json:"m,omitempty"`
	Reply   int `json:"r,omitempty"`
}

// state is the parser's State (see the package doc).
type state struct {
	Start   string `json:"start,omitempty"` // the session's header time, as written
	Dup     int    `json:"dup,omitempty"`   // earlier sessions of the file with the same header time
	Session string `json:"sid,omitempty"`
	T0      int64  `json:"t0,omitempty"`    // the session's start, Unix ms
	Now     int64  `json:"now,omitempty"`   // the time events are given, Unix ms
	Input   int64  `json:"input,omitempty"` // the input history entry matched last, Unix µs
	Model   string `json:"model,omitempty"`
	Mode    int    `json:"mode,omitempty"`
	// Prompt is the prompt being read, from the line at PromptAt on. Another process, which has
	// not its text, reads it again from the file (see recallPrompt).
	Prompt   transcript.Memo `json:"prompt,omitempty"`
	PromptAt int64           `json:"prompt_at,omitempty"`
	// Reply is the assistant's reply being read, from the line at ReplyAt on; another process
	// reads it again from the file (see recallReply).
	Reply   transcript.Memo `json:"reply,omitempty"`
	ReplyAt int64           `json:"reply_at,omitempty"`
	End     int64           `json:"end,omitempty"` // where the last line ended
	CRLF    bool            `json:"crlf,omitempty"`
	N       counts          `json:"n"`
}

// Parser reads one chat history file.
type Parser struct {
	a       *Adapter
	src     transcript.Source
	dir     string
	project string
	input   string // the input history beside the file
	st      state
	stats   transcript.Stats
}

var _ transcript.Parser = (*Parser)(nil)

func newParser(a *Adapter, src transcript.Source, raw []byte) *Parser {
	dir := filepath.Dir(src.Path)
	p := &Parser{a: a, src: src, dir: dir, project: project.Root(dir), input: filepath.Join(dir, InputHistoryFile)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	if p.st.Mode == modePrompt && p.st.Prompt == "" {
		p.st.Prompt = transcript.Memo(p.recallPrompt())
	}
	if p.st.Mode == modeReply && p.st.Reply == "" {
		p.st.Reply = transcript.Memo(p.recallReply())
	}
	return p
}

// recallReply reads the reply being read again from the file: its lines from ReplyAt to End.
func (p *Parser) recallReply() string {
	n := p.st.End - p.st.ReplyAt
	if p.st.ReplyAt <= 0 || n <= 0 {
		return ""
	}
	f, err := os.Open(p.src.Path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, min(n, 4*maxReply))
	if _, err := io.ReadFull(io.NewSectionReader(f, p.st.ReplyAt, int64(len(b))), b); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " \t\r")
	}
	return transcript.CutBytes(strings.Join(lines, "\n"), maxReply)
}

// recallPrompt reads the prompt being read again from the file: its "#### " lines from PromptAt
// to End (the state keeps no text of it).
func (p *Parser) recallPrompt() string {
	n := p.st.End - p.st.PromptAt
	if p.st.PromptAt <= 0 || n <= 0 || n > 4*maxPrompt+(1<<20) {
		return ""
	}
	f, err := os.Open(p.src.Path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(f, p.st.PromptAt, n), b); err != nil {
		return ""
	}
	var prompt string
	for i, line := range strings.Split(strings.TrimRight(string(b), "\r\n"), "\n") {
		s := strings.TrimRight(line, " \t\r")
		if s != "####" && !strings.HasPrefix(s, "#### ") {
			return "" // not the prompt's lines: the file changed
		}
		text := strings.TrimPrefix(strings.TrimPrefix(s, "####"), " ")
		if i == 0 {
			prompt = transcript.CutBytes(text, maxPrompt)
		} else if len(prompt) < maxPrompt {
			prompt = transcript.CutBytes(prompt+"\n"+text, maxPrompt)
		}
	}
	return prompt
}

// State returns what the parser needs to resume, as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the lines read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

const headerPrefix = "# aider chat started at "

var (
	tokensRe = regexp.MustCompile(`^Tokens: ([\d.,]+[kKmM]?) sent(?:, ([\d.,]+[kKmM]?) cache write)?(?:, ([\d.,]+[kKmM]?) cache hit)?, ([\d.,]+[kKmM]?) received\.(?:\s+Cost: \$([\d.,]+) (?:message|request), \$([\d.,]+) session\.)?`)
	modelRe  = regexp.MustCompile(`^(?:Main model|Models?): (\S+) (?:with|using) `)
)

// Record reads one line of the file (see the package doc for the lines read).
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	if !utf8.Valid(line) {
		p.stats.Malformed++
		return nil, transcript.Malformed(Client, "line at offset %d is not UTF-8", off)
	}
	st := &p.st
	gap := off - st.End
	end := off + int64(len(line)) + 1
	if st.CRLF {
		end++
	}
	s := strings.TrimRight(string(line), " \t\r")
	var out []event.Event
	switch {
	case strings.HasPrefix(s, headerPrefix):
		out = append(p.flush(), p.flushReply()...)
		evs, err := p.header(off, strings.TrimSpace(s[len(headerPrefix):]))
		if err != nil {
			p.stats.Malformed++
			st.End = end
			return out, err
		}
		if st.CRLF {
			end = off + int64(len(line)) + 2
		}
		out = append(out, evs...)
	case st.Session == "":
		if s != "" {
			p.stats.CountUnknown("line before a session header")
		}
	case s == "####" || strings.HasPrefix(s, "#### "):
		text := strings.TrimPrefix(strings.TrimPrefix(s, "####"), " ")
		switch {
		case st.Mode == modeReply:
			p.addReply(s, gap) // a heading of the reply
		case st.Mode == modePrompt && gap <= 0:
			if len(st.Prompt) < maxPrompt {
				st.Prompt = transcript.Memo(transcript.CutBytes(string(st.Prompt)+"\n"+text, maxPrompt))
			}
		default:
			out = p.flush()
			if text == "<blank>" {
				st.Mode = modeIdle
				break
			}
			st.Mode, st.Prompt, st.PromptAt = modePrompt, transcript.Memo(transcript.CutBytes(text, maxPrompt)), off
		}
	case s == ">" || strings.HasPrefix(s, "> "):
		out = append(p.flush(), p.flushReply()...)
		st.Mode = modeIdle
		out = append(out, p.output(strings.TrimSpace(strings.TrimPrefix(s, ">")))...)
	case s != "":
		out = p.flush()
		if st.Mode != modeReply {
			st.Mode, st.Reply, st.ReplyAt = modeReply, "", off
			gap = 0
		}
		p.addReply(s, gap)
	default: // a blank line (internal/ingest hands none; the offsets tell them) ends a prompt
		out = p.flush()
		if st.Mode == modeReply {
			p.addReply("", gap)
		}
	}
	st.End = end
	p.stats.Events += int64(len(out))
	return out, nil
}

// header starts a session.
func (p *Parser) header(off int64, start string) ([]event.Event, error) {
	st := &p.st
	t, err := time.ParseInLocation("2006-01-02 15:04:05", start, time.Local)
	if err != nil || t.Year() <= 1970 || t.Year() >= 2262 {
		return nil, transcript.Malformed(Client, "session header with time %q", transcript.CutRunes(start, 40))
	}
	if st.Session == "" && st.End == 0 && off == 2 {
		st.CRLF = true // the file starts "\r\n# aider chat started at"
	}
	dup := 0
	if start == st.Start {
		dup = st.Dup + 1
	}
	*st = state{Start: start, Dup: dup, T0: t.UnixMilli(), Now: t.UnixMilli(), CRLF: st.CRLF,
		Session: event.ID(Client, "session", p.src.Path, start, strconv.Itoa(dup))}
	ev := p.newEvent(event.KindSession, event.ID(Client, "session", st.Session), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.dir, TranscriptPath: p.src.Path, StartedAt: t.UTC()}
	return []event.Event{ev}, nil
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.project, V: event.SchemaVersion}
}

func (p *Parser) now() time.Time { return time.UnixMilli(p.st.Now) }

func (p *Parser) action(id string, a *event.Action) event.Event {
	a.Transcript = p.src.Path
	a.Model = p.st.Model
	ev := p.newEvent(event.KindAction, id, p.now())
	ev.Action = a
	return ev
}

// flush ends the prompt being read: a user_prompt, or a run_command for /run, ! and /test.
func (p *Parser) flush() []event.Event {
	st := &p.st
	if st.Mode != modePrompt {
		return nil
	}
	st.Mode = modeIdle
	text := strings.TrimSpace(string(st.Prompt))
	at := st.PromptAt
	st.Prompt, st.PromptAt = "", 0
	if text == "" {
		return nil
	}
	p.date(text)
	if tool, cmd, ok := command(text); ok {
		st.N.Command++
		k := strconv.Itoa(st.N.Command)
		return []event.Event{p.action(event.ID(Client, "command", st.Session, k),
			&event.Action{Type: event.ActionRunCommand, Tool: tool, Target: clipTarget(cmd)}),
			p.message(event.RoleUser, "command", k, at, text)}
	}
	st.N.Prompt++
	k := strconv.Itoa(st.N.Prompt)
	return []event.Event{p.action(event.ID(Client, "prompt", st.Session, k), &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text)}),
		p.message(event.RoleUser, "prompt", k, at, text)}
}

// addReply adds a line of the reply, after the blank lines its gap from the last line tells.
func (p *Parser) addReply(s string, gap int64) {
	st := &p.st
	if len(st.Reply) >= maxReply {
		return
	}
	text := string(st.Reply)
	if text != "" {
		text += "\n"
		nl := int64(1)
		if st.CRLF {
			nl = 2
		}
		if gap > 0 {
			text += strings.Repeat("\n", int(min(gap/nl, 1000)))
		}
	}
	st.Reply = transcript.Memo(transcript.CutBytes(text+s, maxReply))
}

// flushReply ends the reply being read: an assistant message.
func (p *Parser) flushReply() []event.Event {
	st := &p.st
	if st.Mode != modeReply {
		return nil
	}
	st.Mode = modeIdle
	text, at := strings.TrimSpace(string(st.Reply)), st.ReplyAt
	st.Reply, st.ReplyAt = "", 0
	if text == "" {
		return nil
	}
	st.N.Reply++
	return []event.Event{p.message(event.RoleAssistant, "reply", strconv.Itoa(st.N.Reply), at, text)}
}

// message is a message of the session: id event.ID("aider", "message", session id, kind, k) for
// the k-th of its kind, Seq the offset of its first line × 64.
func (p *Parser) message(role, kind, k string, at int64, text string) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, "message", p.st.Session, kind, k), p.now())
	ev.Message = &event.Message{Role: role, Text: transcript.Clip(text, maxReply), Seq: max(at, 0) * 64, Model: p.st.Model}
	if role == event.RoleUser {
		ev.Message.Model = ""
	}
	return ev
}

// command reads "/run <cmd>", "!<cmd>" and "/test <cmd>".
func command(text string) (tool, cmd string, ok bool) {
	first, _, _ := strings.Cut(text, "\n")
	switch {
	case strings.HasPrefix(first, "!"):
		cmd = strings.TrimPrefix(text, "!")
		tool = "/run"
	case strings.HasPrefix(first, "/run ") || strings.HasPrefix(first, "/run\t"):
		cmd, tool = text[len("/run "):], "/run"
	case strings.HasPrefix(first, "/test ") || strings.HasPrefix(first, "/test\t"):
		cmd, tool = text[len("/test "):], "/test"
	default:
		return "", "", false
	}
	cmd = strings.TrimSpace(cmd)
	return tool, cmd, cmd != ""
}

// date gives the prompt the time of its input history entry, when it has one.
func (p *Parser) date(text string) {
	st := &p.st
	us, ok := p.a.inputs.lookup(p.input, st.T0*1000, st.Input, text)
	if !ok {
		return
	}
	st.Input = us
	if ms := us / 1000; ms > st.Now {
		st.Now = ms
	}
}

// output reads one of aider's own lines.
func (p *Parser) output(s string) []event.Event {
	st := &p.st
	switch {
	case strings.HasPrefix(s, "Tokens: "):
		if ev, ok := p.usage(s); ok {
			return []event.Event{ev}
		}
	case strings.HasPrefix(s, "Applied edit to "):
		path := strings.TrimSpace(s[len("Applied edit to "):])
		if path == "" {
			return nil
		}
		st.N.Edit++
		ok := true
		id := event.ID(Client, "edit", st.Session, strconv.Itoa(st.N.Edit))
		return []event.Event{p.action(id, &event.Action{Type: event.ActionEditFile, Tool: "edit", Target: clipTarget(path), Success: &ok})}
	case strings.HasPrefix(s, "Running "):
		cmd := strings.TrimSpace(s[len("Running "):])
		if cmd == "" {
			return nil
		}
		st.N.Command++
		id := event.ID(Client, "command", st.Session, strconv.Itoa(st.N.Command))
		return []event.Event{p.action(id, &event.Action{Type: event.ActionRunCommand, Tool: "shell", Target: clipTarget(cmd)})}
	default:
		if m := modelRe.FindStringSubmatch(s + " "); m != nil {
			model := transcript.CutRunes(m[1], 200)
			if model == st.Model {
				return nil
			}
			st.Model = model
			st.N.Model++
			id := event.ID(Client, "session", st.Session, "model", strconv.Itoa(st.N.Model))
			ev := p.newEvent(event.KindSession, id, p.now())
			ev.Session = &event.Session{Model: model, TranscriptPath: p.src.Path}
			return []event.Event{ev}
		}
	}
	return nil
}

// usage reads a Tokens line; ok is false when it does not parse.
func (p *Parser) usage(s string) (event.Event, bool) {
	m := tokensRe.FindStringSubmatch(s)
	if m == nil {
		p.stats.CountUnknown("unparsed Tokens line")
		return event.Event{}, false
	}
	sent, write, hit, recv := count(m[1]), count(m[2]), count(m[3]), count(m[4])
	tok := event.Tokens{Input: max(sent-write-hit, 0), Output: recv, CacheRead: hit, CacheCreation: write}
	if tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation == 0 {
		return event.Event{}, false
	}
	st := &p.st
	st.N.Usage++
	tu := &event.TokenUsage{Tokens: tok, Model: st.Model, Origin: "transcript", Reliability: event.ReliabilityApproximate}
	if cost, err := strconv.ParseFloat(strings.ReplaceAll(m[5], ",", ""), 64); m[5] != "" && err == nil && cost >= 0 && cost < 1e6 {
		tu.CostUSD = cost
	} else if usd, known := p.a.prices().CostAt(st.Model, tok, p.now()); st.Model != "" && known {
		tu.CostUSD = usd
	} else {
		tu.Reliability = event.ReliabilityUnknown
	}
	ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", st.Session, strconv.Itoa(st.N.Usage)), p.now())
	ev.TokenUsage = tu
	return ev, true
}

// count reads one of aider's token figures: "145", "2,345", "2.3k", "12k", "1.2M".
func count(s string) int64 {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	if s == "" {
		return 0
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1e3, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1e6, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*mult > 1e12 {
		return 0
	}
	return int64(f*mult + 0.5)
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }
