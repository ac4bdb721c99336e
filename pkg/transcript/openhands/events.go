package openhands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget   = 500
	maxError    = 2 << 10
	maxOutput   = 8 << 10
	maxMessage  = 64 << 10
	maxItem     = 63
	maxFile     = 64 << 20 // an event file larger than this is malformed
	maxPassRead = 4096     // event files one pass reads at most; the next pass goes on
)

// gapWait is how long a missing event file is waited for once a later one exists: past it, the
// files after the gap are read (a variable for the tests).
var gapWait = time.Minute

// localZone is the zone an event's naive timestamp is read in (a variable for the tests).
var localZone = time.Local

// eventsState is an events parser's State.
type eventsState struct {
	Next    int    `json:"next"`              // the index of the next event file to read
	Last    int64  `json:"last,omitempty"`    // unix ns of the last event read
	Started bool   `json:"started,omitempty"` // the started event was emitted
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Model   string `json:"model,omitempty"`
}

// EventsParser reads one conversation's events directory (a transcript.Poller).
type EventsParser struct {
	src     transcript.Source
	session string
	st      eventsState
	stats   transcript.Stats
}

var (
	_ transcript.Parser = (*EventsParser)(nil)
	_ transcript.Poller = (*EventsParser)(nil)
)

func newEventsParser(src transcript.Source, raw []byte) *EventsParser {
	p := &EventsParser{src: src, session: sessionOf(src)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: an events directory is read by Poll.
func (p *EventsParser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Count(0, transcript.ErrMalformed)
	return nil, transcript.Malformed(Client, "%s is an events directory, read by Poll", p.src.Path)
}

// State returns the index of the next event file, as JSON.
func (p *EventsParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the event files read (Lines) and those that did not parse (Malformed).
func (p *EventsParser) Stats() transcript.Stats { return p.stats.Clone() }

// eventFiles lists an events directory's event files from index from on, by index, and the
// highest index (-1 when there is none). The names carry each event's random id, so the next
// file cannot be looked up by name: the directory is listed, in its own order (unsorted), and
// the names parsed by hand.
func eventFiles(dir string, from int) (map[int]string, int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, -1, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil, -1, err
	}
	files := map[int]string{}
	last := -1
	for _, e := range ents {
		i, ok := eventIndex(e.Name())
		if !ok || i < from || e.IsDir() {
			continue
		}
		if prev, dup := files[i]; !dup || e.Name() < prev {
			files[i] = e.Name()
		}
		last = max(last, i)
	}
	return files, last, nil
}

// eventIndex reads an event file's name, event-<index, 5 digits or more>-<event id: 8 or more hex
// digits and dashes>.json, for its index.
func eventIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "event-")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return 0, false
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits < 5 || digits >= len(rest) || rest[digits] != '-' || len(rest)-digits-1 < 8 {
		return 0, false
	}
	for _, c := range rest[digits+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return 0, false
		}
	}
	i, err := strconv.Atoi(rest[:digits])
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// pastGap returns the first index after i that files holds, when the file i is missing and that
// one was written gapWait ago or more (the SDK writes its files in index order: the missing one
// will not come); else -1, to wait for it.
func pastGap(dir string, files map[int]string, i int) int {
	next := -1
	for j := range files {
		if j > i && (next < 0 || j < next) {
			next = j
		}
	}
	if next < 0 {
		return -1
	}
	fi, err := os.Stat(filepath.Join(dir, files[next]))
	if err != nil || time.Since(fi.ModTime()) < gapWait {
		return -1
	}
	return next
}

// Poll reads the event files written since the last pass.
func (p *EventsParser) Poll(ctx context.Context) ([]event.Event, error) {
	files, last, err := eventFiles(p.src.Path, p.st.Next)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	work := p.st
	stats := p.stats.Clone()
	var out []event.Event
	for i := work.Next; i <= last && i < p.st.Next+maxPassRead; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, ok := files[i]
		if !ok {
			// A gap: the file is not there yet, or never will be.
			j := pastGap(p.src.Path, files, i)
			if j < 0 {
				break
			}
			stats.CountUnknown("event files missing")
			i, name = j, files[j]
			work.Next = j
		}
		data, err := readSmall(filepath.Join(p.src.Path, name))
		if err != nil && !errors.Is(err, errTooLarge) {
			return nil, err
		}
		var ev rawEvent
		if err == nil {
			err = decodeEvent(data, &ev)
		}
		if err != nil {
			if i == last {
				break // the newest file, perhaps caught while the SDK writes it: read it next pass
			}
			stats.Lines++
			stats.Malformed++
			work.Next = i + 1
			continue
		}
		stats.Lines++
		r := &eventReader{p: p, st: &work, stats: &stats, idx: i}
		out = append(out, r.read(&ev)...)
		work.Next = i + 1
	}
	p.st, p.stats = work, stats
	p.stats.Events += int64(len(out))
	return out, nil
}

var errTooLarge = errors.New("event file too large")

func readSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxFile {
		return nil, errTooLarge
	}
	return os.ReadFile(path)
}

// decodeEvent decodes one event file: an object, UTF-8.
func decodeEvent(data []byte, ev *rawEvent) error {
	return transcript.DecodeDocument(data, ev)
}

// rawEvent is one event file, every kind's fields together.
type rawEvent struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Source    string          `json:"source"`
	Kind      string          `json:"kind"`
	Sender    json.RawMessage `json:"sender"`

	LLMMessage *struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		ThinkingBlocks   json.RawMessage `json:"thinking_blocks"`
	} `json:"llm_message"`
	LLMResponseID string `json:"llm_response_id"`

	Thought          json.RawMessage `json:"thought"`
	ReasoningContent string          `json:"reasoning_content"`
	ThinkingBlocks   json.RawMessage `json:"thinking_blocks"`
	ToolName         string          `json:"tool_name"`
	ToolCallID       string          `json:"tool_call_id"`
	ToolCall         *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"tool_call"`
	Action json.RawMessage `json:"action"`

	Observation     json.RawMessage `json:"observation"`
	RejectionReason string          `json:"rejection_reason"`
	Error           json.RawMessage `json:"error"`

	Summary json.RawMessage `json:"summary"`
}

// eventReader reads one event.
type eventReader struct {
	p     *EventsParser
	st    *eventsState
	stats *transcript.Stats
	idx   int
	at    time.Time
	evs   []event.Event
}

// skipped are the kinds that yield nothing, known as such.
var skipped = map[string]bool{
	"SystemPromptEvent": true, "ConversationStateUpdateEvent": true, "PauseEvent": true, "CondensationRequest": true,
	"CondensationSummaryEvent": true, "TokenEvent": true, "ConversationErrorEvent": true, "StreamingDeltaEvent": true,
}

func (r *eventReader) read(ev *rawEvent) []event.Event {
	at, ok := parseTimestamp(ev.Timestamp)
	if !ok {
		if r.st.Last == 0 {
			r.stats.CountUnknown("event without time")
			return nil
		}
		at = time.Unix(0, r.st.Last).UTC()
	}
	r.at = at
	r.st.Last = at.UnixNano()
	if !r.st.Started {
		r.start()
	}
	key := transcript.FirstNonEmpty(ev.ID, strconv.Itoa(r.idx))
	switch ev.Kind {
	case "MessageEvent":
		r.message(ev, key)
	case "ActionEvent":
		r.action(ev, key)
	case "ObservationEvent", "UserRejectObservation", "AgentErrorEvent":
		r.result(ev)
	case "Condensation":
		ev2 := r.newEvent(event.KindAction, event.ID(Client, "compaction", r.p.session, key))
		ev2.Action = &event.Action{Type: event.ActionContextCompacted, Transcript: r.p.src.Path}
		r.evs = append(r.evs, ev2)
		var summary string
		if json.Unmarshal(ev.Summary, &summary) == nil {
			r.text(key, 0, event.RoleSummary, summary, "", "")
		}
	default:
		if !skipped[ev.Kind] {
			r.stats.CountUnknown("kind " + ev.Kind)
		}
	}
	return r.evs
}

// start emits the session's started event, with what base_state.json says of it.
func (r *eventReader) start() {
	r.st.Started = true
	var bs struct {
		Agent struct {
			LLM struct {
				Model string `json:"model"`
			} `json:"llm"`
		} `json:"agent"`
		Workspace struct {
			WorkingDir string `json:"working_dir"`
		} `json:"workspace"`
	}
	if data, err := readSmall(filepath.Join(filepath.Dir(r.p.src.Path), BaseStateName)); err == nil {
		_ = json.Unmarshal(data, &bs)
	}
	if cwd := strings.TrimSpace(bs.Workspace.WorkingDir); cwd != "" && utf8Path(cwd) {
		r.st.Cwd = filepath.Clean(cwd)
		if filepath.IsAbs(r.st.Cwd) {
			r.st.Project = project.Root(r.st.Cwd)
		}
	}
	r.st.Model = transcript.CutRunes(strings.TrimSpace(bs.Agent.LLM.Model), 200)
	ev := r.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), r.p.session, "started"))
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: r.st.Cwd, TranscriptPath: r.p.src.Path, Model: r.st.Model, StartedAt: r.at}
	r.evs = append(r.evs, ev)
}

func (r *eventReader) message(ev *rawEvent, key string) {
	m := ev.LLMMessage
	if m == nil {
		return
	}
	text := contentText(m.Content)
	switch {
	case ev.Source == "user" && m.Role == "user":
		if hasSender(ev.Sender) || strings.TrimSpace(text) == "" {
			if strings.TrimSpace(text) != "" {
				r.text(key, 0, event.RoleUser, text, key, "")
			}
			return
		}
		a := r.newEvent(event.KindAction, event.ID(Client, "prompt", r.p.session, key))
		a.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: key,
			Transcript: r.p.src.Path}
		r.evs = append(r.evs, a)
		r.text(key, 0, event.RoleUser, text, key, "")
	case m.Role == "assistant":
		r.text(key, 0, event.RoleThinking, transcript.FirstNonEmpty(thinkingText(m.ThinkingBlocks), m.ReasoningContent), ev.LLMResponseID, r.st.Model)
		r.text(key, 1, event.RoleAssistant, text, ev.LLMResponseID, r.st.Model)
	}
}

func (r *eventReader) action(ev *rawEvent, key string) {
	r.text(key, 0, event.RoleThinking, transcript.FirstNonEmpty(thinkingText(ev.ThinkingBlocks), ev.ReasoningContent), ev.LLMResponseID, r.st.Model)
	r.text(key, 1, event.RoleAssistant, contentText(ev.Thought), ev.LLMResponseID, r.st.Model)
	name := ev.ToolName
	if name == "" && ev.ToolCall != nil {
		name = ev.ToolCall.Name
	}
	args := ev.Action
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		if ev.ToolCall != nil && json.Valid([]byte(ev.ToolCall.Arguments)) {
			args = json.RawMessage(ev.ToolCall.Arguments)
		}
	}
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	ty, target := r.toolOf(name, in)
	callID := transcript.FirstNonEmpty(ev.ToolCallID, key)
	a := r.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), r.p.session, callID))
	a.Action = &event.Action{Type: ty, Tool: transcript.CutRunes(name, 200), Target: transcript.ClipTarget(target, maxTarget),
		ToolUseID: transcript.CutBytes(callID, 200), MessageID: ev.LLMResponseID, Model: r.st.Model, InputHash: transcript.InputHash(args),
		Transcript: r.p.src.Path}
	r.evs = append(r.evs, a)
	r.msg(key, 2, event.Message{Role: event.RoleToolCall, Text: a.Action.Target, Tool: a.Action.Tool, ToolUseID: a.Action.ToolUseID,
		MessageID: ev.LLMResponseID, Model: r.st.Model})
}

// result emits a tool call's result: the call's action again, with its outcome.
func (r *eventReader) result(ev *rawEvent) {
	if ev.ToolCallID == "" {
		return
	}
	var obs map[string]any
	_ = json.Unmarshal(ev.Observation, &obs)
	ty, target := r.toolOf(ev.ToolName, obs)
	a := &event.Action{Type: ty, Tool: transcript.CutRunes(ev.ToolName, 200), Target: transcript.ClipTarget(target, maxTarget),
		ToolUseID: transcript.CutBytes(ev.ToolCallID, 200), Transcript: r.p.src.Path}
	ok := true
	var out, errText string
	switch ev.Kind {
	case "ObservationEvent":
		var o struct {
			Content  json.RawMessage `json:"content"`
			Output   string          `json:"output"`
			IsError  bool            `json:"is_error"`
			Error    json.RawMessage `json:"error"`
			ExitCode *float64        `json:"exit_code"`
		}
		_ = json.Unmarshal(ev.Observation, &o)
		out = transcript.FirstNonEmpty(contentText(o.Content), o.Output)
		var es string
		_ = json.Unmarshal(o.Error, &es)
		var eb bool
		_ = json.Unmarshal(o.Error, &eb)
		switch {
		case o.IsError || eb || es != "":
			ok, errText = false, transcript.FirstNonEmpty(es, out, "tool failed")
		case o.ExitCode != nil && *o.ExitCode > 0:
			ok, errText = false, transcript.FirstNonEmpty(out, "exit code "+strconv.FormatFloat(*o.ExitCode, 'f', -1, 64))
		}
	case "UserRejectObservation":
		ok, errText = false, transcript.FirstNonEmpty(ev.RejectionReason, "rejected by the user")
	case "AgentErrorEvent":
		var es string
		_ = json.Unmarshal(ev.Error, &es)
		ok, errText = false, transcript.FirstNonEmpty(es, "agent error")
	}
	a.Success = &ok
	a.OutputSize = int64(len(out))
	a.Output = transcript.Clip(out, maxOutput)
	if !ok {
		a.Error = transcript.Clip(strings.TrimSpace(errText), maxError)
	}
	e := r.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), r.p.session, ev.ToolCallID))
	e.Action = a
	r.evs = append(r.evs, e)
}

func (r *eventReader) text(key string, item int, role, text, msgID, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	r.msg(key, item, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})
}

func (r *eventReader) msg(key string, item int, m event.Message) {
	ev := r.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), r.p.session, key, strconv.Itoa(item)))
	m.Seq = int64(r.idx)*64 + int64(min(item, maxItem))
	ev.Message = &m
	r.evs = append(r.evs, ev)
}

func (r *eventReader) newEvent(kind event.Kind, id string) event.Event {
	return event.Event{ID: id, Kind: kind, Time: r.at, Source: Component, Client: Client, SessionID: r.p.session,
		Project: r.st.Project, V: event.SchemaVersion}
}

func (r *eventReader) relPath(file string) string {
	return transcript.RelPath(file, r.st.Cwd, r.st.Project)
}

// parseTimestamp reads an event's timestamp: naive ISO 8601 in the local zone (Python's
// datetime.now().isoformat()), or RFC 3339 with a zone.
func parseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, localZone); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// contentText joins the text items of a content list ("[image]" for an image); a string is
// itself.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		switch {
		case it.Type == "image" || it.Type == "image_url":
			parts = append(parts, "[image]")
		case strings.TrimSpace(it.Text) != "":
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// thinkingText joins the text of Anthropic thinking blocks.
func thinkingText(raw json.RawMessage) string {
	var blocks []struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "thinking" && strings.TrimSpace(b.Thinking) != "" {
			parts = append(parts, b.Thinking)
		}
	}
	return strings.Join(parts, "\n")
}

func hasSender(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != ""
}

func utf8Path(s string) bool {
	return len(s) < 4096 && !strings.ContainsRune(s, 0) && strings.ToValidUTF8(s, "") == s
}
