package cursor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// Limits of what an event and the state carry.
const (
	maxTarget = 500
	maxError  = 2 << 10
	maxOutput = 8 << 10
	maxText   = 64 << 10
	maxChats  = 256 // chats remembered in State
	batchRows = 500 // rows read at a time
)

// chatMark is what State remembers of a chat reported.
type chatMark struct {
	ID    string `json:"id"`
	Title string `json:"t,omitempty"` // fingerprint of the title reported
	Model string `json:"m,omitempty"` // the model reported
	Dir   string `json:"dir,omitempty"`
}

// state is the parser's State (see the package doc).
type state struct {
	Row   int64      `json:"row"`
	Chats []chatMark `json:"chats,omitempty"` // the latest last
}

func (s state) clone() state {
	s.Chats = slices.Clone(s.Chats)
	return s
}

func (s *state) mark(id string) (chatMark, bool) {
	for i := len(s.Chats) - 1; i >= 0; i-- {
		if s.Chats[i].ID == id {
			return s.Chats[i], true
		}
	}
	return chatMark{}, false
}

// remember keeps m as the latest chat, forgetting the oldest beyond maxChats.
func (s *state) remember(m chatMark) {
	s.Chats = slices.DeleteFunc(s.Chats, func(c chatMark) bool { return c.ID == m.ID })
	s.Chats = append(s.Chats, m)
	if n := len(s.Chats); n > maxChats {
		s.Chats = append(s.Chats[:0:0], s.Chats[n-maxChats:]...)
	}
}

// Parser reads one global state database (a transcript.Poller).
type Parser struct {
	a       *Adapter
	src     transcript.Source
	st      state
	stats   transcript.Stats
	userDir string
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(a *Adapter, src transcript.Source, raw []byte) *Parser {
	p := &Parser{a: a, src: src, userDir: filepath.Dir(filepath.Dir(src.Path))}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns the watermark as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// Poll reads the rows written since the watermark and commits the watermark only after a
// successful pass.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := readPass(ctx, p.src.Path, p.st.clone, p.read)
	if err != nil {
		return nil, err
	}
	p.st = work
	p.stats.Lines += got.stats.Lines
	p.stats.Malformed += got.stats.Malformed
	for k, v := range got.stats.Unknown {
		if p.stats.Unknown == nil {
			p.stats.Unknown = map[string]int64{}
		}
		p.stats.Unknown[k] += v
	}
	p.stats.Events += int64(len(got.evs))
	return got.evs, nil
}

// pass is what one pass read and made.
type pass struct {
	p      *Parser
	st     *state
	evs    []event.Event
	stats  transcript.Stats
	chats  map[string]*chat
	roots  map[string]string // project.Root by directory
	folder map[string]string // the workspaces' composers' folders, read at most once a pass
}

// chat is what the events of one composer share.
type chat struct {
	id               string
	created, updated int64 // Unix ms
	model, dir       string
	known            bool           // its composerData was read
	order            map[string]int // the place of each bubble in the conversation, from 1
}

type row struct {
	id    int64
	key   string
	value []byte
}

// read reads the rows past the watermark, batch by batch, in one read transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*pass, error) {
	ps := &pass{p: p, st: st, chats: map[string]*chat{}, roots: map[string]string{}}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'cursorDiskKV'").Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return ps, tx.Commit() // a release before the Composer: no chats here
	}
	for {
		q, err := tx.QueryContext(ctx, `SELECT rowid, key, value FROM cursorDiskKV
			WHERE rowid > ? AND (key LIKE 'composerData:%' OR key LIKE 'bubbleId:%') ORDER BY rowid LIMIT ?`, st.Row, batchRows)
		if err != nil {
			return nil, err
		}
		var rows []row
		for q.Next() {
			var r row
			var v sql.RawBytes
			if err := q.Scan(&r.id, &r.key, &v); err != nil {
				q.Close()
				return nil, err
			}
			r.value = append([]byte(nil), v...)
			rows = append(rows, r)
		}
		if err := sqliteread.CloseRows(q); err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			break
		}
		if err := ps.batch(ctx, tx, rows); err != nil {
			return nil, err
		}
		st.Row = rows[len(rows)-1].id
		if len(rows) < batchRows {
			break
		}
	}
	ps.fillProjects()
	return ps, tx.Commit()
}

// fillProjects gives the events of a chat whose folder was not known when they were made (a
// composer read before its bubbles) the folder learnt since.
func (ps *pass) fillProjects() {
	for i := range ps.evs {
		e := &ps.evs[i]
		if e.Project != "" {
			continue
		}
		c := ps.chats[e.SessionID]
		if c == nil {
			continue
		}
		dir := ps.dir(c)
		if dir == "" {
			continue
		}
		e.Project = ps.project(dir)
		if e.Session != nil && e.Session.State == event.SessionStarted && e.Session.Cwd == "" {
			e.Session.Cwd = dir
		}
	}
}

// batch turns a batch of rows into events: the composers first, then the bubbles, whose
// composers not in the batch are looked up.
func (ps *pass) batch(ctx context.Context, tx *sql.Tx, rows []row) error {
	var bubbles []row
	for _, r := range rows {
		ps.stats.Lines++
		if id, ok := strings.CutPrefix(r.key, "composerData:"); ok {
			if err := ps.composer(id, r.value); err != nil {
				ps.stats.Malformed++
			}
			continue
		}
		bubbles = append(bubbles, r)
	}
	for _, r := range bubbles {
		cid, bid, ok := strings.Cut(strings.TrimPrefix(r.key, "bubbleId:"), ":")
		if !ok || cid == "" {
			ps.stats.CountUnknown("bubble key without a composer")
			continue
		}
		c, err := ps.chat(ctx, tx, cid)
		if err != nil {
			return err
		}
		if err := ps.bubble(c, bid, r.value); err != nil {
			ps.stats.Malformed++
		}
	}
	return nil
}

// chat returns the composer cid, looking up its composerData when this pass did not read it.
func (ps *pass) chat(ctx context.Context, tx *sql.Tx, cid string) (*chat, error) {
	if c, ok := ps.chats[cid]; ok {
		return c, nil
	}
	c := &chat{id: cid}
	if m, ok := ps.st.mark(cid); ok {
		c.model, c.dir = m.Model, m.Dir
	}
	var created, updated, model, headers any
	err := tx.QueryRowContext(ctx, `SELECT
		CASE WHEN json_valid(v) THEN json_extract(v, '$.createdAt') END,
		CASE WHEN json_valid(v) THEN json_extract(v, '$.lastUpdatedAt') END,
		CASE WHEN json_valid(v) THEN json_extract(v, '$.modelConfig.modelName') END,
		CASE WHEN json_valid(v) THEN json_extract(v, '$.fullConversationHeadersOnly') END
		FROM (SELECT CAST(value AS TEXT) AS v FROM cursorDiskKV WHERE key = ?)`, "composerData:"+cid).Scan(&created, &updated, &model, &headers)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return nil, err
	default:
		c.created, c.updated = msOf(created), msOf(updated)
		if s, ok := model.(string); ok && modelName(s) != "" {
			c.model = transcript.CutRunes(modelName(s), 200)
		}
		if s, ok := headers.(string); ok {
			var hs []json.RawMessage
			if json.Unmarshal([]byte(s), &hs) == nil {
				c.order = bubbleOrder(hs)
			}
		}
	}
	ps.chats[cid] = c
	return c, nil
}

// composerData is the part of a composer's JSON this reader uses.
type composerData struct {
	ComposerID    string          `json:"composerId"`
	Name          string          `json:"name"`
	CreatedAt     json.RawMessage `json:"createdAt"`
	LastUpdatedAt json.RawMessage `json:"lastUpdatedAt"`
	ModelConfig   *struct {
		ModelName string `json:"modelName"`
	} `json:"modelConfig"`
	Conversation []json.RawMessage `json:"conversation"`
	Headers      []json.RawMessage `json:"fullConversationHeadersOnly"`
}

// composer reads a composerData row: the chat's session events, and its inline bubbles.
func (ps *pass) composer(id string, raw []byte) error {
	var d composerData
	if err := decodeObject(raw, &d); err != nil {
		return err
	}
	if id == "" {
		id = d.ComposerID
	}
	if id == "" {
		return transcript.Malformed(Client, "composer without an id")
	}
	c := &chat{id: id, created: msOf(rawValue(d.CreatedAt)), updated: msOf(rawValue(d.LastUpdatedAt)), known: true,
		order: bubbleOrder(append(slices.Clone(d.Headers), d.Conversation...))}
	if d.ModelConfig != nil {
		c.model = transcript.CutRunes(modelName(d.ModelConfig.ModelName), 200)
	}
	m, seen := ps.st.mark(id)
	c.dir = m.Dir
	if prev, ok := ps.chats[id]; ok && prev.dir != "" {
		c.dir = prev.dir
	}
	ps.chats[id] = c
	// A chat opened and left without a message is no session yet: Cursor rewrites the row when
	// the first message comes.
	if c.created > 0 && len(d.Headers)+len(d.Conversation) > 0 {
		t := time.UnixMilli(c.created)
		if !seen {
			ev := ps.newEvent(c, event.KindSession, event.ID(Client, "session", id), t)
			ev.Session = &event.Session{State: event.SessionStarted, TranscriptPath: ps.p.src.Path, Model: c.model, StartedAt: t.UTC()}
			if dir := ps.dir(c); dir != "" {
				ev.Session.Cwd = dir
			}
			ps.evs = append(ps.evs, ev)
			m.Model = c.model
		}
		if c.model != "" && c.model != m.Model {
			ev := ps.newEvent(c, event.KindSession, event.ID(Client, "session", id, "model", c.model), ps.chatTime(c))
			ev.Session = &event.Session{Model: c.model, TranscriptPath: ps.p.src.Path}
			ps.evs = append(ps.evs, ev)
			m.Model = c.model
		}
		if title, ok := event.CleanTitle(d.Name); ok {
			if k := shortKey(title); k != m.Title {
				ev := ps.newEvent(c, event.KindSession, event.ID(Client, "session", id, "title", title), ps.chatTime(c))
				ev.Session = &event.Session{Title: title, TranscriptPath: ps.p.src.Path}
				ps.evs = append(ps.evs, ev)
				m.Title = k
			}
		}
		m.ID, m.Dir = id, c.dir
		ps.st.remember(m)
	}
	for _, b := range d.Conversation { // releases before the split storage keep the bubbles here
		var probe struct {
			BubbleID string `json:"bubbleId"`
		}
		if json.Unmarshal(b, &probe) != nil || probe.BubbleID == "" {
			ps.stats.CountUnknown("inline bubble without an id")
			continue
		}
		if err := ps.bubble(c, probe.BubbleID, b); err != nil {
			ps.stats.Malformed++
		}
	}
	return nil
}

// bubbleData is the part of a bubble's JSON this reader uses.
type bubbleData struct {
	BubbleID string `json:"bubbleId"`
	Type     int    `json:"type"`
	Text     string `json:"text"`
	Thinking *struct {
		Text string `json:"text"`
	} `json:"thinking"`
	AllThinkingBlocks []struct {
		Text string `json:"text"`
	} `json:"allThinkingBlocks"`
	CreatedAt json.RawMessage `json:"createdAt"`
	ModelInfo *struct {
		ModelName string `json:"modelName"`
	} `json:"modelInfo"`
	TokenCount *struct {
		InputTokens  json.RawMessage `json:"inputTokens"`
		OutputTokens json.RawMessage `json:"outputTokens"`
	} `json:"tokenCount"`
	TimingInfo *struct {
		ClientRPCSendTime json.RawMessage `json:"clientRpcSendTime"`
		ClientEndTime     json.RawMessage `json:"clientEndTime"`
	} `json:"timingInfo"`
	ToolFormerData      *toolFormer `json:"toolFormerData"`
	WorkspaceProjectDir string      `json:"workspaceProjectDir"`
	WorkspaceURIs       []string    `json:"workspaceUris"`
}

// toolFormer is a bubble's tool call.
type toolFormer struct {
	ToolCallID   string          `json:"toolCallId"`
	Status       string          `json:"status"`
	Name         string          `json:"name"`
	RawArgs      json.RawMessage `json:"rawArgs"`
	Params       json.RawMessage `json:"params"`
	Result       json.RawMessage `json:"result"`
	UserDecision string          `json:"userDecision"`
}

// bubble reads one message of chat c.
func (ps *pass) bubble(c *chat, bid string, raw []byte) error {
	var b bubbleData
	if err := decodeObject(raw, &b); err != nil {
		return err
	}
	if bid == "" {
		bid = b.BubbleID
	}
	if dir := bubbleDir(&b); dir != "" && dir != c.dir {
		c.dir = dir
		if m, ok := ps.st.mark(c.id); ok {
			m.Dir = dir
			ps.st.remember(m)
		}
	}
	t := ps.bubbleTime(c, &b)
	if t.IsZero() {
		ps.stats.CountUnknown("bubble without a time")
		return nil
	}
	model := c.model
	if b.ModelInfo != nil && modelName(b.ModelInfo.ModelName) != "" {
		model = transcript.CutRunes(modelName(b.ModelInfo.ModelName), 200)
	}
	switch b.Type {
	case 1:
		if text := strings.TrimSpace(b.Text); text != "" {
			a := &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(transcript.CutBytes(text, maxText)), MessageID: bid}
			ps.action(c, event.ID(Client, "prompt", c.id, bid), t, a)
			ps.message(c, bid, 0, t, event.Message{Role: event.RoleUser, Text: text, MessageID: bid})
		}
	case 2:
		ps.message(c, bid, 0, t, event.Message{Role: event.RoleThinking, Text: thinkingText(&b), MessageID: bid, Model: model})
		ps.message(c, bid, 1, t, event.Message{Role: event.RoleAssistant, Text: b.Text, MessageID: bid, Model: model})
		if tf := b.ToolFormerData; tf != nil && (tf.Name != "" || tf.ToolCallID != "") {
			a := ps.tool(c, bid, tf, model, t)
			tool := a.Tool
			if tool == "" && a.ToolUseID == "" {
				tool = string(a.Type)
			}
			ps.message(c, bid, 2, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: tool, ToolUseID: a.ToolUseID,
				MessageID: bid, Model: model})
		}
	default:
		ps.stats.CountUnknown(fmt.Sprintf("bubble type %d", b.Type))
	}
	if tc := b.TokenCount; tc != nil {
		in, out := transcript.Count(tc.InputTokens), transcript.Count(tc.OutputTokens)
		if in+out > 0 {
			tok := event.Tokens{Input: in, Output: out}
			tu := &event.TokenUsage{Tokens: tok, MessageID: bid, Model: model, Origin: "transcript", Reliability: event.ReliabilityUnknown}
			if model != "" {
				if usd, known := ps.p.a.prices().CostAt(priceName(model), tok, t); known {
					tu.CostUSD, tu.Reliability = usd, event.ReliabilityApproximate
				}
			}
			ev := ps.newEvent(c, event.KindTokenUsage, event.ID(Client, "usage", c.id, bid), t)
			ev.TokenUsage = tu
			ps.evs = append(ps.evs, ev)
		}
	}
	return nil
}

// tool reads a bubble's tool call, and returns its action.
func (ps *pass) tool(c *chat, bid string, tf *toolFormer, model string, t time.Time) *event.Action {
	name := strings.TrimSpace(tf.Name)
	args := jsonText(tf.Params)
	if len(readArgs(args)) == 0 {
		args = jsonText(tf.RawArgs)
	}
	typ := ToolType(name)
	a := &event.Action{Type: typ, Tool: transcript.CutRunes(name, 200), ToolUseID: tf.ToolCallID, MessageID: bid, Model: model,
		InputHash: hashInput(args)}
	a.Target = clipTarget(ps.target(c, typ, readArgs(args)))
	result := jsonText(tf.Result)
	fail := func(msg string) {
		f := false
		a.Success, a.Error = &f, clipError(msg)
	}
	switch strings.ToLower(tf.Status) {
	case "completed":
		out, res := resultText(typ, result)
		a.Output, a.OutputSize = clipOutput(out), int64(len(result))
		switch {
		case strings.EqualFold(tf.UserDecision, "rejected") || res.Rejected:
			fail("rejected by the user")
		case res.ExitCode != nil && *res.ExitCode != 0:
			fail(fmt.Sprintf("exit code %d", *res.ExitCode))
		default:
			ok := true
			a.Success = &ok
		}
	case "error":
		out, _ := resultText(typ, result)
		if out == "" {
			out = "error"
		}
		fail(out)
	case "cancelled":
		fail("cancelled")
	}
	key := tf.ToolCallID
	if key == "" {
		key = bid
	}
	ps.action(c, event.ID(Client, "action", c.id, key), t, a)
	return a
}

// message adds a message of bubble bid (none for a text role without text): id
// event.ID("cursor", "message", composer id, bubble id, block), Seq the bubble's place in the
// conversation × 64 + block.
func (ps *pass) message(c *chat, bid string, block int, t time.Time, m event.Message) {
	if m.Role != event.RoleToolCall {
		if m.Text = transcript.Clip(strings.TrimSpace(m.Text), maxText); m.Text == "" {
			return
		}
	}
	m.Seq = int64(c.order[bid])*64 + int64(block)
	ev := ps.newEvent(c, event.KindMessage, event.ID(Client, "message", c.id, bid, fmt.Sprint(block)), t)
	ev.Message = &m
	ps.evs = append(ps.evs, ev)
}

// thinkingText is an assistant bubble's thinking: thinking.text, else its thinking blocks' text.
func thinkingText(b *bubbleData) string {
	if b.Thinking != nil && strings.TrimSpace(b.Thinking.Text) != "" {
		return b.Thinking.Text
	}
	var parts []string
	for _, t := range b.AllThinkingBlocks {
		if strings.TrimSpace(t.Text) != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// bubbleOrder numbers the bubbles of a conversation's headers (or inline bubbles) from 1.
func bubbleOrder(headers []json.RawMessage) map[string]int {
	order := make(map[string]int, len(headers))
	for i, h := range headers {
		var x struct {
			BubbleID string `json:"bubbleId"`
		}
		if json.Unmarshal(h, &x) == nil && x.BubbleID != "" {
			if _, dup := order[x.BubbleID]; !dup {
				order[x.BubbleID] = i + 1
			}
		}
	}
	return order
}

// toolResult is the part of a result this reader uses.
type toolResult struct {
	Output     string `json:"output"`
	Contents   string `json:"contents"`
	Rejected   bool   `json:"rejected"`
	ExitCode   *int64 `json:"exitCodeV2"`
	ErrorField string `json:"error"`
}

// resultText returns what a result says: a command's output, a file's contents, an error, else
// the result as it is.
func resultText(typ event.ActionType, result []byte) (string, toolResult) {
	var r toolResult
	if len(result) == 0 {
		return "", r
	}
	if json.Unmarshal(result, &r) != nil {
		return string(result), toolResult{}
	}
	switch {
	case r.Output != "":
		return r.Output, r
	case r.Contents != "":
		return r.Contents, r
	case r.ErrorField != "":
		return r.ErrorField, r
	}
	return string(result), r
}

func (ps *pass) newEvent(c *chat, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: c.id, Project: ps.project(ps.dir(c)), V: event.SchemaVersion}
}

func (ps *pass) action(c *chat, id string, t time.Time, a *event.Action) {
	a.Transcript = ps.p.src.Path
	ev := ps.newEvent(c, event.KindAction, id, t)
	ev.Action = a
	ps.evs = append(ps.evs, ev)
}

// dir is a chat's folder: from its bubbles, else from the workspace that lists it.
func (ps *pass) dir(c *chat) string {
	if c.dir != "" {
		return c.dir
	}
	if ps.folder == nil {
		ps.folder = ps.p.a.workspaceFolders(ps.p.userDir)
	}
	return ps.folder[c.id]
}

func (ps *pass) project(dir string) string {
	if dir == "" {
		return ""
	}
	if r, ok := ps.roots[dir]; ok {
		return r
	}
	r := project.Root(dir)
	ps.roots[dir] = r
	return r
}

// chatTime is the time of a chat's session events: its last update, else its creation.
func (ps *pass) chatTime(c *chat) time.Time {
	if c.updated > 0 {
		return time.UnixMilli(c.updated)
	}
	return time.UnixMilli(c.created)
}

// bubbleTime is a bubble's time (see the package doc); the zero time when none is known.
func (ps *pass) bubbleTime(c *chat, b *bubbleData) time.Time {
	cands := []int64{msOf(rawValue(b.CreatedAt))}
	if ti := b.TimingInfo; ti != nil {
		cands = append(cands, msOf(rawValue(ti.ClientRPCSendTime)), msOf(rawValue(ti.ClientEndTime)))
	}
	cands = append(cands, c.updated, c.created)
	for _, ms := range cands {
		if ms > 0 {
			return time.UnixMilli(ms)
		}
	}
	return time.Time{}
}

// bubbleDir is the folder a bubble names: workspaceProjectDir, else its first file:// workspace URI.
func bubbleDir(b *bubbleData) string {
	if d := strings.TrimSpace(b.WorkspaceProjectDir); d != "" && filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	for _, u := range b.WorkspaceURIs {
		if p := filePath(u); p != "" {
			return p
		}
	}
	return ""
}

// filePath returns the path of a file:// URI, "" for any other.
func filePath(uri string) string {
	u, err := url.Parse(strings.TrimSpace(uri))
	if err != nil || u.Scheme != "file" || u.Path == "" || !filepath.IsAbs(u.Path) {
		return ""
	}
	return filepath.Clean(u.Path)
}

// msOf reads a time as Cursor writes one: Unix milliseconds (a number or a numeric string) or an
// ISO 8601 string. 0 when it is neither, or outside 1971..2261.
func msOf(v any) int64 {
	var ms int64
	switch v := v.(type) {
	case float64:
		ms = int64(v)
	case int64:
		ms = v
	case string:
		if t, ok := transcript.ParseTime(strings.TrimSpace(v)); ok {
			return t.UnixMilli()
		}
		ms = transcript.Count([]byte(v))
	}
	if ms <= 31536000000 || ms >= 9214646400000 {
		return 0
	}
	return ms
}

// rawValue decodes a JSON number or string for msOf.
func rawValue(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// jsonText returns the JSON a field holds: Cursor stores rawArgs, params and result as JSON
// strings holding JSON; an object is taken as it is.
func jsonText(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []byte(s)
	}
	return raw
}

func decodeObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return transcript.Malformed(Client, "value is not a JSON object")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return transcript.Malformed(Client, "%v", err)
	}
	return nil
}

func shortKey(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// hashInput hashes a call's arguments, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
