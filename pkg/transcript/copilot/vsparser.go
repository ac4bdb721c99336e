package copilot

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// maxSeen bounds the fingerprints of emitted events a VS Code parser remembers.
const maxSeen = 256

// VSCodeParser turns one VS Code chat session file, read whole, into events. It is not safe for
// concurrent use.
type VSCodeParser struct {
	src    transcript.Source
	folder string // the workspace's folder, from workspace.json

	st    vsState
	stats transcript.Stats
	seen  map[string]bool // st.Seen as a set
}

var _ transcript.Parser = (*VSCodeParser)(nil)

// vsState is what a VS Code parser needs to emit only what changed at the next read. It is JSON.
type vsState struct {
	V         int      `json:"v"`
	SessionID string   `json:"sid,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Root      string   `json:"root,omitempty"`
	Started   bool     `json:"started,omitempty"`
	TitleH    string   `json:"title_h,omitempty"` // hash of the title emitted last (transcript.TextHash)
	DoneN     int      `json:"done_n,omitempty"`
	DoneH     string   `json:"done_h,omitempty"` // hash of the ids of the first DoneN requests
	Seen      []string `json:"seen,omitempty"`   // fingerprints of the last events emitted, oldest first
}

func newVSCodeParser(src transcript.Source, st []byte) (*VSCodeParser, error) {
	p := &VSCodeParser{src: src}
	if p.src.Client == "" {
		p.src.Client = ClientVSCode
	}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("copilot-vscode: bad parser state for " + src.Path + ": " + err.Error())
		}
	}
	if src.Path != "" {
		p.folder = workspaceFolder(src.Path)
	}
	return p, nil
}

// State returns the parser's state.
func (p *VSCodeParser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *VSCodeParser) Stats() transcript.Stats { return p.stats.Clone() }

func vsMalformed(format string, args ...any) error {
	return transcript.Malformed(ClientVSCode, format, args...)
}

// Record reads a whole session file (a Document source).
func (p *VSCodeParser) Record(_ int64, data []byte) ([]event.Event, error) {
	p.stats.Lines++
	saved := p.State()
	evs, err := p.document(data)
	if err != nil {
		p.st = vsState{}
		_ = json.Unmarshal(saved, &p.st) // what State wrote always loads
		p.seen = nil
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// vsDoc is a chat session: ISerializableChatData.
type vsDoc struct {
	SessionID    string            `json:"sessionId"`
	CreationDate json.RawMessage   `json:"creationDate"`
	CustomTitle  string            `json:"customTitle"`
	Requests     []json.RawMessage `json:"requests"`
}

// vsRequest is one request and its response.
type vsRequest struct {
	RequestID  string          `json:"requestId"`
	Timestamp  json.RawMessage `json:"timestamp"`
	ModelID    string          `json:"modelId"`
	Message    json.RawMessage `json:"message"`
	Response   json.RawMessage `json:"response"` // an array of parts (a string in early versions)
	ResponseID string          `json:"responseId"`
	Result     *vsResult       `json:"result"`
	ModelState *struct {
		Value *int `json:"value"`
	} `json:"modelState"`
	IsCanceled bool `json:"isCanceled"`
}

type vsResult struct {
	ErrorDetails *struct {
		Message string `json:"message"`
	} `json:"errorDetails"`
	Metadata *struct {
		ToolCallRounds []struct {
			ToolCalls []vsCall `json:"toolCalls"`
		} `json:"toolCallRounds"`
		ToolCallResults map[string]json.RawMessage `json:"toolCallResults"`
		CacheKey        string                     `json:"cacheKey"`
	} `json:"metadata"`
}

// vsCall is a tool call as the model made it.
type vsCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	ID        string          `json:"id"`
}

// vsPart is a response part: the members of those this package reads.
type vsPart struct {
	Kind              string          `json:"kind"`
	ToolID            string          `json:"toolId"`
	ToolCallID        string          `json:"toolCallId"`
	InvocationMessage json.RawMessage `json:"invocationMessage"`
	PastTenseMessage  json.RawMessage `json:"pastTenseMessage"`
	IsConfirmed       json.RawMessage `json:"isConfirmed"`
	IsComplete        *bool           `json:"isComplete"`
	ResultDetails     json.RawMessage `json:"resultDetails"`
	ToolSpecificData  json.RawMessage `json:"toolSpecificData"`
	Source            *struct {
		Type string `json:"type"`
	} `json:"source"`
	BaseURI *struct {
		Path   string `json:"path"`
		Scheme string `json:"scheme"`
	} `json:"baseUri"`
}

// Response model states (modelState.value, VS Code 1.109 and on).
const (
	statePending = iota
	stateComplete
	stateCancelled
	stateFailed
	stateNeedsInput
)

// document reads a whole session file: a .jsonl log replayed to its object, else the object.
func (p *VSCodeParser) document(raw []byte) ([]event.Event, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, vsMalformed("session file is empty (being written?)")
	}
	if !utf8.Valid(raw) {
		return nil, vsMalformed("session file is not UTF-8")
	}
	if raw[0] != '{' {
		return nil, vsMalformed("session file is not JSON")
	}
	if strings.HasSuffix(p.src.Path, ".jsonl") {
		obj, err := replayLog(raw)
		if err != nil {
			return nil, vsMalformed("session log does not replay (written while read, or damaged): %v", err)
		}
		raw = obj
	}
	var d vsDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, vsMalformed("session does not parse (written while read, or damaged): %v", err)
	}
	if p.st.SessionID == "" {
		p.st.SessionID = d.SessionID
		if p.st.SessionID == "" {
			p.st.SessionID = p.src.SessionID
		}
		if p.st.SessionID == "" {
			return nil, vsMalformed("session has no id")
		}
	}
	reqs := make([]*vsRequest, len(d.Requests))
	for i, r := range d.Requests {
		var q vsRequest
		if json.Unmarshal(r, &q) != nil {
			p.stats.CountUnknown("(malformed request)")
			continue
		}
		reqs[i] = &q
	}
	p.findRoot(reqs)

	var evs []event.Event
	created, hasCreated := msTime(d.CreationDate)
	if !p.st.Started {
		t, ok := created, hasCreated
		if !ok {
			t, ok = p.firstTime(reqs)
		}
		if ok {
			p.st.Started = true
			ev := p.newEvent(event.KindSession, p.id(event.KindSession, "started"), t)
			ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, StartedAt: t}
			evs = append(evs, ev)
		}
	}

	skip := 0
	if p.st.DoneN > 0 && p.st.DoneN <= len(reqs) && p.st.DoneH == idsHash(reqs[:p.st.DoneN]) {
		skip = p.st.DoneN
	}
	var fresh []event.Event
	prevModel, last := "", created
	for i, q := range reqs {
		if q == nil {
			continue
		}
		t, ok := msTime(q.Timestamp)
		if !ok {
			t, ok = last, !last.IsZero()
		}
		if !ok {
			if i >= skip {
				p.stats.CountUnknown("(request without a time)")
			}
			continue
		}
		last = t
		if i >= skip {
			fresh = append(fresh, p.request(q, i, prevModel, t)...)
		}
		if q.ModelID != "" {
			prevModel = q.ModelID
		}
	}
	done := 0
	for done < len(reqs) && reqs[done] != nil && reqs[done].final() {
		done++
	}
	p.st.DoneN, p.st.DoneH = done, idsHash(reqs[:done])

	if title, ok := event.CleanTitle(d.CustomTitle); ok && transcript.TextHash(title) != p.st.TitleH {
		// At the first request's time (VS Code names a session after it), the same at every read.
		t, hasT := p.firstTime(reqs)
		if !hasT {
			t, hasT = created, hasCreated
		}
		if hasT {
			p.st.TitleH = transcript.TextHash(title)
			ev := p.newEvent(event.KindSession, p.id(event.KindSession, "title", title), t)
			ev.Session = &event.Session{Title: title, TranscriptPath: p.src.Path}
			fresh = append(fresh, ev)
		}
	}
	return append(evs, p.keep(fresh)...), nil
}

// parts returns the response's parts; none when it is not an array.
func (q *vsRequest) parts() []json.RawMessage {
	var out []json.RawMessage
	_ = json.Unmarshal(q.Response, &out)
	return out
}

// final reports a request whose response will not change: complete with its result (VS Code
// writes the result before the state), cancelled or failed.
func (q *vsRequest) final() bool {
	if q.ModelState != nil && q.ModelState.Value != nil {
		switch *q.ModelState.Value {
		case stateComplete:
			return q.Result != nil
		case stateCancelled, stateFailed:
			return true
		}
		return false
	}
	return q.Result != nil || q.IsCanceled
}

func (q *vsRequest) cancelled() bool {
	if q.ModelState != nil && q.ModelState.Value != nil {
		return *q.ModelState.Value == stateCancelled
	}
	return q.IsCanceled
}

func (q *vsRequest) failed() (string, bool) {
	msg := ""
	if q.Result != nil && q.Result.ErrorDetails != nil {
		msg = strings.TrimSpace(q.Result.ErrorDetails.Message)
	}
	if q.ModelState != nil && q.ModelState.Value != nil {
		// The state says it (an error's details come before the state that ends the request).
		if *q.ModelState.Value != stateFailed {
			return "", false
		}
		if msg == "" {
			msg = "request failed"
		}
		return msg, true
	}
	return msg, msg != "" && !q.IsCanceled
}

// idsHash hashes the ids of a run of requests.
func idsHash(reqs []*vsRequest) string {
	h := sha256.New()
	for _, q := range reqs {
		if q != nil {
			h.Write([]byte(q.RequestID))
		}
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// msTime reads a time in unix milliseconds.
func msTime(raw json.RawMessage) (time.Time, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f < 31536000000 || f > 9e15 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}

func (p *VSCodeParser) firstTime(reqs []*vsRequest) (time.Time, bool) {
	for _, q := range reqs {
		if q != nil {
			if t, ok := msTime(q.Timestamp); ok {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// findRoot sets the session's folder and project once: the workspace's folder, else the folder
// the extension named (a request's cacheKey, a markdown part's baseUri).
func (p *VSCodeParser) findRoot(reqs []*vsRequest) {
	if p.st.Cwd != "" {
		return
	}
	dir := p.folder
	for _, q := range reqs {
		if dir != "" {
			break
		}
		if q == nil {
			continue
		}
		if q.Result != nil && q.Result.Metadata != nil {
			if dir = uriPath(q.Result.Metadata.CacheKey); dir != "" {
				break
			}
		}
		for _, raw := range q.parts() {
			var part vsPart
			if json.Unmarshal(raw, &part) == nil && part.Kind == "" && part.BaseURI != nil && part.BaseURI.Path != "" {
				dir = uriPath(part.BaseURI.Scheme + "://" + part.BaseURI.Path)
				if dir == "" && part.BaseURI.Scheme == "" {
					dir = uriPath("file://" + part.BaseURI.Path)
				}
				if dir != "" {
					break
				}
			}
		}
	}
	if dir != "" {
		p.st.Cwd, p.st.Root = dir, project.Root(dir)
	}
}

// ---------------------------------------------------------------------------------------------
// Requests

func (p *VSCodeParser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: ClientVSCode, SessionID: p.st.SessionID,
		Project: p.st.Root, V: event.SchemaVersion}
}

func (p *VSCodeParser) action(id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = p.src.Path
	ev := p.newEvent(event.KindAction, id, t)
	ev.Action = a
	return ev
}

func (p *VSCodeParser) id(kind event.Kind, parts ...string) string {
	return event.ID(append([]string{ClientVSCode, string(kind), p.st.SessionID}, parts...)...)
}

func (p *VSCodeParser) rel(file string) string { return relPath(file, p.st.Cwd, p.st.Root) }

// request reads one request: its prompt, model, tool invocations and how it ended.
func (p *VSCodeParser) request(q *vsRequest, i int, prevModel string, t time.Time) []event.Event {
	rid := q.RequestID
	if rid == "" {
		rid = "#" + strconv.Itoa(i)
	}
	var evs []event.Event
	if text := messageText(q.Message); strings.TrimSpace(text) != "" {
		evs = append(evs, p.action(p.id(event.KindAction, "prompt", rid), t,
			&event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), RequestID: q.RequestID}))
		if text = clipMessage(text); text != "" {
			evs = append(evs, p.message(rid, "prompt", vsSeq(i, 0), t,
				event.Message{Role: event.RoleUser, Text: text, MessageID: q.RequestID}))
		}
	}
	if m := strings.TrimSpace(q.ModelID); m != "" && m != prevModel {
		ev := p.newEvent(event.KindSession, p.id(event.KindSession, "model", m, rid), t)
		ev.Session = &event.Session{State: event.SessionActive, Model: m, Cwd: p.st.Cwd, TranscriptPath: p.src.Path}
		evs = append(evs, ev)
	}
	calls := p.tools(q, rid, t)
	evs = append(evs, calls...)
	if q.final() {
		evs = append(evs, p.responseMessages(q, i, rid, t, calls)...)
	}
	if q.cancelled() {
		evs = append(evs, p.action(p.id(event.KindAction, "aborted", rid), t,
			&event.Action{Type: event.ActionTurnAborted, RequestID: q.RequestID, Model: q.ModelID}))
	} else if msg, failed := q.failed(); failed {
		evs = append(evs, p.action(p.id(event.KindAction, "error", rid), t,
			&event.Action{Type: event.ActionAPIError, RequestID: q.RequestID, Model: q.ModelID, Error: clipError(msg)}))
	}
	return evs
}

// messageText reads a request's message: {text, parts}, or a string in early versions.
func messageText(raw json.RawMessage) string {
	var m struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &m) == nil && m.Text != "" {
		return m.Text
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// tools reads a request's tool invocations, paired with the model's calls when they match.
func (p *VSCodeParser) tools(q *vsRequest, rid string, t time.Time) []event.Event {
	var parts []*vsPart
	for _, raw := range q.parts() {
		var part vsPart
		if json.Unmarshal(raw, &part) != nil {
			continue
		}
		if part.Kind == "toolInvocationSerialized" || part.Kind == "toolInvocation" {
			parts = append(parts, &part)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	var calls []vsCall
	var results map[string]json.RawMessage
	if q.Result != nil && q.Result.Metadata != nil {
		for _, r := range q.Result.Metadata.ToolCallRounds {
			calls = append(calls, r.ToolCalls...)
		}
		results = q.Result.Metadata.ToolCallResults
	}
	paired := len(calls) == len(parts)
	_, failed := q.failed()
	ended := q.cancelled() || failed
	var evs []event.Event
	for i, part := range parts {
		var call *vsCall
		if paired {
			call = &calls[i]
		}
		evs = append(evs, p.invocation(q, part, call, results, rid, i, ended, t))
	}
	return evs
}

// terminalData is a terminal command's toolSpecificData (and the legacy {command}).
type terminalData struct {
	Kind        string `json:"kind"`
	CommandLine *struct {
		Original   string `json:"original"`
		UserEdited string `json:"userEdited"`
		ToolEdited string `json:"toolEdited"`
	} `json:"commandLine"`
	Command string `json:"command"`
	Output  *struct {
		Text string `json:"text"`
	} `json:"terminalCommandOutput"`
	State *struct {
		ExitCode *int            `json:"exitCode"`
		Duration json.RawMessage `json:"duration"`
	} `json:"terminalCommandState"`
	RawInput    json.RawMessage `json:"rawInput"`
	AgentName   string          `json:"agentName"`
	Description string          `json:"description"`
	Prompt      string          `json:"prompt"`
}

// invocation reads one tool invocation.
func (p *VSCodeParser) invocation(q *vsRequest, part *vsPart, call *vsCall, results map[string]json.RawMessage,
	rid string, i int, ended bool, t time.Time) event.Event {
	mcp := part.Source != nil && part.Source.Type == "mcp"
	tool := part.ToolID
	ty := VSCodeToolType(tool, mcp)
	if call != nil {
		ct := VSCodeToolType(call.Name, mcp)
		switch {
		case tool == "":
			tool, ty = call.Name, ct
		case ty == event.ActionUnknown:
			ty = ct
		case ct != event.ActionUnknown && ct != ty:
			call = nil // not the same call: the lists do not line up
		}
	}
	callID := part.ToolCallID
	if callID == "" {
		callID = rid + "#" + strconv.Itoa(i)
	}
	var tsd terminalData
	_ = json.Unmarshal(part.ToolSpecificData, &tsd)

	target := p.partTarget(ty, part, &tsd)
	if target == "" && call != nil {
		target = vscodeArgsTarget(ty, readArgs(call.Arguments), p.rel)
	}
	a := &event.Action{Type: ty, Tool: tool, Target: clipTarget(target), ToolUseID: callID, RequestID: q.RequestID,
		MessageID: q.ResponseID, Model: q.ModelID}
	if a.Target != "" {
		// The model's arguments are written only with the result, at the request's end: the hash
		// is of what is known from the start, so every read of the call gives the same.
		a.InputHash = hashInput([]byte(tool + "\x00" + target))
	}

	out, size := invocationOutput(part, &tsd, call, results)
	a.Output, a.OutputSize = clipOutput(out), size
	if tsd.State != nil {
		if d := transcript.Count(tsd.State.Duration); d > 0 && d < 7*24*3600*1000 {
			a.DurationMs = d
		}
	}
	fail := func(msg string) {
		f := false
		a.Success, a.Error = &f, clipError(msg)
	}
	complete := part.IsComplete != nil && *part.IsComplete
	switch confirmed := confirmation(part.IsConfirmed); {
	case confirmed == "denied":
		fail("denied by the user")
	case confirmed == "skipped":
		fail("skipped")
	case complete:
		var rd struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(part.ResultDetails, &rd)
		switch {
		case rd.IsError:
			msg := strings.TrimSpace(out)
			if msg == "" {
				msg = "the tool reported an error"
			}
			fail(msg)
		case tsd.State != nil && tsd.State.ExitCode != nil && *tsd.State.ExitCode != 0:
			fail("exit code " + strconv.Itoa(*tsd.State.ExitCode))
		default:
			ok := true
			a.Success = &ok
		}
	case ended:
		fail("not completed: the request ended")
	}
	return p.action(p.id(event.KindAction, callID), t, a)
}

// confirmation reads isConfirmed: "denied", "skipped" or "" (confirmed, or not known).
func confirmation(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return ""
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if !b {
			return "denied"
		}
		return ""
	}
	var c struct {
		Type *int `json:"type"`
	}
	if json.Unmarshal(raw, &c) == nil && c.Type != nil {
		switch *c.Type {
		case 0:
			return "denied"
		case 5:
			return "skipped"
		}
	}
	return ""
}

// partTarget reads what an invocation acts on from what VS Code shows of it (see the package doc).
func (p *VSCodeParser) partTarget(ty event.ActionType, part *vsPart, tsd *terminalData) string {
	switch tsd.Kind {
	case "terminal":
		if c := tsd.CommandLine; c != nil {
			for _, s := range []string{c.ToolEdited, c.UserEdited, c.Original} {
				if strings.TrimSpace(s) != "" {
					return s
				}
			}
		}
		if tsd.Command != "" {
			return tsd.Command
		}
	case "input":
		if s := vscodeArgsTarget(ty, readArgs(tsd.RawInput), p.rel); s != "" {
			return s
		}
	case "subagent":
		agent, task := strings.TrimSpace(tsd.AgentName), strings.TrimSpace(tsd.Description)
		if task == "" {
			task = strings.TrimSpace(tsd.Prompt)
		}
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		if agent+task != "" {
			return agent + task
		}
	}
	for _, raw := range []json.RawMessage{part.InvocationMessage, part.PastTenseMessage} {
		msg := markdownText(raw)
		if msg == "" {
			continue
		}
		link, quoted := firstLink(msg), firstQuoted(msg)
		if path := uriPath(link); path != "" {
			link = p.rel(path)
		}
		switch ty {
		case event.ActionSearchText, event.ActionSearchFiles, event.ActionRunCommand:
			if quoted != "" {
				return quoted
			}
			if link != "" {
				return link
			}
		default:
			if link != "" {
				return link
			}
			if quoted != "" {
				return quoted
			}
		}
	}
	return ""
}

// markdownText reads a string or an IMarkdownString {value}.
func markdownText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct {
		Value string `json:"value"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Value
}

// firstLink returns the target of a message's first markdown link: "[text](target)".
func firstLink(s string) string {
	i := strings.Index(s, "](")
	if i < 0 {
		return ""
	}
	rest := s[i+2:]
	j := strings.IndexByte(rest, ')')
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}

// firstQuoted returns a message's first `quoted` text.
func firstQuoted(s string) string {
	i := strings.IndexByte(s, '`')
	if i < 0 {
		return ""
	}
	rest := s[i+1:]
	j := strings.IndexByte(rest, '`')
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}

// invocationOutput returns an invocation's output (a little more than maxOutput, for the
// scrubber's margin) and its full size: the terminal's output, else resultDetails' text output,
// else the model's tool result.
func invocationOutput(part *vsPart, tsd *terminalData, call *vsCall, results map[string]json.RawMessage) (string, int64) {
	if tsd.Output != nil && tsd.Output.Text != "" {
		return cut(tsd.Output.Text), int64(len(tsd.Output.Text))
	}
	var rd struct {
		Output []struct {
			Value  string `json:"value"`
			IsText *bool  `json:"isText"`
			Type   string `json:"type"`
		} `json:"output"`
	}
	if json.Unmarshal(part.ResultDetails, &rd) == nil {
		var sb strings.Builder
		for _, o := range rd.Output {
			if o.Value == "" || (o.IsText != nil && !*o.IsText) || o.Type == "data" {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(o.Value)
		}
		if sb.Len() > 0 {
			return cut(sb.String()), int64(sb.Len())
		}
	}
	if call != nil && call.ID != "" {
		if raw, ok := results[call.ID]; ok {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				var t textCollector
				t.walk(v, "")
				return t.sb.String(), t.size
			}
		}
	}
	return "", 0
}

func cut(s string) string { return transcript.CutBytes(s, maxOutput+1024) }

// textCollector gathers the text of a tool result as the extension keeps it (a prompt-tsx tree
// whose text leaves are "text" members, or parts with a "value" string).
type textCollector struct {
	sb   strings.Builder
	size int64
}

func (c *textCollector) walk(v any, key string) {
	switch x := v.(type) {
	case string:
		if key == "text" || key == "value" {
			c.size += int64(len(x))
			if room := maxOutput + 1024 - c.sb.Len(); room > 0 {
				c.sb.WriteString(transcript.CutBytes(x, room))
			}
		}
	case []any:
		for _, e := range x {
			c.walk(e, key)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// The order of the members as written is lost; "children" and "text" are the only ones
		// with text in a node, and a part has one "value": any stable order keeps the text whole.
		sort.Strings(keys)
		for _, k := range keys {
			c.walk(x[k], k)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Emitting only what changed

// keep drops the events emitted before exactly as they are, and remembers the others.
func (p *VSCodeParser) keep(evs []event.Event) []event.Event {
	if len(evs) == 0 {
		return evs
	}
	if p.seen == nil {
		p.seen = make(map[string]bool, len(p.st.Seen))
		for _, f := range p.st.Seen {
			p.seen[f] = true
		}
	}
	out := evs[:0]
	for i := range evs {
		f := fingerprint(&evs[i])
		if p.seen[f] {
			continue
		}
		out = append(out, evs[i])
		p.seen[f] = true
		p.st.Seen = append(p.st.Seen, f)
		if n := len(p.st.Seen); n > maxSeen {
			for _, old := range p.st.Seen[:n-maxSeen] {
				delete(p.seen, old)
			}
			p.st.Seen = append(p.st.Seen[:0:0], p.st.Seen[n-maxSeen:]...)
		}
	}
	return out
}

// fingerprint hashes an event whole: the same fingerprint is the same id with the same content.
func fingerprint(e *event.Event) string {
	b, _ := json.Marshal(e)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// ---------------------------------------------------------------------------------------------
// Messages

// vsSeq orders the messages of a session: the request's index, then the part's (the prompt first).
func vsSeq(req, part int) int64 { return int64(req)<<16 | int64(min(part, 1<<16-1)) }

// message returns a message event: id event.ID("copilot-vscode", "message", session id, request
// id, key), at the request's time.
func (p *VSCodeParser) message(rid, key string, seq int64, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, p.id(event.KindMessage, rid, key), t)
	m.Seq = seq
	ev.Message = &m
	return ev
}

// vsText is what a text part holds: markdown {value} (no kind, or markdownContent {content}),
// thinking {value: a string or strings}, inlineReference {inlineReference: a URI or a location,
// name}.
type vsText struct {
	Kind    string          `json:"kind"`
	Value   json.RawMessage `json:"value"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name"`
	Ref     *struct {
		Path string `json:"path"`
		URI  *struct {
			Path string `json:"path"`
		} `json:"uri"`
	} `json:"inlineReference"`
}

// responseMessages reads a finished request's response as messages: each run of markdown (with
// the file references inside it, by name) is an assistant message, each run of thinking a
// thinking message, and each tool invocation a tool_call message with its action's target.
// calls are the request's tool invocation actions, in the order of their parts.
func (p *VSCodeParser) responseMessages(q *vsRequest, i int, rid string, t time.Time, calls []event.Event) []event.Event {
	var evs []event.Event
	role, start := "", 0
	var sb strings.Builder
	flush := func() {
		if text := clipMessage(sb.String()); role != "" && text != "" {
			evs = append(evs, p.message(rid, strconv.Itoa(start), vsSeq(i, 1+start), t,
				event.Message{Role: role, Text: text, MessageID: q.ResponseID, Model: q.ModelID}))
		}
		role = ""
		sb.Reset()
	}
	run := func(r string, j int) {
		if role != r {
			flush()
			role, start = r, j
		}
	}
	k := 0 // the next call
	for j, raw := range q.parts() {
		var part vsPart
		if json.Unmarshal(raw, &part) != nil {
			continue
		}
		var x vsText
		_ = json.Unmarshal(raw, &x)
		switch part.Kind {
		case "", "markdownContent":
			v := markdownText(x.Value)
			if part.Kind != "" {
				v = markdownText(x.Content)
			}
			run(event.RoleAssistant, j)
			sb.WriteString(v)
		case "inlineReference":
			name := x.Name
			if name == "" && x.Ref != nil {
				ref := x.Ref.Path
				if ref == "" && x.Ref.URI != nil {
					ref = x.Ref.URI.Path
				}
				name = path.Base(ref)
			}
			if name != "" && name != "." && name != "/" {
				run(event.RoleAssistant, j)
				sb.WriteString(name)
			}
		case "thinking":
			run(event.RoleThinking, j)
			sb.WriteString(thinkingText(x.Value))
		case "toolInvocationSerialized", "toolInvocation":
			flush()
			if k < len(calls) {
				a := calls[k].Action
				tool := a.Tool
				if tool == "" {
					tool = string(a.Type)
				}
				evs = append(evs, p.message(rid, strconv.Itoa(j), vsSeq(i, 1+j), t, event.Message{Role: event.RoleToolCall,
					Text: a.Target, Tool: tool, ToolUseID: a.ToolUseID, MessageID: a.MessageID, Model: a.Model}))
				k++
			}
		}
	}
	flush()
	return evs
}

// thinkingText reads a thinking part's value: a string, or strings.
func thinkingText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var ss []string
	_ = json.Unmarshal(raw, &ss)
	return strings.Join(ss, "")
}
