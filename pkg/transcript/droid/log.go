package droid

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// maxSessions is how many sessions a log parser remembers (their model and directory).
const maxSessions = 64

// logState is what a log parser keeps between reads.
type logState struct {
	// Sessions are the sessions seen lately, the newest last.
	Sessions []logSession `json:"sessions,omitempty"`
}

type logSession struct {
	ID      string `json:"id"`
	Model   string `json:"model,omitempty"` // the API's model name the last sendMessage gave
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Looked  bool   `json:"looked,omitempty"` // its session file was looked for
}

// logParser reads Droid's log: the usage of each model call.
type logParser struct {
	src      transcript.Source
	prices   func() *pricing.Table
	home     string // the Droid home the log lies in ("" for a log elsewhere)
	st       logState
	stats    transcript.Stats
	custom   map[string]string // custom model id → its model, from settings.json (read once)
	projects []string          // the home's project directories (sessions/*), listed once
}

func newLogParser(src transcript.Source, state []byte, prices func() *pricing.Table) (*logParser, error) {
	p := &logParser{src: src, prices: prices}
	if filepath.Base(filepath.Dir(src.Path)) == "logs" {
		p.home = filepath.Dir(filepath.Dir(src.Path))
	}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &p.st); err != nil {
			return nil, fmt.Errorf("droid log parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

func (p *logParser) State() []byte           { return transcript.MarshalState(p.st) }
func (p *logParser) Stats() transcript.Stats { return p.stats.Clone() }

var (
	markResult = []byte("] INFO: [Agent] Streaming result | Context: ")
	markSend   = []byte("] INFO: [LLM] sendMessage | Context: ")
)

// logLine is the context of the lines read.
type logLine struct {
	Input        json.RawMessage `json:"inputTokens"`
	CacheRead    json.RawMessage `json:"cacheReadInputTokens"`
	CacheWritten json.RawMessage `json:"cachedTokensWritten"`
	Output       json.RawMessage `json:"outputTokens"`
	Reasoning    json.RawMessage `json:"reasoningTokens"`
	Model        string          `json:"modelId"` // sendMessage: the API's model name
	SessionID    string          `json:"sessionId"`
	Tags         struct {
		SessionID string `json:"sessionId"`
		ModelID   string `json:"modelId"`
	} `json:"tags"`
}

// Record reads one log line. Lines other than a call's result or a sendMessage are skipped; a
// result line whose context does not parse is malformed.
func (p *logParser) Record(_ int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var ctxJSON []byte
	send := false
	if i := bytes.Index(line, markResult); i > 0 && line[0] == '[' {
		ctxJSON = line[i+len(markResult):]
	} else if i := bytes.Index(line, markSend); i > 0 && line[0] == '[' {
		ctxJSON, send = line[i+len(markSend):], true
	} else {
		return nil, nil
	}
	t, ok := transcript.ParseTime(string(line[1:bytes.IndexByte(line, ']')]))
	if !ok {
		return nil, transcript.Malformed(Client, "log line without a time: %.80q", line)
	}
	var l logLine
	if err := json.Unmarshal(ctxJSON, &l); err != nil {
		return nil, transcript.Malformed(Client, "log line context: %v", err)
	}
	session := strings.TrimSpace(l.Tags.SessionID)
	if session == "" {
		session = strings.TrimSpace(l.SessionID)
	}
	if session == "" {
		return nil, nil // a call outside a session (none seen so far)
	}
	s := p.session(session)
	if send {
		if m := strings.TrimSpace(l.Model); m != "" {
			s.Model = m
		}
		return nil, nil
	}
	tok := event.Tokens{Input: transcript.Count(l.Input), Output: transcript.Count(l.Output),
		CacheRead: transcript.Count(l.CacheRead), CacheCreation: transcript.Count(l.CacheWritten),
		Reasoning: transcript.Count(l.Reasoning)}
	tok.Reasoning = min(tok.Reasoning, tok.Output)
	model := p.model(s, strings.TrimSpace(l.Tags.ModelID))
	id := event.ID(Client, "usage", session, t.UTC().Format(time.RFC3339Nano), strconv.FormatInt(tok.Input, 10),
		strconv.FormatInt(tok.Output, 10), strconv.FormatInt(tok.CacheRead, 10), strconv.FormatInt(tok.CacheCreation, 10))
	// The line names no response: the usage's own id stands for its message, which is what the
	// writer's join of a session-less proxy turn records (api_turns.transcript_message_id).
	u := transcript.PricedUsage(p.prices(), model, id, tok, 0, t)
	if u == nil {
		return nil, nil
	}
	ev := event.Event{ID: id, Kind: event.KindTokenUsage, Time: t, Source: Component, Client: Client,
		SessionID: session, Project: s.Project, V: event.SchemaVersion, TokenUsage: u}
	return []event.Event{ev}, nil
}

// session returns the remembered session id (remembering it, its file looked up, when new).
func (p *logParser) session(id string) *logSession {
	for i := range p.st.Sessions {
		if p.st.Sessions[i].ID == id {
			if i != len(p.st.Sessions)-1 { // the newest last
				s := p.st.Sessions[i]
				p.st.Sessions = append(append(p.st.Sessions[:i], p.st.Sessions[i+1:]...), s)
			}
			return &p.st.Sessions[len(p.st.Sessions)-1]
		}
	}
	s := logSession{ID: id}
	if p.home != "" {
		s.Looked = true
		s.Cwd = p.sessionCwd(id)
		if filepath.IsAbs(s.Cwd) {
			s.Project = project.Root(s.Cwd)
		}
	}
	p.st.Sessions = append(p.st.Sessions, s)
	if n := len(p.st.Sessions); n > maxSessions {
		p.st.Sessions = append(p.st.Sessions[:0:0], p.st.Sessions[n-maxSessions:]...)
	}
	return &p.st.Sessions[len(p.st.Sessions)-1]
}

// sessionCwd is the cwd in the first line of the session's file, if it is found in one of the
// home's project directories (listed once per parser, again when a session is not in them).
func (p *logParser) sessionCwd(id string) string {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return ""
	}
	file := ""
	for pass := 0; pass < 2 && file == ""; pass++ {
		if pass == 1 || p.projects == nil {
			p.projects = []string{}
			entries, _ := transcript.ReadDir(filepath.Join(p.home, "sessions"))
			for _, e := range entries {
				if dir := filepath.Join(p.home, "sessions", e.Name()); transcript.IsDir(e, dir) {
					p.projects = append(p.projects, dir)
				}
			}
		}
		for _, dir := range p.projects {
			if fi, err := os.Stat(filepath.Join(dir, id+".jsonl")); err == nil && fi.Mode().IsRegular() {
				file = filepath.Join(dir, id+".jsonl")
				break
			}
		}
	}
	if file == "" {
		return ""
	}
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	first, _ := r.ReadSlice('\n')
	var start struct {
		Type string `json:"type"`
		Cwd  string `json:"cwd"`
	}
	if json.Unmarshal(first, &start) != nil || start.Type != "session_start" {
		return ""
	}
	return filepath.Clean(strings.TrimSpace(start.Cwd))
}

// model names a call's model: the tag, or for a custom model ("custom:<id>") the API's model the
// session's last sendMessage named, else the custom model's entry in settings.json.
func (p *logParser) model(s *logSession, tag string) string {
	if !strings.HasPrefix(tag, "custom:") {
		return tag
	}
	if s.Model != "" {
		return s.Model
	}
	if p.custom == nil {
		p.custom = customModels(p.home)
	}
	if m := p.custom[tag]; m != "" {
		return m
	}
	return strings.TrimPrefix(tag, "custom:")
}

// customModels reads the custom models of the home's settings.json: id → model.
func customModels(home string) map[string]string {
	out := map[string]string{}
	if home == "" {
		return out
	}
	data, err := os.ReadFile(filepath.Join(home, "settings.json"))
	if err != nil || len(data) > 8<<20 {
		return out
	}
	var s struct {
		CustomModels []struct {
			ID    string `json:"id"`
			Model string `json:"model"`
		} `json:"customModels"`
	}
	if json.Unmarshal(data, &s) != nil {
		return out
	}
	for _, m := range s.CustomModels {
		if m.ID != "" && m.Model != "" {
			out[m.ID] = m.Model
		}
	}
	return out
}
