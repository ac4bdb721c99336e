// Package compresstest rebuilds, from the shared corpus of real transcripts, the request bodies a
// client sent to its model API over a conversation, so that the compressor can be checked on
// thousands of realistic bodies: Claude Code transcripts become Anthropic Messages bodies (and the
// same conversations as Chat Completions bodies), Codex rollouts become Responses bodies. Every
// body it builds passes validate.Body; what real transcripts break and a real request never has
// is repaired the way the client repairs it, and counted in a Report.
//
// Only tests import it. The sessions Load returns are shared by every test of the process: read
// them, never modify them.
package compresstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/compress/validate"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// Session is the request sequence of one conversation, in the order the client would send it.
type Session struct {
	Name   string   // corpus file name (+ "#agent-..." for a subagent sequence)
	API    string   // validate.Anthropic, validate.Chat or validate.Responses
	Bodies [][]byte // request bodies, each the whole conversation so far
}

// Report says what Build did with each transcript: how many sessions and bodies it yielded, why
// it yielded none, and what it repaired.
type Report struct {
	Files []FileReport
}

// FileReport is what Build did with one transcript.
type FileReport struct {
	File     string         // path under the corpus folder, e.g. "claude-code/x.jsonl"
	Sessions int            // sessions built, all APIs
	Bodies   int            // bodies built, all APIs
	Skipped  string         // why the file yielded nothing ("" when it was used)
	Repairs  map[string]int // repairs by kind (the Repair* constants)
}

// Kinds of repair: what real transcripts hold and a real request never sends.
const (
	RepairDuplicateLine     = "duplicate line (same uuid) skipped"
	RepairBadLine           = "line that is not JSON skipped"
	RepairSyntheticMessage  = "synthetic assistant message (<synthetic> model) skipped"
	RepairEmptyText         = "empty or white-space text block dropped"
	RepairUnsignedThinking  = "thinking block without signature dropped"
	RepairEmptyMessage      = "assistant message with no usable content: no request rebuilt"
	RepairThinkingOnly      = "assistant turn of thinking blocks only (interrupted) dropped with its request, user turns around it merged"
	RepairMergedAssistant   = "assistant message right after another merged into its turn"
	RepairMergedUser        = "consecutive user messages merged into one turn (Claude Code writes one per tool result or prompt, and merges them before sending)"
	RepairLeadingAssistant  = "assistant turn before the first user turn dropped"
	RepairToolResultOrder   = "user turn reordered: tool_result blocks moved first"
	RepairOrphanToolResult  = "tool_result answering no tool_use of the previous turn dropped"
	RepairDuplicateResult   = "second tool_result for one tool_use dropped"
	RepairInterrupted       = "tool_use without tool_result: synthetic [interrupted] result added"
	RepairDuplicateToolUse  = "tool_use with an id seen before dropped"
	RepairBadToolInput      = "tool_use input that is not an object replaced by {}"
	RepairChatNoContent     = "Chat: assistant turn with neither text nor tool calls left out"
	RepairChatDroppedBlock  = "Chat: block with no Chat equivalent left out"
	RepairUserMessageEvent  = "Codex: user message found only as event_msg, added as a message item"
	RepairNullField         = "Codex: null item field dropped"
	RepairNamespace         = "Codex: function_call namespace folded into its name"
	RepairGhostSnapshot     = "Codex: ghost_snapshot item skipped"
	RepairOutputBeforeInput = "Codex: model output before any input: no request rebuilt"
)

// Repairs sums the repairs of every file.
func (r *Report) Repairs() map[string]int {
	out := map[string]int{}
	for _, f := range r.Files {
		for k, n := range f.Repairs {
			out[k] += n
		}
	}
	return out
}

// String lists the files, what they yielded, and the repair totals.
func (r *Report) String() string {
	var b strings.Builder
	for _, f := range r.Files {
		if f.Skipped != "" {
			fmt.Fprintf(&b, "%s: SKIPPED: %s\n", f.File, f.Skipped)
			continue
		}
		fmt.Fprintf(&b, "%s: %d sessions, %d bodies\n", f.File, f.Sessions, f.Bodies)
	}
	totals := r.Repairs()
	kinds := make([]string, 0, len(totals))
	for k := range totals {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "repair: %s: %d\n", k, totals[k])
	}
	return b.String()
}

// CorpusDir returns the corpus folder ($OBSERVER_CORPUS, else ../shared/corpus from the root of
// the repository, the folder holding go.mod) or "" when absent.
func CorpusDir() string {
	d := corpusPath()
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return ""
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// corpusPath is where the corpus should be, whether or not it is there. The repository root is
// found by walking up to go.mod, so that a test of any package finds the same folder (a path
// relative to the package, as transcripttest.CorpusRoot uses, depends on the package's depth).
func corpusPath() string {
	if d := os.Getenv("OBSERVER_CORPUS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "corpus")
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "corpus")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared", "corpus")
		}
		dir = parent
	}
}

// RequireCorpus returns the corpus folder, skipping tb, loudly and with the path it looked at,
// when the corpus is absent.
func RequireCorpus(tb testing.TB) string {
	tb.Helper()
	d := CorpusDir()
	if d == "" {
		tb.Skipf("SKIPPED: no corpus at %s; set OBSERVER_CORPUS to the corpus directory", corpusPath())
	}
	return d
}

var loaded struct {
	sync.Mutex
	dir      string
	sessions []Session
	report   *Report
	err      error
}

// Load builds the corpus's sessions once per process (skipping tb when the corpus is absent,
// failing it when the build fails) and returns them, shared: callers must not modify them.
func Load(tb testing.TB) ([]Session, *Report) {
	tb.Helper()
	dir := RequireCorpus(tb)
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.dir != dir || (loaded.sessions == nil && loaded.err == nil) {
		loaded.dir = dir
		loaded.sessions, loaded.report, loaded.err = Build(dir)
	}
	if loaded.err != nil {
		tb.Fatalf("build request sequences from %s: %v", dir, loaded.err)
	}
	return loaded.sessions, loaded.report
}

// Sessions rebuilds request sequences from every Claude Code and Codex transcript in the corpus:
// Claude Code → Anthropic Messages bodies (and the same conversations converted to Chat bodies),
// Codex rollouts → Responses bodies. What it skipped or repaired is in Build's Report.
func Sessions(dir string) ([]Session, error) {
	s, _, err := Build(dir)
	return s, err
}

// Build is Sessions with its report. It fails only when a folder or file cannot be read; a
// transcript it cannot use is reported as skipped, with the reason.
func Build(dir string) ([]Session, *Report, error) {
	provenance, err := readManifest(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{}
	var out []Session
	for _, src := range []struct {
		sub   string
		build func(name string, data []byte, fr *FileReport) []Session
	}{
		{client.ClaudeCode, buildClaudeCode}, // the corpus keeps one folder per client, by its name
		{client.Codex, buildCodex},
	} {
		names, err := filepath.Glob(filepath.Join(dir, src.sub, "*.jsonl"))
		if err != nil {
			return nil, nil, fmt.Errorf("list %s transcripts in %s: %w", src.sub, dir, err)
		}
		if len(names) == 0 {
			return nil, nil, fmt.Errorf("no %s transcripts (*.jsonl) in %s: is %s the corpus folder?", src.sub, filepath.Join(dir, src.sub), dir)
		}
		sort.Strings(names)
		for _, path := range names {
			rel := src.sub + "/" + filepath.Base(path)
			fr := FileReport{File: rel, Repairs: map[string]int{}}
			if p := provenance[rel]; p == "handmade" {
				fr.Skipped = "hand-made file (MANIFEST provenance \"handmade\"), not a real transcript"
				rep.Files = append(rep.Files, fr)
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, nil, fmt.Errorf("read transcript: %w", err)
			}
			sessions := src.build(filepath.Base(path), data, &fr)
			for _, s := range sessions {
				if len(s.Bodies) == 0 {
					continue
				}
				fr.Sessions++
				fr.Bodies += len(s.Bodies)
				out = append(out, s)
			}
			if fr.Sessions == 0 && fr.Skipped == "" {
				fr.Skipped = "no request could be rebuilt (no user message followed by a model turn)"
			}
			rep.Files = append(rep.Files, fr)
		}
	}
	return out, rep, nil
}

// readManifest maps each corpus file (its local_file column) to its provenance column. A corpus
// without MANIFEST.tsv yields an empty map: every file is then taken as real.
func readManifest(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read corpus manifest: %w", err)
	}
	out := map[string]string{}
	fileCol, provCol := -1, -1
	for i, line := range strings.Split(string(data), "\n") {
		cols := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if i == 0 {
			for j, c := range cols {
				switch c {
				case "local_file":
					fileCol = j
				case "provenance":
					provCol = j
				}
			}
			if fileCol < 0 || provCol < 0 {
				return nil, fmt.Errorf("corpus manifest %s: no local_file and provenance columns in its header", path)
			}
			continue
		}
		if len(cols) > fileCol && len(cols) > provCol {
			out[cols[fileCol]] = cols[provCol]
		}
	}
	return out, nil
}

// lines splits a JSONL file into its non-empty lines.
func lines(data []byte) [][]byte {
	var out [][]byte
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// ---- JSON writing helpers ----

func quote(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// members returns an object's members in order, keys unquoted, values raw.
func members(raw []byte) ([]member, error) {
	var out []member
	var bad error
	err := jsonscan.Members(raw, func(key, val []byte) bool {
		k, ok := jsonscan.String(key)
		if !ok {
			bad = fmt.Errorf("bad key %s", key)
			return false
		}
		out = append(out, member{k, val})
		return true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

type member struct {
	key string
	val []byte
}

// object writes members as a compact JSON object, in their order.
func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(quote(m.key))
		b.WriteByte(':')
		if err := json.Compact(&b, m.val); err != nil {
			b.Write(m.val)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// withoutNulls re-encodes an object without its null members (and without those drop names),
// keeping the order of the others; it returns how many nulls it dropped.
func withoutNulls(raw []byte, drop ...string) ([]byte, int, error) {
	ms, err := members(raw)
	if err != nil {
		return nil, 0, err
	}
	kept := ms[:0]
	nulls := 0
outer:
	for _, m := range ms {
		for _, d := range drop {
			if m.key == d {
				continue outer
			}
		}
		if jsonscan.Null(m.val) {
			nulls++
			continue
		}
		kept = append(kept, m)
	}
	return object(kept), nulls, nil
}

// joinRaw writes open, the parts separated by commas, and close.
func joinRaw(open string, parts [][]byte, close string) []byte {
	n := len(open) + len(close) + len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, open...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, close...)
}

// ==== Claude Code ====

// Claude Code transcripts (claude-code/*.jsonl) hold one line per content block: user and
// assistant lines carry an Anthropic-shaped `message`; the lines of one assistant message share
// message.id. Lines link to their parent by parentUuid, so a file holds several conversations:
// the main one, each sidechain (a Task subagent, inline before Claude Code 2.0, in its own file
// since) and, after a compaction, a new main conversation whose root is the compact_boundary.
// Each conversation is rebuilt as the client sent it: one request per assistant message, holding
// every message before it.

// ccLine is the part of a transcript line the builder reads.
type ccLine struct {
	Type        string     `json:"type"`
	UUID        string     `json:"uuid"`
	ParentUUID  string     `json:"parentUuid"`
	IsSidechain bool       `json:"isSidechain"`
	AgentID     string     `json:"agentId"`
	Message     *ccMessage `json:"message"`
}

type ccMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// block is one content block, encoded once for the Anthropic body (without cache_control), with
// what the Chat conversion needs.
type block struct {
	typ       string
	raw       []byte // compact JSON object
	id, name  string // tool_use
	input     []byte // tool_use input (an object)
	toolUseID string // tool_result
	text      string // text block text; tool_result content as text
	image     string // image block: a data: URL, "" when it has no base64 source
}

type turn struct {
	role   string
	blocks []block
}

// request marks one assistant message: the request that produced it holds turns[:turn].
type request struct {
	turn  int
	model string
}

// conversation is one rebuilt conversation.
type conversation struct {
	name     string
	turns    []turn
	requests []request
	tools    []string // tool names seen, in first-seen order
}

// buildClaudeCode rebuilds the Anthropic and Chat sessions of one Claude Code transcript.
func buildClaudeCode(name string, data []byte, fr *FileReport) []Session {
	var all []ccLine
	seen := map[string]bool{}
	for _, l := range lines(data) {
		var cl ccLine
		if err := json.Unmarshal(l, &cl); err != nil {
			fr.Repairs[RepairBadLine]++
			continue
		}
		if cl.UUID != "" {
			if seen[cl.UUID] {
				fr.Repairs[RepairDuplicateLine]++
				continue
			}
			seen[cl.UUID] = true
		}
		all = append(all, cl)
	}
	var out []Session
	for _, conv := range conversations(name, all, fr) {
		if len(conv.requests) == 0 {
			continue
		}
		out = append(out, anthropicSession(conv), chatSession(conv, fr))
	}
	return out
}

// conversations splits a transcript's lines by the root of their parentUuid chain, in file
// order, and rebuilds each.
func conversations(name string, all []ccLine, fr *FileReport) []*conversation {
	parent := map[string]string{}
	for _, l := range all {
		if l.UUID != "" {
			parent[l.UUID] = l.ParentUUID
		}
	}
	rootOf := map[string]string{}
	root := func(u string) string {
		if r, ok := rootOf[u]; ok {
			return r
		}
		r := u
		for steps := 0; steps < len(parent); steps++ {
			p, ok := parent[r]
			if !ok || p == "" {
				break
			}
			if _, known := parent[p]; !known {
				break
			}
			r = p
		}
		rootOf[u] = r
		return r
	}
	var order []string
	groups := map[string][]ccLine{}
	for _, l := range all {
		if l.UUID == "" || l.Message == nil || (l.Type != "user" && l.Type != "assistant") {
			continue
		}
		r := root(l.UUID)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], l)
	}
	var convs []*conversation
	names := map[string]int{}
	mains := 0
	for _, r := range order {
		g := groups[r]
		var n string
		switch {
		case g[0].AgentID != "":
			n = name + "#agent-" + g[0].AgentID
		case g[0].IsSidechain:
			n = name + "#sidechain-" + short(r)
		default:
			mains++
			n = name
			if mains > 1 {
				// A main conversation after the first starts at a compaction boundary.
				n = fmt.Sprintf("%s#part-%d", name, mains)
			}
		}
		if k := names[n]; k > 0 {
			names[n]++
			n = fmt.Sprintf("%s-%d", n, k+1)
		} else {
			names[n] = 1
		}
		convs = append(convs, rebuild(n, g, fr))
	}
	return convs
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// rebuild turns one conversation's lines into alternating turns and the requests between them.
func rebuild(name string, lines []ccLine, fr *FileReport) *conversation {
	conv := &conversation{name: name}
	toolSeen := map[string]bool{}
	useIDs := map[string]bool{}
	requested := map[string]bool{} // assistant message ids with a request already
	messages := map[string]bool{}  // every assistant message id
	for _, l := range lines {
		role := l.Message.Role
		if role == "" {
			role = l.Type
		}
		if role != "user" && role != "assistant" {
			continue
		}
		if role == "assistant" && l.Message.Model == "<synthetic>" {
			fr.Repairs[RepairSyntheticMessage]++
			continue
		}
		msgID := l.Message.ID
		if msgID == "" {
			msgID = l.UUID
		}
		if role == "assistant" {
			messages[msgID] = true
		}
		blocks := decodeBlocks(l.Message.Content, fr)
		kept := blocks[:0]
		for _, b := range blocks {
			if b.typ == "tool_use" {
				if useIDs[b.id] {
					fr.Repairs[RepairDuplicateToolUse]++
					continue
				}
				useIDs[b.id] = true
				if !toolSeen[b.name] {
					toolSeen[b.name] = true
					conv.tools = append(conv.tools, b.name)
				}
			}
			kept = append(kept, b)
		}
		if len(kept) == 0 {
			continue
		}
		n := len(conv.turns)
		if role == "assistant" {
			if !requested[msgID] {
				requested[msgID] = true
				if n > 0 && conv.turns[n-1].role == "assistant" {
					fr.Repairs[RepairMergedAssistant]++
				} else {
					conv.requests = append(conv.requests, request{turn: n, model: l.Message.Model})
				}
			}
		}
		if n > 0 && conv.turns[n-1].role == role {
			if role == "user" {
				fr.Repairs[RepairMergedUser]++
			}
			conv.turns[n-1].blocks = append(conv.turns[n-1].blocks, kept...)
			continue
		}
		conv.turns = append(conv.turns, turn{role: role, blocks: kept})
	}
	if n := len(messages) - len(requested); n > 0 {
		fr.Repairs[RepairEmptyMessage] += n
	}
	repairTurns(conv, fr)
	return conv
}

// repairTurns makes the turns what the client would have sent: starting with a user turn, each
// user turn answering every tool_use of the assistant turn before it, once, tool results first.
// Claude Code answers a tool_use it never ran (the user interrupted) with an error result saying
// so, which is what the synthetic result mimics.
func repairTurns(conv *conversation, fr *FileReport) {
	drop := 0
	for drop < len(conv.turns) && conv.turns[drop].role != "user" {
		drop++
	}
	if drop > 0 {
		fr.Repairs[RepairLeadingAssistant] += drop
		conv.turns = conv.turns[drop:]
		kept := conv.requests[:0]
		for _, r := range conv.requests {
			if r.turn -= drop; r.turn > 0 {
				kept = append(kept, r)
			}
		}
		conv.requests = kept
	}
	// A request at turn 0 has nothing before it.
	kept := conv.requests[:0]
	for _, r := range conv.requests {
		if r.turn > 0 {
			kept = append(kept, r)
		}
	}
	conv.requests = kept

	// An assistant turn of thinking blocks only (the user interrupted the model while it was
	// thinking) is not sent again: Claude Code filters such orphaned thinking-only messages out,
	// and the user turns around it become one. Its own request is dropped with it, since the
	// merged turn now holds what the user wrote after it.
	for i := 1; i+1 < len(conv.turns); i++ {
		if conv.turns[i].role != "assistant" || !thinkingOnly(conv.turns[i]) {
			continue
		}
		fr.Repairs[RepairThinkingOnly]++
		conv.turns[i-1].blocks = append(conv.turns[i-1].blocks, conv.turns[i+1].blocks...)
		conv.turns = append(conv.turns[:i], conv.turns[i+2:]...)
		kept := conv.requests[:0]
		for _, r := range conv.requests {
			switch {
			case r.turn == i:
				continue
			case r.turn > i:
				r.turn -= 2
			}
			kept = append(kept, r)
		}
		conv.requests = kept
		i--
	}

	for i := range conv.turns {
		t := &conv.turns[i]
		if t.role != "user" {
			continue
		}
		var uses []block
		if i > 0 {
			for _, b := range conv.turns[i-1].blocks {
				if b.typ == "tool_use" {
					uses = append(uses, b)
				}
			}
		}
		want := map[string]bool{}
		for _, u := range uses {
			want[u.id] = true
		}
		var results, others []block
		answered := map[string]bool{}
		moved := false
		for _, b := range t.blocks {
			if b.typ != "tool_result" {
				others = append(others, b)
				continue
			}
			if len(others) > 0 {
				moved = true
			}
			switch {
			case !want[b.toolUseID]:
				fr.Repairs[RepairOrphanToolResult]++
			case answered[b.toolUseID]:
				fr.Repairs[RepairDuplicateResult]++
			default:
				answered[b.toolUseID] = true
				results = append(results, b)
			}
		}
		if moved {
			fr.Repairs[RepairToolResultOrder]++
		}
		for _, u := range uses {
			if !answered[u.id] {
				fr.Repairs[RepairInterrupted]++
				results = append(results, interruptedResult(u.id))
			}
		}
		t.blocks = append(results, others...)
		if len(t.blocks) == 0 {
			// Only orphan results: the turn is gone, and the turns around it can no longer
			// alternate. Keep the requests before it.
			kept := conv.requests[:0]
			for _, r := range conv.requests {
				if r.turn <= i {
					kept = append(kept, r)
				}
			}
			conv.requests = kept
			conv.turns = conv.turns[:i]
			return
		}
	}
}

func thinkingOnly(t turn) bool {
	for _, b := range t.blocks {
		if b.typ != "thinking" && b.typ != "redacted_thinking" {
			return false
		}
	}
	return true
}

func interruptedResult(id string) block {
	raw := []byte(`{"type":"tool_result","tool_use_id":` + string(quote(id)) + `,"content":"[interrupted]","is_error":true}`)
	return block{typ: "tool_result", raw: raw, toolUseID: id, text: "[interrupted]"}
}

// decodeBlocks encodes a message's content as blocks the API accepts: a string becomes one text
// block; empty text blocks and thinking blocks without a signature are dropped (the API rejects
// both); other fields keep their order, null ones dropped.
func decodeBlocks(content json.RawMessage, fr *FileReport) []block {
	var s string
	if err := json.Unmarshal(content, &s); err == nil {
		if blank(s) {
			fr.Repairs[RepairEmptyText]++
			return nil
		}
		return []block{textBlock(s)}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(content, &raws); err != nil {
		return nil
	}
	out := make([]block, 0, len(raws))
	for _, r := range raws {
		if b, ok := decodeBlock(r, fr); ok {
			out = append(out, b)
		}
	}
	return out
}

func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

func textBlock(s string) block {
	return block{typ: "text", raw: []byte(`{"type":"text","text":` + string(quote(s)) + `}`), text: s}
}

// rawBlock is the union of the fields of the blocks the builder reads.
type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

func decodeBlock(r json.RawMessage, fr *FileReport) (block, bool) {
	var rb rawBlock
	if err := json.Unmarshal(r, &rb); err != nil || rb.Type == "" {
		return block{}, false
	}
	switch rb.Type {
	case "text":
		if blank(rb.Text) {
			fr.Repairs[RepairEmptyText]++
			return block{}, false
		}
		return textBlock(rb.Text), true
	case "thinking":
		if rb.Signature == "" {
			fr.Repairs[RepairUnsignedThinking]++
			return block{}, false
		}
		raw := `{"type":"thinking","thinking":` + string(quote(rb.Thinking)) + `,"signature":` + string(quote(rb.Signature)) + `}`
		return block{typ: "thinking", raw: []byte(raw)}, true
	case "redacted_thinking":
		if rb.Data == "" {
			fr.Repairs[RepairUnsignedThinking]++
			return block{}, false
		}
		return block{typ: "redacted_thinking", raw: []byte(`{"type":"redacted_thinking","data":` + string(quote(rb.Data)) + `}`)}, true
	case "tool_use":
		input := bytes.TrimSpace(rb.Input)
		if len(input) == 0 || input[0] != '{' {
			fr.Repairs[RepairBadToolInput]++
			input = []byte("{}")
		}
		var in bytes.Buffer
		if err := json.Compact(&in, input); err != nil {
			return block{}, false
		}
		raw := `{"type":"tool_use","id":` + string(quote(rb.ID)) + `,"name":` + string(quote(rb.Name)) + `,"input":` + in.String() + `}`
		return block{typ: "tool_use", raw: []byte(raw), id: rb.ID, name: rb.Name, input: in.Bytes()}, true
	case "tool_result":
		return toolResult(rb, fr), true
	case "image":
		b := block{typ: "image"}
		if rb.Source != nil && rb.Source.Type == "base64" {
			b.image = "data:" + rb.Source.MediaType + ";base64," + rb.Source.Data
		}
		raw, _, err := withoutNulls(r, "cache_control")
		if err != nil {
			return block{}, false
		}
		b.raw = raw
		return b, true
	default:
		raw, _, err := withoutNulls(r, "cache_control")
		if err != nil {
			return block{}, false
		}
		return block{typ: rb.Type, raw: raw}, true
	}
}

// toolResult encodes a tool_result: its content a string, or an array of blocks without empty
// text blocks (left out when none is left).
func toolResult(rb rawBlock, fr *FileReport) block {
	b := block{typ: "tool_result", toolUseID: rb.ToolUseID}
	var buf bytes.Buffer
	buf.WriteString(`{"type":"tool_result","tool_use_id":`)
	buf.Write(quote(rb.ToolUseID))
	var s string
	var arr []json.RawMessage
	switch {
	case len(rb.Content) == 0 || string(rb.Content) == "null":
	case json.Unmarshal(rb.Content, &s) == nil:
		buf.WriteString(`,"content":`)
		buf.Write(quote(s))
		b.text = s
	case json.Unmarshal(rb.Content, &arr) == nil:
		var parts [][]byte
		var texts []string
		for _, item := range arr {
			ib, ok := decodeBlock(item, fr)
			if !ok {
				continue
			}
			parts = append(parts, ib.raw)
			if ib.typ == "text" {
				texts = append(texts, ib.text)
			}
		}
		if len(parts) > 0 {
			buf.WriteString(`,"content":`)
			buf.Write(joinRaw("[", parts, "]"))
		}
		b.text = strings.Join(texts, "\n")
	}
	if rb.IsError {
		buf.WriteString(`,"is_error":true`)
	}
	buf.WriteByte('}')
	b.raw = buf.Bytes()
	return b
}

// ---- Anthropic bodies ----

// systemPrompt stands for Claude Code's system prompt, which transcripts do not record.
const systemPrompt = "You are Claude Code, Anthropic's official CLI for Claude. You are an interactive CLI tool that helps users with software engineering tasks. (System prompt rebuilt for tests: the transcript does not record the real one.)"

// toolSchemas are input schemas of Claude Code's common tools; other tools get a generic one.
var toolSchemas = map[string]string{
	"Read":  `{"type":"object","properties":{"file_path":{"type":"string","description":"The absolute path to the file to read"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"],"additionalProperties":false}`,
	"Bash":  `{"type":"object","properties":{"command":{"type":"string","description":"The command to execute"},"timeout":{"type":"number"},"description":{"type":"string"}},"required":["command"],"additionalProperties":false}`,
	"Edit":  `{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean","default":false}},"required":["file_path","old_string","new_string"],"additionalProperties":false}`,
	"Write": `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`,
	"Grep":  `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"output_mode":{"type":"string","enum":["content","files_with_matches","count"]}},"required":["pattern"],"additionalProperties":false}`,
	"Glob":  `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`,
}

var baseTools = []string{"Read", "Bash", "Edit", "Write", "Grep"}

// toolNames is the tool list of a conversation: the base tools, then the others it used, sorted.
func toolNames(seen []string) []string {
	names := append([]string(nil), baseTools...)
	var extra []string
	for _, n := range seen {
		base := false
		for _, b := range baseTools {
			base = base || b == n
		}
		if !base {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

func toolSchema(name string) string {
	if s, ok := toolSchemas[name]; ok {
		return s
	}
	return `{"type":"object","properties":{},"additionalProperties":true}`
}

func anthropicTools(seen []string) []byte {
	var parts [][]byte
	for _, n := range toolNames(seen) {
		desc := "Claude Code tool " + n + " (definition rebuilt for tests)."
		parts = append(parts, []byte(`{"name":`+string(quote(n))+`,"description":`+string(quote(desc))+`,"input_schema":`+toolSchema(n)+`}`))
	}
	return joinRaw("[", parts, "]")
}

// cacheControl is the breakpoint Claude Code sets.
const cacheControl = `"cache_control":{"type":"ephemeral"}`

// withCache returns a copy of a block object with a cache_control breakpoint.
func withCache(raw []byte) []byte {
	b := make([]byte, 0, len(raw)+len(cacheControl)+1)
	b = append(b, raw[:len(raw)-1]...)
	b = append(b, ',')
	b = append(b, cacheControl...)
	return append(b, '}')
}

func encodeTurn(t turn, cacheLast bool) []byte {
	parts := make([][]byte, len(t.blocks))
	for i, b := range t.blocks {
		parts[i] = b.raw
	}
	if cacheLast && len(parts) > 0 {
		parts[len(parts)-1] = withCache(parts[len(parts)-1])
	}
	return joinRaw(`{"role":"`+t.role+`","content":[`, parts, "]}")
}

// anthropicSession builds one body per request: Claude Code's parameters, its system prompt and
// tools, and the messages so far, with breakpoints where Claude Code sets them: on the system
// prompt, the last block of the last message and the last block of the user message before.
func anthropicSession(conv *conversation) Session {
	s := Session{Name: conv.name, API: validate.Anthropic}
	system := []byte(`[{"type":"text","text":` + string(quote(systemPrompt)) + `,` + cacheControl + `}]`)
	tools := anthropicTools(conv.tools)
	plain := make([][]byte, len(conv.turns))
	for i, t := range conv.turns {
		plain[i] = encodeTurn(t, false)
	}
	for _, r := range conv.requests {
		msgs := make([][]byte, r.turn)
		copy(msgs, plain[:r.turn])
		last := r.turn - 1
		msgs[last] = encodeTurn(conv.turns[last], true)
		for j := last - 1; j >= 0; j-- {
			if conv.turns[j].role == "user" {
				msgs[j] = encodeTurn(conv.turns[j], true)
				break
			}
		}
		head := `{"model":` + string(quote(r.model)) + `,"max_tokens":32000,"stream":true,"system":` + string(system) + `,"tools":` + string(tools) + `,"messages":[`
		s.Bodies = append(s.Bodies, joinRaw(head, msgs, "]}"))
	}
	return s
}

// ---- Chat bodies ----

// chatSession converts the conversation to Chat Completions messages: the system prompt as a
// system message, user text as user messages, assistant text and tool_use blocks as an assistant
// message with tool_calls (arguments the input as a JSON string), and each tool_result as a tool
// message (its text). Thinking blocks have no Chat equivalent and are left out.
func chatSession(conv *conversation, fr *FileReport) Session {
	s := Session{Name: conv.name, API: validate.Chat}
	system := []byte(`{"role":"system","content":` + string(quote(systemPrompt)) + `}`)
	var tools [][]byte
	for _, n := range toolNames(conv.tools) {
		desc := "Claude Code tool " + n + " (definition rebuilt for tests)."
		tools = append(tools, []byte(`{"type":"function","function":{"name":`+string(quote(n))+`,"description":`+string(quote(desc))+`,"parameters":`+toolSchema(n)+`}}`))
	}
	toolsRaw := joinRaw("[", tools, "]")
	// perTurn[i] holds turn i's Chat messages; a turn may give none, one or several.
	perTurn := make([][][]byte, len(conv.turns))
	for i, t := range conv.turns {
		perTurn[i] = chatMessages(t, fr)
	}
	for _, r := range conv.requests {
		msgs := [][]byte{system}
		for _, ms := range perTurn[:r.turn] {
			msgs = append(msgs, ms...)
		}
		head := `{"model":` + string(quote(r.model)) + `,"stream":true,"tools":` + string(toolsRaw) + `,"messages":[`
		s.Bodies = append(s.Bodies, joinRaw(head, msgs, "]}"))
	}
	return s
}

func chatMessages(t turn, fr *FileReport) [][]byte {
	var out [][]byte
	if t.role == "assistant" {
		var texts []string
		var calls [][]byte
		for _, b := range t.blocks {
			switch b.typ {
			case "text":
				texts = append(texts, b.text)
			case "tool_use":
				calls = append(calls, []byte(`{"id":`+string(quote(b.id))+`,"type":"function","function":{"name":`+string(quote(b.name))+`,"arguments":`+string(quote(string(b.input)))+`}}`))
			case "thinking", "redacted_thinking":
			default:
				fr.Repairs[RepairChatDroppedBlock]++
			}
		}
		if len(texts) == 0 && len(calls) == 0 {
			fr.Repairs[RepairChatNoContent]++
			return nil
		}
		content := "null"
		if len(texts) > 0 {
			content = string(quote(strings.Join(texts, "\n\n")))
		}
		msg := `{"role":"assistant","content":` + content
		if len(calls) > 0 {
			msg += `,"tool_calls":` + string(joinRaw("[", calls, "]"))
		}
		return append(out, []byte(msg+"}"))
	}
	var parts [][]byte
	for _, b := range t.blocks {
		switch {
		case b.typ == "tool_result":
			out = append(out, []byte(`{"role":"tool","tool_call_id":`+string(quote(b.toolUseID))+`,"content":`+string(quote(b.text))+`}`))
		case b.typ == "text":
			parts = append(parts, []byte(`{"type":"text","text":`+string(quote(b.text))+`}`))
		case b.typ == "image" && b.image != "":
			parts = append(parts, []byte(`{"type":"image_url","image_url":{"url":`+string(quote(b.image))+`}}`))
		default:
			fr.Repairs[RepairChatDroppedBlock]++
		}
	}
	if len(parts) > 0 {
		out = append(out, joinRaw(`{"role":"user","content":[`, parts, "]}"))
	}
	return out
}

// ==== Codex ====

// Codex rollouts (codex/*.jsonl) record the Responses API items of a conversation as
// response_item lines, in order, beside session_meta (instructions), turn_context (the model of
// each turn) and event_msg lines (what the UI showed). Codex sends the items so far as `input` of
// each request, so the conversation is rebuilt as one request before each run of model output:
// a reasoning, assistant message or call that follows a user message or a tool output.

type rolloutLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// codexInstructions stands for Codex's instructions when the rollout does not record them.
const codexInstructions = "You are Codex, a coding agent based on GPT-5. (Instructions rebuilt for tests: the rollout does not record the real ones.)"

// buildCodex rebuilds the Responses session of one Codex rollout.
func buildCodex(name string, data []byte, fr *FileReport) []Session {
	s := Session{Name: name, API: validate.Responses}
	var (
		items        [][]byte
		inputSide    []bool // of each item
		userInRun    bool   // a user message since the last model output
		model        = "gpt-5"
		instructions = codexInstructions
		requests     []struct {
			n     int
			model string
		}
		functions = map[string]bool{}
		customs   = map[string]bool{}
		webSearch bool
	)
	add := func(item []byte, input bool) {
		if !input && (len(items) == 0 || inputSide[len(items)-1]) {
			if len(items) == 0 {
				fr.Repairs[RepairOutputBeforeInput]++
			} else {
				requests = append(requests, struct {
					n     int
					model string
				}{len(items), model})
			}
		}
		items = append(items, item)
		inputSide = append(inputSide, input)
	}
	for _, l := range lines(data) {
		var rl rolloutLine
		if err := json.Unmarshal(l, &rl); err != nil {
			fr.Repairs[RepairBadLine]++
			continue
		}
		switch rl.Type {
		case "session_meta":
			var meta struct {
				Model            string `json:"model"`
				Instructions     string `json:"instructions"`
				BaseInstructions struct {
					Text string `json:"text"`
				} `json:"base_instructions"`
			}
			_ = json.Unmarshal(rl.Payload, &meta) // fields are optional; a mismatch leaves them empty
			if meta.Model != "" {
				model = meta.Model
			}
			switch {
			case meta.Instructions != "":
				instructions = meta.Instructions
			case meta.BaseInstructions.Text != "":
				instructions = meta.BaseInstructions.Text
			}
		case "turn_context":
			var tc struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(rl.Payload, &tc) == nil && tc.Model != "" {
				model = tc.Model
			}
		case "event_msg":
			var ev struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			}
			if json.Unmarshal(rl.Payload, &ev) != nil || ev.Type != "user_message" || ev.Message == "" {
				continue
			}
			if !userInRun {
				// Some rollouts keep the user's message only as this event (a filtered copy);
				// the request held it as a message item.
				fr.Repairs[RepairUserMessageEvent]++
				add([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`+string(quote(ev.Message))+`}]}`), true)
				userInRun = true
			}
		case "response_item":
			item, typ, role, ok := codexItem(rl.Payload, fr)
			if !ok {
				continue
			}
			input := (typ == "message" && role != "assistant") || strings.HasSuffix(typ, "_output")
			switch typ {
			case "function_call":
				functions[jsonscanName(item)] = true
			case "custom_tool_call":
				customs[jsonscanName(item)] = true
			case "web_search_call":
				webSearch = true
			}
			if typ == "message" && role == "user" {
				userInRun = true
			} else if !input {
				userInRun = false
			}
			add(item, input)
		}
	}
	if len(requests) == 0 {
		return nil
	}
	tools := codexTools(functions, customs, webSearch)
	for _, r := range requests {
		head := `{"model":` + string(quote(r.model)) + `,"instructions":` + string(quote(instructions)) + `,"input":[`
		tail := `],"tools":` + string(tools) + `,"tool_choice":"auto","store":false,"stream":true,"include":["reasoning.encrypted_content"]}`
		s.Bodies = append(s.Bodies, joinRaw(head, items[:r.n], tail))
	}
	return []Session{s}
}

// codexItem re-encodes one response item for a request's input, dropping what the API would not
// take back: ghost_snapshot items (Codex's own undo records, never sent), null fields (the
// rollout writes absent optional fields as null), and a function_call's namespace, folded into
// its name as Codex names MCP tools ("mcp__server__tool").
func codexItem(payload []byte, fr *FileReport) (item []byte, typ, role string, ok bool) {
	ms, err := members(payload)
	if err != nil {
		fr.Repairs[RepairBadLine]++
		return nil, "", "", false
	}
	var namespace string
	for _, m := range ms {
		switch m.key {
		case "type":
			typ = jsonscan.Str(m.val)
		case "role":
			role = jsonscan.Str(m.val)
		case "namespace":
			namespace = jsonscan.Str(m.val)
		}
	}
	if typ == "ghost_snapshot" {
		fr.Repairs[RepairGhostSnapshot]++
		return nil, "", "", false
	}
	kept := ms[:0]
	for _, m := range ms {
		switch {
		case jsonscan.Null(m.val):
			fr.Repairs[RepairNullField]++
			continue
		case m.key == "namespace":
			continue
		case m.key == "name" && namespace != "":
			fr.Repairs[RepairNamespace]++
			m.val = quote(namespace + jsonscan.Str(m.val))
		}
		kept = append(kept, m)
	}
	return object(kept), typ, role, true
}

func jsonscanName(item []byte) string {
	var name string
	_ = jsonscan.Members(item, func(key, val []byte) bool {
		if jsonscan.Key(key, "name") {
			name = jsonscan.Str(val)
			return false
		}
		return true
	})
	return name
}

// codexTools defines the tools the rollout called (Codex sends the same list with every request):
// function tools with a permissive schema, custom (freeform) tools, and web search. A rollout
// that called none gets Codex's shell tool.
func codexTools(functions, customs map[string]bool, webSearch bool) []byte {
	if len(functions) == 0 && len(customs) == 0 {
		functions = map[string]bool{"shell": true}
	}
	var parts [][]byte
	for _, n := range sortedKeys(functions) {
		desc := "Codex tool " + n + " (definition rebuilt for tests)."
		parts = append(parts, []byte(`{"type":"function","name":`+string(quote(n))+`,"description":`+string(quote(desc))+`,"strict":false,"parameters":{"type":"object","properties":{},"additionalProperties":true}}`))
	}
	for _, n := range sortedKeys(customs) {
		if functions[n] {
			continue
		}
		desc := "Codex freeform tool " + n + " (definition rebuilt for tests)."
		parts = append(parts, []byte(`{"type":"custom","name":`+string(quote(n))+`,"description":`+string(quote(desc))+`}`))
	}
	if webSearch {
		parts = append(parts, []byte(`{"type":"web_search"}`))
	}
	return joinRaw("[", parts, "]")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
