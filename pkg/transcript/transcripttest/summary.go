package transcripttest

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Bucket is a reader's sum of token usage in its golden files: a pointer to its struct B, whose
// fields are the figures its format records.
type Bucket[B any] interface {
	*B
	// Add counts one usage.
	Add(u *event.TokenUsage)
	// RoundCost rounds the summed cost with RoundUSD.
	RoundCost()
}

// RoundUSD rounds a sum of costs to a millionth of a dollar, so that a golden file does not
// depend on the order floats were added in.
func RoundUSD(usd float64) float64 { return math.Round(usd*1e6) / 1e6 }

// Summary is the figures of one file that a reader's golden file keeps: its records, its events
// merged as the writer merges them, their usage summed in buckets of the reader's type B (overall
// and per model), its actions and a line per session event.
type Summary[B any] struct {
	SessionID string `json:"session_id"`
	Project   string `json:"project"` // the first merged event's that has one
	Records   int64  `json:"records"`
	Malformed int64  `json:"malformed"`
	Events    int    `json:"events"`
	Distinct  int    `json:"distinct_ids"`

	Usage   B             `json:"usage"`
	ByModel map[string]*B `json:"by_model"`

	Prompts  []string         `json:"prompts"`
	Actions  map[string]int   `json:"actions"`          // normalized type -> distinct actions
	Tools    map[string]int   `json:"tools"`            // raw tool -> distinct calls
	Failures map[string]int   `json:"failures"`         // normalized type -> calls that failed
	NoResult map[string]int   `json:"no_result"`        // normalized type -> calls with no outcome
	Targets  []string         `json:"targets,omitzero"` // type tool target, per call in order (Style.Targets)
	Sessions []string         `json:"sessions"`         // Style.Session's line of each session event
	Unknown  map[string]int64 `json:"unknown,omitempty"`
}

// Style is what a reader's golden summaries write their own way.
type Style struct {
	// Session writes a session event's line.
	Session func(*event.Session) string
	// Targets keeps each tool call's type, tool and target, in order.
	Targets bool
}

// Summarize folds evs, the events of one file read by a parser whose stats are st, into a
// Summary, with the session id given.
func Summarize[B any, PB Bucket[B]](evs []event.Event, st transcript.Stats, sessionID string, style Style) Summary[B] {
	s := Summary[B]{SessionID: sessionID, Records: st.Lines, Malformed: st.Malformed, Events: len(evs),
		ByModel: map[string]*B{}, Prompts: []string{}, Actions: map[string]int{}, Tools: map[string]int{},
		Failures: map[string]int{}, NoResult: map[string]int{}, Sessions: []string{}, Unknown: st.Unknown}
	if style.Targets {
		s.Targets = []string{}
	}
	ids, byID := Merge(evs)
	s.Distinct = len(ids)
	for _, id := range ids {
		e := byID[id]
		if s.Project == "" {
			s.Project = e.Project
		}
		switch {
		case e.TokenUsage != nil:
			u := e.TokenUsage
			PB(&s.Usage).Add(u)
			if s.ByModel[u.Model] == nil {
				s.ByModel[u.Model] = new(B)
			}
			PB(s.ByModel[u.Model]).Add(u)
		case e.Session != nil:
			s.Sessions = append(s.Sessions, style.Session(e.Session))
		case e.Action != nil:
			a := e.Action
			s.Actions[string(a.Type)]++
			if a.Type == event.ActionUserPrompt {
				s.Prompts = append(s.Prompts, transcript.CutRunes(a.Target, 60))
			}
			if a.ToolUseID == "" {
				continue
			}
			s.Tools[a.Tool]++
			if style.Targets {
				s.Targets = append(s.Targets, fmt.Sprintf("%s %s %s", a.Type, a.Tool, transcript.CutRunes(a.Target, 80)))
			}
			switch {
			case a.Success == nil:
				s.NoResult[string(a.Type)]++
			case !*a.Success:
				s.Failures[string(a.Type)]++
			}
		}
	}
	PB(&s.Usage).RoundCost()
	for _, b := range s.ByModel {
		PB(b).RoundCost()
	}
	return s
}

// View is what a golden file keeps of an event: its identity and payload, the transcript path
// reduced to its base name (the tests' files live in temporary directories).
type View struct {
	ID         string            `json:"id,omitempty"`
	Kind       event.Kind        `json:"kind"`
	Time       string            `json:"time"`
	Session    string            `json:"session"`
	Project    string            `json:"project,omitempty"`
	Action     *event.Action     `json:"action,omitempty"`
	TokenUsage *event.TokenUsage `json:"token_usage,omitempty"`
	State      *event.Session    `json:"session_event,omitempty"`
}

// Views returns the views of evs, each time in the layout given.
func Views(evs []event.Event, timeLayout string) []View {
	out := make([]View, 0, len(evs))
	for _, e := range evs {
		v := View{ID: e.ID, Kind: e.Kind, Time: e.Time.Format(timeLayout), Session: e.SessionID,
			Project: e.Project, TokenUsage: e.TokenUsage}
		if e.Action != nil {
			a := *e.Action
			a.Transcript = filepath.Base(a.Transcript)
			v.Action = &a
		}
		if e.Session != nil {
			s := *e.Session
			s.TranscriptPath = filepath.Base(s.TranscriptPath)
			v.State = &s
		}
		out = append(out, v)
	}
	return out
}
