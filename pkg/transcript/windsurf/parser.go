package windsurf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what its state keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxMessage = 64 << 10
	maxSeen    = 1024
	maxAnchors = 512
)

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string `json:"session,omitempty"`
	Project string `json:"project,omitempty"`
	Started bool   `json:"started,omitempty"`
	// Steps is how many steps were stamped with a time; Anchors are [first step, unix ms] of each
	// read that found new steps.
	Steps   int        `json:"n,omitempty"`
	Anchors [][2]int64 `json:"anchors,omitempty"`
	Seen    []string   `json:"seen,omitempty"`
}

// Parser reads one transcript.
type Parser struct {
	src     transcript.Source
	st      state
	emitted transcript.Emitted
	stats   transcript.Stats
}

func newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("windsurf parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// step is one line of a transcript: its type, status and the object its type names.
type step struct {
	Type    string
	Status  string
	Payload json.RawMessage
}

// Record reads the whole transcript.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	steps, err := decodeSteps(raw)
	if err != nil {
		return nil, err
	}
	p.stamp(len(steps))
	if p.st.Project == "" {
		p.findProject(steps)
	}
	for i := range steps {
		evs = append(evs, p.step(i, &steps[i])...)
	}
	return p.emitted.Keep(evs, &p.st.Seen, maxSeen), nil
}

// decodeSteps reads a transcript (its lines, or the one line DocumentLine makes of them): a
// stream of JSON objects. One that is not UTF-8 or does not parse is ErrMalformed.
func decodeSteps(raw []byte) ([]step, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, transcript.Malformed(Client, "transcript is empty (being written?)")
	case !utf8.Valid(raw):
		return nil, transcript.Malformed(Client, "transcript is not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out []step
	for {
		var m map[string]json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, transcript.Malformed(Client, "transcript does not parse (written while read, or damaged) at step %d: %v", len(out), err)
		}
		var s step
		_ = json.Unmarshal(m["type"], &s.Type)
		_ = json.Unmarshal(m["status"], &s.Status)
		s.Type = strings.TrimSpace(s.Type)
		if s.Type != "" {
			s.Payload = m[s.Type]
		}
		out = append(out, s)
	}
}

// stamp records the time of the steps read for the first time: the file's modification time.
func (p *Parser) stamp(n int) {
	if n < p.st.Steps { // the conversation was reverted: the steps dropped lose their times
		k := 0
		for k < len(p.st.Anchors) && p.st.Anchors[k][0] < int64(n) {
			k++
		}
		p.st.Anchors, p.st.Steps = p.st.Anchors[:k], n
	}
	if n == p.st.Steps {
		return
	}
	ms := p.modTime().UnixMilli()
	if k := len(p.st.Anchors); k > 0 {
		ms = max(ms, p.st.Anchors[k-1][1])
	}
	if len(p.st.Anchors) < maxAnchors {
		p.st.Anchors = append(p.st.Anchors, [2]int64{int64(p.st.Steps), ms})
	}
	p.st.Steps = n
}

// timeOf is step i's time: that of the read that first found it.
func (p *Parser) timeOf(i int) time.Time {
	ms := int64(0)
	for _, a := range p.st.Anchors {
		if a[0] > int64(i) {
			break
		}
		ms = a[1]
	}
	if ms == 0 && len(p.st.Anchors) > 0 {
		ms = p.st.Anchors[0][1]
	}
	return time.UnixMilli(ms).UTC()
}

// modTime is the transcript's modification time (now, when it cannot be read).
func (p *Parser) modTime() time.Time {
	if fi, err := os.Stat(p.src.Path); err == nil {
		return fi.ModTime().UTC()
	}
	return time.Now().UTC()
}

// findProject sets the project: the git working tree of the first absolute path a code_action
// names, when there is one.
func (p *Parser) findProject(steps []step) {
	for i := range steps {
		if steps[i].Type != "code_action" {
			continue
		}
		var ca struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(steps[i].Payload, &ca)
		if path := strings.TrimSpace(ca.Path); filepath.IsAbs(path) {
			root := project.Root(filepath.Dir(filepath.Clean(path)))
			if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
				p.st.Project = root
			}
			return
		}
	}
}

// step turns one step into events.
func (p *Parser) step(i int, s *step) []event.Event {
	t := p.timeOf(i)
	var evs []event.Event
	if !p.st.Started {
		p.st.Started = true
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), t)
		ev.Session = &event.Session{State: event.SessionStarted, TranscriptPath: p.src.Path, StartedAt: t}
		evs = append(evs, ev)
	}
	idx := strconv.Itoa(i)
	seq := int64(i) * 64
	switch s.Type {
	case "user_input":
		var in struct {
			UserResponse string `json:"user_response"`
		}
		_ = json.Unmarshal(s.Payload, &in)
		text := strings.TrimSpace(in.UserResponse)
		if text == "" {
			return evs
		}
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", idx), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), Transcript: p.src.Path}
		return append(evs, ev, p.message(idx, seq, t, event.Message{Role: event.RoleUser, Text: clipMessage(text)}))
	case "planner_response":
		var pr struct {
			Response string `json:"response"`
		}
		_ = json.Unmarshal(s.Payload, &pr)
		if text := clipMessage(strings.TrimSpace(pr.Response)); text != "" {
			evs = append(evs, p.message(idx, seq, t, event.Message{Role: event.RoleAssistant, Text: text}))
		}
		return evs
	case "":
		p.stats.CountUnknown("step without type")
		return evs
	}
	var in map[string]any
	_ = json.Unmarshal(s.Payload, &in)
	ty, target := p.toolOf(s.Type, in)
	a := &event.Action{Type: ty, Tool: s.Type, Target: clipTarget(target), InputHash: transcript.InputHash(s.Payload), Transcript: p.src.Path}
	if ok, known := outcome(s.Status); known {
		a.Success = &ok
		if !ok {
			a.Error = transcript.Clip("step "+strings.ToLower(strings.TrimSpace(s.Status)), maxError)
		}
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, idx), t)
	ev.Action = a
	return append(evs, ev, p.message(idx, seq, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: s.Type}))
}

// toolOf maps a step to its action type and target (see the package doc).
func (p *Parser) toolOf(kind string, in map[string]any) (event.ActionType, string) {
	path := p.relPath(transcript.Arg(in, "path", "file_path"))
	switch kind {
	case "code_action", "replace_file_content", "multi_replace_file_content", "edit_file":
		return event.ActionEditFile, path
	case "write_to_file", "write_code":
		return event.ActionWriteFile, path
	case "view_file", "read_file", "read_code", "view_file_outline", "view_code_item":
		return event.ActionReadFile, path
	case "run_command":
		return event.ActionRunCommand, transcript.Arg(in, "command_line")
	case "grep_search":
		return event.ActionSearchText, ""
	case "find_by_name", "list_dir":
		return event.ActionSearchFiles, path
	case "search_web":
		return event.ActionWebSearch, ""
	case "read_url_content":
		return event.ActionWebFetch, ""
	case "mcp_tool", "mcp_tool_use":
		server, tool := transcript.Arg(in, "mcp_server_name"), transcript.Arg(in, "mcp_tool_name")
		if server != "" && tool != "" {
			return event.ActionMCPCall, server + "/" + tool
		}
		return event.ActionMCPCall, transcript.FirstNonEmpty(tool, server)
	}
	return event.ActionUnknown, path
}

// outcome reads a step's status: done succeeded; error, failed, canceled and rejected failed;
// anything else (running, pending) is no outcome yet.
func outcome(status string) (ok, known bool) {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "done":
		return true, true
	case "error", "failed", "canceled", "cancelled", "rejected":
		return false, true
	}
	return false, false
}

// ---------------------------------------------------------------------------------------------
// Helpers

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) message(idx string, seq int64, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, idx, "0"), t)
	m.Seq = seq
	ev.Message = &m
	return ev
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, "", p.st.Project) }

func clipTarget(s string) string  { return transcript.ClipTarget(s, maxTarget) }
func clipMessage(s string) string { return transcript.Clip(s, maxMessage) }
