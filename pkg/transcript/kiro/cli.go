package kiro

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// The v2 store: <root>/sessions/cli/<id>.jsonl (the log) and <id>.json (the session's metadata).

// cliMeta is a v2 session's <id>.json (chat_cli_v2's session metadata, SessionStateV1 inside).
type cliMeta struct {
	SessionID    string          `json:"session_id"`
	Cwd          string          `json:"cwd"`
	CreatedAt    json.RawMessage `json:"created_at"`
	UpdatedAt    json.RawMessage `json:"updated_at"`
	Title        string          `json:"title"`
	Parent       string          `json:"parent_session_id"`
	SessionState struct {
		ConversationMetadata struct {
			UserTurnMetadatas []turnMeta `json:"user_turn_metadatas"`
		} `json:"conversation_metadata"`
		RTSModelState struct {
			ModelInfo struct {
				ModelID string `json:"model_id"`
			} `json:"model_info"`
		} `json:"rts_model_state"`
	} `json:"session_state"`
}

// turnMeta is one user turn's metadata: the usage of every model request of the turn, summed.
type turnMeta struct {
	MessageIDs   []*string       `json:"message_ids"`
	EndTimestamp json.RawMessage `json:"end_timestamp"`
	Model        string          `json:"model"`
	Input        json.RawMessage `json:"input_token_count"`
	Output       json.RawMessage `json:"output_token_count"`
	CacheRead    json.RawMessage `json:"cache_read_input_token_count"`
	CacheWrite   json.RawMessage `json:"cache_write_input_token_count"`
}

func (m *cliMeta) model() string {
	return strings.TrimSpace(m.SessionState.RTSModelState.ModelInfo.ModelID)
}

// ---------------------------------------------------------------------------------------------
// The log: <id>.jsonl

// cliLogParser reads a v2 session's <id>.jsonl.
type cliLogParser struct {
	lineParser
}

func newCLILogParser(src transcript.Source, st []byte) (*cliLogParser, error) {
	p := &cliLogParser{lineParser: lineParser{src: src}}
	if err := p.load(st); err != nil {
		return nil, err
	}
	if p.sc.session == "" {
		p.sc.session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
	}
	p.st.Started = true // the session's events come from its <id>.json
	return p, nil
}

// readMeta reads <id>.json once (a few tries while it is missing): the parent, the directory,
// the creation time and the model.
func (p *cliLogParser) readMeta() {
	if p.st.Meta > 0 || p.st.Meta <= -maxMetaTries {
		return
	}
	data, err := os.ReadFile(strings.TrimSuffix(p.src.Path, ".jsonl") + ".json")
	var m cliMeta
	if err != nil || json.Unmarshal(data, &m) != nil {
		p.st.Meta--
		return
	}
	p.st.Meta = 1
	if parent := strings.TrimSpace(m.Parent); parent != "" && parent != p.sc.session && p.st.Last == 0 {
		p.st.Parent, p.sc.agent, p.sc.session = parent, p.sc.session, parent
	}
	p.sc.setCwd(m.Cwd)
	if t, ok := anyTime(m.CreatedAt); ok {
		p.st.Created = t.UnixMilli()
	}
	p.st.Model = m.model()
}

type cliLine struct {
	Version string          `json:"version"`
	Kind    string          `json:"kind"`
	Data    json.RawMessage `json:"data"`
}

type cliData struct {
	MessageID string     `json:"message_id"`
	Content   []cliBlock `json:"content"`
	Meta      *struct {
		Timestamp json.RawMessage `json:"timestamp"`
	} `json:"meta"`
	Summary string `json:"summary"`
}

// cliBlock is a content block: {kind: text|thinking|toolUse|toolResult|image, data}.
type cliBlock struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type cliToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type cliToolResult struct {
	ToolUseID string          `json:"toolUseId"`
	Content   json.RawMessage `json:"content"`
	Status    string          `json:"status"`
}

type cliThinking struct {
	ModelID string `json:"modelId"`
	Text    string `json:"text"`
}

// cliKnown are the log's entry kinds that make no event.
var cliKnown = map[string]bool{"ResetTo": true, "CancelledPrompt": true, "Clear": true}

// Record reads one line of the log.
func (p *cliLogParser) Record(off int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	var l cliLine
	if err := decodeLine(p.src.Path, off, line, &l); err != nil {
		return nil, err
	}
	if cliKnown[l.Kind] {
		return nil, nil
	}
	var d cliData
	if err := json.Unmarshal(l.Data, &d); err != nil && len(bytes.TrimSpace(l.Data)) > 0 {
		return nil, transcript.Malformed(Client, "%s: %s at %d: %v", p.src.Path, l.Kind, off, err)
	}
	p.readMeta()
	var lt time.Time
	var hasTime bool
	if d.Meta != nil {
		lt, hasTime = anyTime(d.Meta.Timestamp)
	}
	t, ok := p.at(lt, hasTime)
	if !ok {
		if t, ok = p.modTime(); !ok {
			return nil, nil
		}
	}
	msgID := keyOf(d.MessageID)
	key := msgID
	if key == "" {
		key = "@" + itoa(off)
	}
	seq := off * 64
	switch l.Kind {
	case "Prompt":
		var parts []string
		for _, b := range d.Content {
			if b.Kind == "text" {
				var s string
				if json.Unmarshal(b.Data, &s) == nil {
					parts = append(parts, s)
				}
			}
		}
		evs = p.sc.prompt(key, seq, t, strings.Join(parts, "\n"), msgID, p.sc.agent != "" && p.firstPrompt())
	case "AssistantMessage":
		model := p.st.Model
		for i, b := range d.Content {
			if b.Kind != "thinking" {
				continue
			}
			var th cliThinking
			if json.Unmarshal(b.Data, &th) == nil {
				model = transcript.FirstNonEmpty(th.ModelID, model)
				evs = append(evs, p.sc.textMessage(event.RoleThinking, key, min(i, maxPart), seq+int64(min(i, maxPart)), t, th.Text, msgID, model)...)
			}
		}
		for i, b := range d.Content {
			part := min(i, maxPart)
			switch b.Kind {
			case "text":
				var s string
				if json.Unmarshal(b.Data, &s) == nil {
					evs = append(evs, p.sc.textMessage(event.RoleAssistant, key, part, seq+int64(part), t, s, msgID, model)...)
				}
			case "toolUse":
				var tu cliToolUse
				if json.Unmarshal(b.Data, &tu) != nil || tu.ToolUseID == "" {
					continue
				}
				c := &call{ID: tu.ToolUseID, Name: tu.Name, Input: tu.Input, Msg: msgID, Model: model}
				ev := p.sc.action(c, t)
				p.st.Pending.Renew(pending{ID: c.ID, Type: ev.Action.Type, Tool: c.Name,
					Target: transcript.Memo(ev.Action.Target), Msg: c.Msg, Model: c.Model}, maxPending)
				evs = append(evs, ev, p.sc.callMessage(c, key, part, seq+int64(part), t, ev.Action.Target))
			}
		}
	case "ToolResults":
		for _, b := range d.Content {
			if b.Kind != "toolResult" {
				continue
			}
			var tr cliToolResult
			if json.Unmarshal(b.Data, &tr) != nil || tr.ToolUseID == "" {
				continue
			}
			out, failed, stderr := resultText(tr.Content)
			r := &result{Known: true, OK: !failed && !strings.EqualFold(tr.Status, "error"), Output: out, Size: int64(len(out))}
			if !r.OK {
				r.Error = transcript.FirstNonEmpty(stderr, out)
			}
			evs = append(evs, p.sc.resultEvent(&p.st.Pending, tr.ToolUseID, "", r, t))
		}
	case "Compaction":
		evs = p.sc.summary(d.Summary, seq, t)
	default:
		p.stats.CountUnknown("kind " + l.Kind)
	}
	return evs, nil
}

// firstPrompt reports whether no prompt was read before (a subagent's first is its task).
func (p *cliLogParser) firstPrompt() bool {
	first := !p.st.Prompted
	p.st.Prompted = true
	return first
}

// modTime is the log's modification time, for a line read before any time is known.
func (p *cliLogParser) modTime() (time.Time, bool) {
	fi, err := os.Stat(p.src.Path)
	if err != nil {
		return time.Time{}, false
	}
	p.st.Last = fi.ModTime().UnixMilli()
	return fi.ModTime().UTC(), true
}

// ---------------------------------------------------------------------------------------------
// The metadata: <id>.json, a document rewritten whole

// cliMetaState is what the metadata reader keeps: the fingerprints of the events it emitted.
type cliMetaState struct {
	Seen []string `json:"seen,omitempty"`
}

// cliMetaParser reads a v2 session's <id>.json: the session's start, title and model, and the
// token usage of each user turn.
type cliMetaParser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	st      cliMetaState
	emitted transcript.Emitted
	stats   transcript.Stats
}

func newCLIMetaParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*cliMetaParser, error) {
	p := &cliMetaParser{src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *cliMetaParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *cliMetaParser) Stats() transcript.Stats { return p.stats.Clone() }

// Record reads the whole document.
func (p *cliMetaParser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var m cliMeta
	if err := transcript.DecodeDocument(raw, &m); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.events(&m), &p.st.Seen, maxSeen), nil
}

func (p *cliMetaParser) events(m *cliMeta) []event.Event {
	sc := scope{path: p.src.Path, session: transcript.FirstNonEmpty(m.SessionID, p.src.SessionID, strings.TrimSuffix(filepath.Base(p.src.Path), ".json"))}
	parent := strings.TrimSpace(m.Parent)
	if parent != "" && parent != sc.session {
		sc.agent, sc.session = sc.session, parent
	}
	sc.setCwd(m.Cwd)
	created, ok := anyTime(m.CreatedAt)
	if !ok {
		if created, ok = anyTime(m.UpdatedAt); !ok {
			return nil // no time for anything yet
		}
	}
	var evs []event.Event
	var models []string
	if sc.agent == "" {
		evs = append(evs, sc.sessionEvent(event.SessionStarted, "", "", created))
		if title := strings.TrimSpace(m.Title); title != "" {
			evs = append(evs, sc.titleEvent(title, created))
		}
		evs = append(evs, sc.modelEvent(&models, m.model(), created)...)
	}
	last := created
	for i := range m.SessionState.ConversationMetadata.UserTurnMetadatas {
		turn := &m.SessionState.ConversationMetadata.UserTurnMetadatas[i]
		t, ok := anyTime(turn.EndTimestamp)
		if !ok {
			t = last
		}
		last = t
		model := transcript.FirstNonEmpty(turn.Model, m.model())
		evs = append(evs, sc.modelEvent(&models, model, t)...)
		tok := event.Tokens{Input: transcript.Count(turn.Input), Output: transcript.Count(turn.Output),
			CacheRead: transcript.Count(turn.CacheRead), CacheCreation: transcript.Count(turn.CacheWrite)}
		msgID := ""
		for j := len(turn.MessageIDs) - 1; j >= 0; j-- {
			if turn.MessageIDs[j] != nil && *turn.MessageIDs[j] != "" {
				msgID = keyOf(*turn.MessageIDs[j])
				break
			}
		}
		u := transcript.PricedUsage(p.prices(), model, msgID, tok, 0, t)
		if u == nil {
			continue // Kiro wrote zeros: no figures to report
		}
		u.AgentID = sc.agent
		ev := sc.newEvent(event.KindTokenUsage, event.ID(Client, "usage", sc.owner(), strconv.Itoa(i)), t)
		ev.TokenUsage = u
		evs = append(evs, ev)
	}
	return evs
}
