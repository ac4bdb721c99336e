package openclaw

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fixtures were written by the real OpenClaw (see testdata/README.md).
var (
	// fixDB is the agent database of OpenClaw 2026.9.6 after five turns in four sessions.
	fixDB = filepath.Join("testdata", "state", "agents", "main", "agent", DatabaseName)
	// fixLegacy is a session file of OpenClaw 2026.7.1.
	fixLegacy = filepath.Join("testdata", "legacy", "agents", "main", "sessions", "92614f30-4fb9-4803-9aad-8d86b7ea54c4.jsonl")
	// fixMigrated is the agent database `openclaw doctor --fix` of 2026.9.6 made of fixLegacy.
	fixMigrated = filepath.Join("testdata", "migrated", "agents", "main", "agent", DatabaseName)
)

// abs returns the absolute path of a fixture.
func abs(tb testing.TB, path string) string {
	tb.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// dbSrc is the source Discover gives an agent database.
func dbSrc(tb testing.TB, path string) transcript.Source {
	return transcript.Source{Client: Client, Path: abs(tb, path), Database: true}
}

// fileSrc is the source Discover gives a legacy session file.
func fileSrc(tb testing.TB, path string) transcript.Source {
	p := abs(tb, path)
	return transcript.Source{Client: Client, Path: p, SessionID: SessionIDFromPath(p)}
}

// check validates events and their envelope.
var check = transcripttest.Envelope(Client, Component)

// poll runs one pass of a fresh parser of src resumed from state.
func poll(tb testing.TB, a *Adapter, src transcript.Source, state []byte) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := a.newParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Poll(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	check(tb, evs)
	return evs, p
}

// parseFile parses a whole session file in one pass.
func parseFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, a.newParser, src, check)
}

// parseLines parses lines given as strings, as the session file src.
func parseLines(tb testing.TB, src transcript.Source, lines ...string) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseLines(tb, New(nil).newParser, src, check, lines...)
}

// bucket is one model's usage.
type bucket struct {
	Messages        int     `json:"messages"`
	Input           int64   `json:"input_tokens"` // net of cache reads and writes
	CacheRead       int64   `json:"cache_read_tokens"`
	CacheCreation   int64   `json:"cache_creation_tokens"`
	CacheCreation1h int64   `json:"cache_creation_1h_tokens"`
	Output          int64   `json:"output_tokens"` // reasoning included
	Reasoning       int64   `json:"reasoning_tokens"`
	CostUSD         float64 `json:"cost_usd"`
}

func (b *bucket) add(u *event.TokenUsage) {
	b.Messages++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.CacheCreation += u.CacheCreation
	b.CacheCreation1h += u.CacheCreation1h
	b.Output += u.Output
	b.Reasoning += u.Reasoning
	b.CostUSD += u.CostUSD
}

// summary is the per-session figures kept in the golden files.
type summary struct {
	Project  string             `json:"project"`
	Events   int                `json:"events"`
	Distinct int                `json:"distinct_ids"`
	Usage    bucket             `json:"usage"`
	ByModel  map[string]*bucket `json:"by_model"`
	Messages []string           `json:"message_ids"` // usage MessageIDs, in order
	Prompts  []string           `json:"prompts"`
	Actions  []string           `json:"actions"`  // type tool target -> outcome, in order
	Sessions []string           `json:"sessions"` // session events: state, model, parent, epoch
}

// summarize folds events (as the writer does) per session id.
func summarize(evs []event.Event) map[string]*summary {
	out := map[string]*summary{}
	ids, byID := transcripttest.Merge(evs)
	for _, id := range ids {
		e := byID[id]
		s := out[e.SessionID]
		if s == nil {
			s = &summary{ByModel: map[string]*bucket{}, Messages: []string{}, Prompts: []string{},
				Actions: []string{}, Sessions: []string{}}
			out[e.SessionID] = s
		}
		s.Distinct++
		if s.Project == "" {
			s.Project = e.Project
		}
		switch {
		case e.TokenUsage != nil:
			u := e.TokenUsage
			s.Usage.add(u)
			if s.ByModel[u.Model] == nil {
				s.ByModel[u.Model] = &bucket{}
			}
			s.ByModel[u.Model].add(u)
			s.Messages = append(s.Messages, u.MessageID)
		case e.Session != nil:
			line := e.Session.State + " " + e.Session.Model
			if e.Session.ParentSessionID != "" {
				line += " parent " + e.Session.ParentSessionID
			}
			if e.Session.Epoch > 0 {
				line += fmt.Sprintf(" epoch %d", e.Session.Epoch)
			}
			if e.Session.Title != "" {
				line += fmt.Sprintf(" title %q", e.Session.Title)
			}
			s.Sessions = append(s.Sessions, strings.TrimSpace(line))
		case e.Action != nil:
			a := e.Action
			if a.Type == event.ActionUserPrompt {
				s.Prompts = append(s.Prompts, transcript.CutRunes(a.Target, 60))
				continue
			}
			outcome := "no result"
			if a.Success != nil {
				outcome = fmt.Sprintf("success %v", *a.Success)
			}
			if a.Error != "" {
				outcome += ": " + transcript.CutRunes(strings.ReplaceAll(a.Error, "\n", " "), 60)
			}
			s.Actions = append(s.Actions, fmt.Sprintf("%s %s %q %s -> %s (%d bytes out)", a.Type, a.Tool, a.Target,
				a.ToolUseID, outcome, a.OutputSize))
		}
	}
	for _, e := range evs {
		out[e.SessionID].Events++
	}
	round := func(b *bucket) { b.CostUSD = math.Round(b.CostUSD*1e6) / 1e6 }
	for _, s := range out {
		round(&s.Usage)
		for _, b := range s.ByModel {
			round(b)
		}
	}
	return out
}
