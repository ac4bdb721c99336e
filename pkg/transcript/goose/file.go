package goose

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// fileState is a JSONL file parser's State: what was reported of the document.
type fileState struct {
	Started bool   `json:"started,omitempty"`
	Msgs    int    `json:"msgs,omitempty"`  // messages reported, from the file's start
	Usage   string `json:"usage,omitempty"` // fingerprint of the figures reported
	Title   string `json:"title,omitempty"` // fingerprint of the title reported
}

// FileParser reads one <session id>.jsonl file of the releases before the database, a Document
// source.
type FileParser struct {
	reader
	src transcript.Source
	st  fileState
}

var _ transcript.Parser = (*FileParser)(nil)

func newFileParser(a *Adapter, src transcript.Source, raw []byte) *FileParser {
	p := &FileParser{reader: newReader(a, src.Path), src: src}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st)
	}
	return p
}

// State returns what was reported, as JSON.
func (p *FileParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the records read.
func (p *FileParser) Stats() transcript.Stats { return p.stats.Clone() }

// fileMeta is the first line of a session file.
type fileMeta struct {
	WorkingDir              string `json:"working_dir"`
	Description             string `json:"description"`
	InputTokens             *int64 `json:"input_tokens"`
	OutputTokens            *int64 `json:"output_tokens"`
	AccumulatedInputTokens  *int64 `json:"accumulated_input_tokens"`
	AccumulatedOutputTokens *int64 `json:"accumulated_output_tokens"`
}

// fileMessage is one message line.
type fileMessage struct {
	Role     string          `json:"role"`
	Created  int64           `json:"created"`
	Content  json.RawMessage `json:"content"`
	Metadata json.RawMessage `json:"metadata"`
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// Record reads the whole file (a Document) and returns what it holds that was not reported yet.
// A file that does not parse as a whole is malformed and changes nothing.
func (p *FileParser) Record(off int64, data []byte) ([]event.Event, error) {
	p.stats.Lines++
	p.calls = map[string]callInfo{}
	if !utf8.Valid(data) {
		p.stats.Malformed++
		return nil, transcript.Malformed(Client, "%s is not UTF-8", p.src.Path)
	}
	var meta fileMeta
	var msgs []fileMessage
	first := true
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if first {
			first = false
			var probe struct {
				Role *string `json:"role"`
			}
			if err := json.Unmarshal(line, &probe); err != nil {
				p.stats.Malformed++
				return nil, transcript.Malformed(Client, "%s: metadata: %v", p.src.Path, err)
			}
			if probe.Role == nil { // goose reads a first line that is no message as the metadata
				if err := json.Unmarshal(line, &meta); err != nil {
					p.stats.Malformed++
					return nil, transcript.Malformed(Client, "%s: metadata: %v", p.src.Path, err)
				}
				continue
			}
		}
		var m fileMessage
		if err := json.Unmarshal(line, &m); err != nil || len(m.Content) == 0 {
			p.stats.Malformed++
			return nil, transcript.Malformed(Client, "%s: message %d does not decode", p.src.Path, len(msgs)+1)
		}
		msgs = append(msgs, m)
	}
	if first {
		return nil, nil // empty: goose created it and wrote nothing yet
	}
	s := &session{id: p.sessionID(), cwd: meta.WorkingDir}
	for _, m := range msgs {
		if t := secs(m.Created); !t.IsZero() {
			s.created = t
			break
		}
	}
	if s.created.IsZero() {
		return nil, nil // no message yet: nothing to report, and no time to report it at
	}
	st := p.st
	var out []event.Event
	if !st.Started {
		out = append(out, p.startedEvent(s))
		st.Started = true
	}
	if ev, ok := p.titleEvent(s, meta.Description, false, s.created); ok {
		if k := shortKey(ev.Session.Title); k != st.Title {
			out = append(out, ev)
			st.Title = k
		}
	}
	fig := figures{accIn: deref(meta.AccumulatedInputTokens), accOut: deref(meta.AccumulatedOutputTokens),
		in: deref(meta.InputTokens), out: deref(meta.OutputTokens)}
	if k := fig.key(); k != st.Usage {
		if ev, ok := p.usageEvent(s, fig); ok {
			out = append(out, ev)
		}
		st.Usage = k
	}
	from := st.Msgs
	if from > len(msgs) {
		from = 0 // the file was rewritten shorter: read it all again (the ids are the same)
	}
	// Earlier messages are read again for their tool calls, so that results find their calls.
	for i, m := range msgs {
		evs, err := p.messageEvents(s, &msg{role: m.Role, created: m.Created, content: m.Content, userVisible: visible(m.Metadata),
			place: int64(i + 1)}) // the line after the metadata's
		if err != nil {
			p.stats.Malformed++
			return nil, err
		}
		if i >= from {
			out = append(out, evs...)
		}
	}
	st.Msgs = len(msgs)
	p.st = st
	p.stats.Events += int64(len(out))
	return out, nil
}

// sessionID is the source's session id, else the file name without .jsonl.
func (p *FileParser) sessionID() string {
	if p.src.SessionID != "" {
		return p.src.SessionID
	}
	return strings.TrimSuffix(filepath.Base(p.src.Path), ".jsonl")
}
