package hermes

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits of what an event carries.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxPart    = 63
)

// session is what the events of one session share.
type session struct {
	id, cwd, model string
	created        time.Time // zero when unknown
}

// callInfo is what a tool call's result takes from its call, when both are read in one pass.
type callInfo struct {
	typ    event.ActionType
	target string
	at     time.Time
}

// figures are a session's or a usage row's token counts and costs as Hermes keeps them.
type figures struct {
	in, out, cacheRead, cacheWrite, reasoning int64
	est, actual                               float64
}

// tokens are observer's buckets (see the package doc).
func (f figures) tokens() event.Tokens {
	return event.Tokens{Input: clean(f.in), Output: clean(f.out), CacheRead: clean(f.cacheRead),
		CacheCreation: clean(f.cacheWrite), Reasoning: min(clean(f.reasoning), clean(f.out))}
}

func (f figures) key() string {
	t := f.tokens()
	return strings.Join([]string{strconv.FormatInt(t.Input, 10), strconv.FormatInt(t.Output, 10), strconv.FormatInt(t.CacheRead, 10),
		strconv.FormatInt(t.CacheCreation, 10), strconv.FormatInt(t.Reasoning, 10), money(f.est), money(f.actual)}, "/")
}

func clean(n int64) int64 {
	if n < 0 || n > 1e13 {
		return 0
	}
	return n
}

// money is a sane cost in USD, else 0, as text.
func money(usd float64) string { return strconv.FormatFloat(sane(usd), 'g', -1, 64) }

func sane(usd float64) float64 {
	if math.IsNaN(usd) || usd < 0 || usd > 1e6 {
		return 0
	}
	return usd
}

// secs reads Unix seconds (REAL); the zero time outside 1971..2261.
func secs(f float64) time.Time {
	if math.IsNaN(f) || f <= 31536000 || f >= 9214646400 {
		return time.Time{}
	}
	whole, frac := math.Modf(f)
	return time.Unix(int64(whole), int64(math.Round(frac*1e6))*1000).UTC()
}

// shortKey is a short fingerprint of parts, for the State.
func shortKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

func (p *Parser) project(dir string) string {
	if dir == "" || len(dir) > 4096 || !strings.HasPrefix(dir, "/") {
		return ""
	}
	if r, ok := p.roots[dir]; ok {
		return r
	}
	r := project.Root(dir)
	p.roots[dir] = r
	return r
}

func (p *Parser) newEvent(s *session, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: s.id, Project: p.project(s.cwd), V: event.SchemaVersion}
}

// Bounds of the State (see the package doc).
const (
	// maxRecent is how many sessions, the most recently active, the State keeps one by one.
	maxRecent = 256
	// buckets is how many sums of settled sessions' fingerprints the State keeps.
	buckets = 32
)

// view is what a pass reports of one session: its title and the fingerprints of its title and
// figures.
type view struct {
	title              string // cleaned, "" for none
	titleKey, usageKey string
	rows               []usageRow
	lastSeen           float64 // the newest last_seen of its usage rows
}

func (p *Parser) viewOf(row *sessionRow, model string, rows []usageRow) view {
	v := view{rows: rows}
	if title, ok := event.CleanTitle(row.title); ok {
		v.title, v.titleKey = title, shortKey(title)
	}
	parts := []string{model, row.fig.key()}
	for _, u := range rows {
		parts = append(parts, u.model, u.provider, u.baseURL, u.mode, u.task, u.fig.key())
		v.lastSeen = max(v.lastSeen, u.lastSeen)
	}
	v.usageKey = shortKey(parts...)
	return v
}

// entry is a session's value in the State's Sessions.
type entry struct {
	title, usage string
	active       float64
}

func parseEntry(s string) entry {
	parts := strings.SplitN(s, ":", 3)
	e := entry{title: parts[0]}
	if len(parts) > 1 {
		e.usage = parts[1]
	}
	if len(parts) > 2 {
		e.active, _ = strconv.ParseFloat(parts[2], 64)
	}
	return e
}

func (e entry) String() string {
	return e.title + ":" + e.usage + ":" + strconv.FormatInt(int64(unixSecs(e.active)), 10)
}

// unixSecs is a time column's value when it is a time secs reads, else 0.
func unixSecs(f float64) float64 {
	if secs(f).IsZero() {
		return 0
	}
	return f
}

// activity is the last activity of a session that a pass sees: its start, the activity Hermes
// noted, its usage rows' last_seen and its rows read in the pass.
func activity(row *sessionRow, v *view, touched float64) float64 {
	return max(unixSecs(row.started), unixSecs(row.active), unixSecs(v.lastSeen), touched)
}

// bucketOf is the bucket of a settled session's fingerprint.
func bucketOf(id string) int {
	h := sha256.Sum256([]byte(id))
	return int(binary.BigEndian.Uint32(h[:4]) % buckets)
}

// settledSum is a settled session's contribution to its bucket's sum: a hash of its id and its
// fingerprints as a pass reads them.
func settledSum(id string, v *view) uint64 {
	h := sha256.Sum256([]byte(id + "\x00" + v.titleKey + "\x00" + v.usageKey))
	return binary.BigEndian.Uint64(h[:8])
}

// events turns one pass's rows into events: the sessions first, then the messages in row order.
func (p *Parser) events(r *rows, st *dbState) []event.Event {
	var out []event.Event
	byID := map[string]*session{}
	usage := map[string][]usageRow{}
	for _, u := range r.usage {
		usage[u.session] = append(usage[u.session], u)
	}
	// The sessions that have rows in this pass, with the time of their newest row.
	touched := map[string]float64{}
	for i := range r.messages {
		touched[r.messages[i].session] = max(touched[r.messages[i].session], unixSecs(r.messages[i].ts))
	}
	if st.Sessions == nil {
		st.Sessions = map[string]string{}
	}
	seen := map[string]bool{}
	views := make([]view, len(r.sessions))
	valid := make([]bool, len(r.sessions))
	var settled [buckets][]int // per bucket, the settled sessions (indexes in r.sessions)
	var sums [buckets]uint64
	for i := range r.sessions {
		row := &r.sessions[i]
		s := &session{id: row.id, cwd: strings.TrimSpace(row.cwd), model: transcript.CutRunes(strings.TrimSpace(row.model), 200),
			created: secs(row.started)}
		byID[row.id] = s
		seen[row.id] = true
		if s.created.IsZero() || s.id == "" {
			continue // no time to report it at; its messages still carry theirs
		}
		valid[i] = true
		views[i] = p.viewOf(row, s.model, usage[row.id])
		v := &views[i]
		prev, known := st.Sessions[row.id]
		if !known && row.started <= st.Settled {
			b := bucketOf(row.id)
			settled[b] = append(settled[b], i)
			sums[b] ^= settledSum(row.id, v)
			continue
		}
		evs, e := p.report(s, row, v, parseEntry(prev), known)
		out = append(out, evs...)
		e.active = max(e.active, activity(row, v, touched[row.id]))
		st.Sessions[row.id] = e.String()
	}
	for id := range st.Sessions {
		if !seen[id] {
			delete(st.Sessions, id)
		}
	}
	// A bucket whose sum changed holds a settled session that changed (or that appeared with an
	// old start): its sessions are reported again, under the same ids. A settled session with
	// rows in this pass joins the recent ones.
	for b := range buckets {
		changed := b >= len(st.Sums) || sums[b] != st.Sums[b]
		for _, i := range settled[b] {
			row := &r.sessions[i]
			_, active := touched[row.id]
			if !changed && !active {
				continue
			}
			e := entry{title: views[i].titleKey, usage: views[i].usageKey}
			if changed {
				var evs []event.Event
				evs, e = p.report(byID[row.id], row, &views[i], entry{}, false)
				out = append(out, evs...)
			}
			if active {
				e.active = activity(row, &views[i], touched[row.id])
				st.Sessions[row.id] = e.String()
			}
		}
	}
	p.settle(r, st, views, valid)
	for i := range r.messages {
		m := &r.messages[i]
		p.stats.Lines++
		s := byID[m.session]
		if s == nil {
			s = &session{id: m.session}
		}
		evs, err := p.messageEvents(s, m)
		if err != nil {
			p.stats.Malformed++
		}
		out = append(out, evs...)
	}
	return out
}

// settle keeps the maxRecent most recently active sessions in the State, moves the others to the
// settled ones (raising Settled to their start) and sums the settled sessions' fingerprints.
func (p *Parser) settle(r *rows, st *dbState, views []view, valid []bool) {
	if n := len(st.Sessions) - maxRecent; n > 0 {
		type recent struct {
			id     string
			active float64
		}
		list := make([]recent, 0, len(st.Sessions))
		for id, e := range st.Sessions {
			list = append(list, recent{id, parseEntry(e).active})
		}
		slices.SortFunc(list, func(a, b recent) int {
			if c := cmp.Compare(a.active, b.active); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
		drop := map[string]bool{}
		for _, s := range list[:n] {
			drop[s.id] = true
			delete(st.Sessions, s.id)
		}
		for i := range r.sessions {
			if valid[i] && drop[r.sessions[i].id] {
				st.Settled = max(st.Settled, r.sessions[i].started)
			}
		}
	}
	if st.Settled == 0 {
		st.Sums = nil
		return
	}
	st.Sums = make([]uint64, buckets)
	for i := range r.sessions {
		row := &r.sessions[i]
		if _, recent := st.Sessions[row.id]; valid[i] && !recent {
			st.Sums[bucketOf(row.id)] ^= settledSum(row.id, &views[i])
		}
	}
}

// report is a session's events given what was reported of it (prev; known false for a session
// not reported yet), and what is reported of it once they are.
func (p *Parser) report(s *session, row *sessionRow, v *view, prev entry, known bool) ([]event.Event, entry) {
	var out []event.Event
	if !known {
		ev := p.newEvent(s, event.KindSession, event.ID(Client, "session", s.id), s.created)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: s.cwd, TranscriptPath: p.src.Path, Model: s.model,
			ParentSessionID: transcript.CutRunes(row.parent, 200), GitBranch: transcript.CutRunes(row.branch, 200), StartedAt: s.created}
		out = append(out, ev)
	}
	next := entry{title: prev.title, usage: v.usageKey, active: prev.active}
	if v.title != "" {
		next.title = v.titleKey
		if v.titleKey != prev.title {
			at := secs(row.active)
			if at.Before(s.created) {
				at = s.created
			}
			ev := p.newEvent(s, event.KindSession, event.ID(Client, "session", s.id, "title", v.title), at)
			ev.Session = &event.Session{Title: transcript.Clip(v.title, maxTarget), TitleByUser: row.titleSource == "user", TranscriptPath: p.src.Path}
			out = append(out, ev)
		}
	}
	if v.usageKey != prev.usage {
		// The session's totals less what its main-loop rows hold (see the package doc).
		out = append(out, p.usageEvent(s, event.ID(Client, "usage", s.id), s.model, remainder(row.fig, v.rows), s.created)...)
		for _, u := range v.rows {
			at := secs(u.firstSeen)
			if at.IsZero() {
				at = s.created
			}
			model := transcript.CutRunes(strings.TrimSpace(u.model), 200)
			id := event.ID(Client, "usage", s.id, u.model, u.provider, u.baseURL, u.mode, u.task)
			out = append(out, p.usageEvent(s, id, model, u.fig, at)...)
		}
	}
	return out, next
}

// mainLoop reports whether a session_model_usage row's task is one whose usage Hermes also adds
// to the session's totals: the main loop's ("") and a voice turn's ("voice_chat"), both written
// by update_token_counts; the auxiliary tasks' rows (record_auxiliary_usage: title_generation,
// compression, vision, ...) are not in the totals.
func mainLoop(task string) bool { return task == "" || task == "voice_chat" }

// remainder is the part of a session's totals that its main-loop rows do not hold: per figure,
// the totals less the rows', never below zero (Hermes's own usage analytics split them so).
func remainder(total figures, rows []usageRow) figures {
	var in, out, cacheRead, cacheWrite, reasoning int64
	var est, actual float64
	for _, u := range rows {
		if !mainLoop(u.task) {
			continue
		}
		in += clean(u.fig.in)
		out += clean(u.fig.out)
		cacheRead += clean(u.fig.cacheRead)
		cacheWrite += clean(u.fig.cacheWrite)
		reasoning += clean(u.fig.reasoning)
		est += sane(u.fig.est)
		actual += sane(u.fig.actual)
	}
	less := func(a, b int64) int64 { return max(clean(a)-b, 0) }
	lessUSD := func(a, b float64) float64 {
		if d := sane(a) - b; d > 1e-9 {
			return d
		}
		return 0
	}
	return figures{in: less(total.in, in), out: less(total.out, out), cacheRead: less(total.cacheRead, cacheRead),
		cacheWrite: less(total.cacheWrite, cacheWrite), reasoning: less(total.reasoning, reasoning),
		est: lessUSD(total.est, est), actual: lessUSD(total.actual, actual)}
}

// usageEvent is the usage of one row's cumulative figures (see the package doc).
func (p *Parser) usageEvent(s *session, id, model string, f figures, at time.Time) []event.Event {
	tok := f.tokens()
	if tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation == 0 {
		return nil
	}
	var u *event.TokenUsage
	if actual := sane(f.actual); actual > 0 {
		u = &event.TokenUsage{Tokens: tok, Model: model, CostUSD: actual, Origin: "transcript", Reliability: event.ReliabilityApproximate}
	} else {
		u = transcript.PricedUsage(p.prices(), model, "", tok, sane(f.est), at)
	}
	if u == nil {
		return nil
	}
	ev := p.newEvent(s, event.KindTokenUsage, id, at)
	ev.TokenUsage = u
	return []event.Event{ev}
}

// messageEvents turns one message row into events; an error reports a part of it that does not
// decode (its other parts are still returned).
func (p *Parser) messageEvents(s *session, m *msgRow) ([]event.Event, error) {
	if s.id == "" {
		return nil, transcript.Malformed(Client, "message %d has no session", m.rowID)
	}
	t := secs(m.ts)
	if t.IsZero() {
		t = s.created
	}
	if t.IsZero() {
		return nil, transcript.Malformed(Client, "message %d has no time", m.rowID)
	}
	tsKey := strconv.FormatFloat(m.ts, 'f', 6, 64)
	text := strings.TrimSpace(decodeContent(m.content))
	switch m.role {
	case "user":
		switch {
		case text == "":
			return nil, nil
		case m.summary:
			ev := p.newEvent(s, event.KindAction, event.ID(Client, "compacted", s.id, tsKey), t)
			ev.Action = &event.Action{Type: event.ActionContextCompacted, Transcript: p.src.Path}
			return append([]event.Event{ev}, p.textMessage(s, m, 0, t, event.RoleSummary, text, tsKey)...), nil
		case m.displayKind == "hidden":
			return nil, nil
		}
		ev := p.newEvent(s, event.KindAction, event.ID(Client, "prompt", s.id, tsKey, transcript.TextHash(text)), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), Transcript: p.src.Path}
		return append([]event.Event{ev}, p.textMessage(s, m, 0, t, event.RoleUser, text, tsKey)...), nil
	case "assistant":
		var out []event.Event
		out = append(out, p.textMessage(s, m, 0, t, event.RoleThinking, m.reasoning, tsKey)...)
		if m.summary {
			out = append(out, p.textMessage(s, m, 1, t, event.RoleSummary, text, tsKey)...)
		} else {
			out = append(out, p.textMessage(s, m, 1, t, event.RoleAssistant, text, tsKey)...)
		}
		calls, err := decodeCalls(m.calls)
		for j, c := range calls {
			out = append(out, p.callEvents(s, m, 2+j, t, c)...)
		}
		return out, err
	case "tool":
		return p.resultEvents(s, m, t), nil
	case "system", "":
		return nil, nil
	}
	p.stats.CountUnknown("role " + m.role)
	return nil, nil
}

func (p *Parser) textMessage(s *session, m *msgRow, part int, t time.Time, role, text, tsKey string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	msg := event.Message{Role: role, Text: text}
	if role != event.RoleUser && role != event.RoleSummary {
		msg.Model = s.model
	}
	return []event.Event{p.message(s, event.ID(Client, "message", s.id, tsKey, role, transcript.TextHash(text)), m, part, t, msg)}
}

func (p *Parser) message(s *session, id string, m *msgRow, part int, t time.Time, msg event.Message) event.Event {
	ev := p.newEvent(s, event.KindMessage, id, t)
	if m.rowID > 0 && m.rowID < math.MaxInt64/128 {
		msg.Seq = m.rowID*64 + int64(min(part, maxPart))
	}
	ev.Message = &msg
	return ev
}

// call is one entry of an assistant row's tool_calls.
type call struct {
	id, name string
	args     map[string]any
	raw      json.RawMessage
}

// decodeCalls reads an assistant row's tool_calls: [{id, type "function", function {name,
// arguments}}], arguments JSON text or an object.
func decodeCalls(s string) ([]call, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" || s == "[]" {
		return nil, nil
	}
	if len(s) > maxToolCalls {
		return nil, transcript.Malformed(Client, "tool_calls of %d bytes or more, not read", maxToolCalls)
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, transcript.Malformed(Client, "tool_calls do not parse: %v", err)
	}
	var out []call
	for _, raw := range list {
		var c struct {
			ID       json.RawMessage `json:"id"`
			Name     json.RawMessage `json:"name"`
			Args     json.RawMessage `json:"arguments"`
			Function struct {
				Name json.RawMessage `json:"name"`
				Args json.RawMessage `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(raw, &c)
		id := str(c.ID)
		if id == "" {
			continue
		}
		args := c.Function.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = c.Args
		}
		if inner := str(args); inner != "" {
			args = json.RawMessage(inner)
		}
		var m map[string]any
		_ = json.Unmarshal(args, &m)
		out = append(out, call{id: transcript.CutBytes(id, 200), name: transcript.CutBytes(transcript.FirstNonEmpty(str(c.Function.Name), str(c.Name)), 200),
			args: m, raw: args})
	}
	return out, nil
}

// callEvents are a tool call's action and tool_call message.
func (p *Parser) callEvents(s *session, m *msgRow, part int, t time.Time, c call) []event.Event {
	typ, target := toolOf(c.name, c.args)
	target = clipTarget(p.relPath(s, typ, target))
	p.calls[s.id+"\x00"+c.id] = callInfo{typ: typ, target: target, at: t}
	id := event.ID(Client, "action", s.id, c.id)
	ev := p.newEvent(s, event.KindAction, id, t)
	ev.Action = &event.Action{Type: typ, Tool: transcript.FirstNonEmpty(c.name, "tool"), Target: target, ToolUseID: c.id,
		InputHash: transcript.InputHash(c.raw), Model: s.model, Transcript: p.src.Path}
	msg := p.message(s, event.ID(Client, "message", s.id, "call", c.id), m, part, t, event.Message{Role: event.RoleToolCall,
		Text: target, Tool: transcript.FirstNonEmpty(c.name, "tool"), ToolUseID: c.id, Model: s.model})
	return []event.Event{ev, msg}
}

// resultEvents is a tool row: its call's action, same id, with the outcome.
func (p *Parser) resultEvents(s *session, m *msgRow, t time.Time) []event.Event {
	callID := transcript.CutBytes(strings.TrimSpace(m.callID), 200)
	if callID == "" {
		return nil
	}
	name := transcript.CutBytes(strings.TrimSpace(m.tool), 200)
	a := &event.Action{Tool: name, ToolUseID: callID, Transcript: p.src.Path}
	a.Type, _ = toolOf(name, nil)
	if c, ok := p.calls[s.id+"\x00"+callID]; ok {
		a.Type, a.Target = c.typ, c.target
		if d := t.Sub(c.at).Milliseconds(); d > 0 {
			a.DurationMs = d
		}
	}
	ok := true
	errText := ""
	if e := strings.TrimSpace(m.errField); e != "" && e != "0" && e != "false" && e != "null" {
		ok, errText = false, e
	}
	if v := strings.TrimSpace(m.successField); v == "0" || v == "false" {
		ok = false
	}
	if code := strings.TrimSpace(m.exitCode); code != "" && code != "0" {
		if n, err := strconv.ParseFloat(code, 64); err == nil && n != 0 {
			ok = false
			errText = transcript.FirstNonEmpty(errText, "exit code "+code)
		}
	}
	out := m.outputField
	if out == "" {
		out = m.content
	}
	a.Success = &ok
	if !ok {
		a.Error = clipError(transcript.FirstNonEmpty(errText, out, "failed"))
	}
	a.Output = clipOutput(out)
	a.OutputSize = int64(len(out))
	ev := p.newEvent(s, event.KindAction, event.ID(Client, "action", s.id, callID), t)
	ev.Action = a
	return []event.Event{ev}
}

// toolOf maps a tool call to its action type and target.
func toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "terminal":
		return event.ActionRunCommand, str1(in, "command")
	case "execute_code":
		return event.ActionRunCommand, str1(in, "code")
	case "read_file":
		return event.ActionReadFile, str1(in, "path")
	case "write_file":
		return event.ActionWriteFile, str1(in, "path")
	case "patch":
		if path := str1(in, "path"); path != "" {
			return event.ActionEditFile, path
		}
		return event.ActionEditFile, patchFile(str1(in, "patch"))
	case "search_files":
		pattern := str1(in, "pattern")
		if str1(in, "target") == "files" {
			return event.ActionSearchFiles, pattern
		}
		if dir := str1(in, "path"); dir != "" && dir != "." && pattern != "" {
			pattern += " in " + dir
		}
		return event.ActionSearchText, pattern
	case "web_search":
		return event.ActionWebSearch, str1(in, "query")
	case "web_extract", "web_crawl", "browser_navigate":
		return event.ActionWebFetch, first(in, "url", "urls")
	case "delegate_task":
		if t := str1(in, "goal"); t != "" {
			return event.ActionSpawnSubagent, t
		}
		if tasks, ok := in["tasks"].([]any); ok && len(tasks) > 0 {
			if task, ok := tasks[0].(map[string]any); ok {
				return event.ActionSpawnSubagent, str1(task, "goal")
			}
		}
		return event.ActionSpawnSubagent, ""
	case "todo":
		return event.ActionTodoUpdate, ""
	case "clarify":
		return event.ActionAskUser, str1(in, "question")
	}
	if rest, ok := strings.CutPrefix(name, "mcp_"); ok && rest != "" {
		return event.ActionMCPCall, rest
	}
	return event.ActionUnknown, ""
}

// contentPrefix marks a row whose content Hermes stored as JSON (a list of parts: text and images)
// rather than text.
const contentPrefix = "\x00json:"

// decodeContent is a row's content as text: a JSON-encoded content's text parts joined, "[image]"
// for an image part. It reads the parts in order as far as the JSON goes, so content cut short
// (a pass reads its first 64 KB) keeps the text before the cut.
func decodeContent(s string) string {
	rest, ok := strings.CutPrefix(s, contentPrefix)
	if !ok {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	type level struct{ object, expectKey bool }
	var stack []level
	var key string
	var parts []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, level{object: v == '{', expectKey: v == '{'})
				continue
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		default:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				key, _ = v.(string)
				stack[n-1].expectKey = false
				continue
			}
			if str, isStr := v.(string); isStr {
				switch {
				case len(stack) == 0:
					parts = append(parts, str)
				case key == "text" && stack[len(stack)-1].object:
					parts = append(parts, str)
				case key == "type" && (str == "image_url" || str == "image" || str == "input_image"):
					parts = append(parts, "[image]")
				}
			}
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].expectKey = true
		}
	}
	return strings.Join(parts, "\n")
}

// patchFile is the first file a V4A patch names ("*** Update File: path").
func patchFile(patch string) string {
	for _, line := range strings.SplitN(patch, "\n", 50) {
		for _, prefix := range []string{"*** Update File:", "*** Add File:", "*** Delete File:"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}

// relPath makes a file target relative to the session's project.
func (p *Parser) relPath(s *session, typ event.ActionType, target string) string {
	switch typ {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		return transcript.RelPath(target, s.cwd, p.project(s.cwd))
	}
	return target
}

// str reads a JSON string; anything else is "".
func str(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func strAny(v any) string {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// str1 is the first of keys that is a non-empty string in m.
func str1(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := strAny(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// first is str1, or the first string of the first of keys that is a list.
func first(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if s := strings.TrimSpace(v); s != "" {
				return s
			}
		case []any:
			for _, e := range v {
				if s := strAny(e); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
