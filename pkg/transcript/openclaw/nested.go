package openclaw

import (
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript/pi"
)

// nestedToolType is the customType of the custom message OpenClaw writes for a tool that ran
// inside another call: a catalog tool run through Tool Search's tool_call, or a tool called from
// Code Mode's guest program.
const nestedToolType = "openclaw.nested-tool.v1"

// custom reads a message of role custom: a nested-tool message, or one of OpenClaw's and
// extensions' notes, which yield nothing (they are not the user's, not the model's).
func (p *Parser) custom(s *pi.Session, customType string, details []byte, key string, t time.Time, hasTime bool) ([]event.Event, error) {
	if customType != nestedToolType {
		return nil, nil
	}
	if !hasTime {
		return nil, malformed("nested tool has no timestamp")
	}
	return p.nestedTool(s, details, key, t), nil
}

// nested is the details of a nested-tool message.
type nested struct {
	CallID, Tool, Parent string
	Input, Result        []byte
	IsError              bool
	Started, Done        []byte
}

func readNested(raw []byte) (n nested, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return n, false
	}
	err := jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "toolCallId":
			n.CallID = jsonscan.Str(v)
		case "toolName":
			n.Tool = jsonscan.Str(v)
		case "parentToolCallId":
			n.Parent = jsonscan.Str(v)
		case "input":
			n.Input = v
		case "result":
			n.Result = v
		case "isError":
			n.IsError, _ = jsonscan.Bool(v)
		case "startedAt":
			n.Started = v
		case "timestamp":
			n.Done = v
		}
		return true
	})
	return n, err == nil && n.Tool != ""
}

// nestedTool reads a nested-tool message: a catalog tool that ran through a tool_call wrapper
// completes the wrapper's action; a tool run from a Code Mode program is an action of its own.
func (p *Parser) nestedTool(s *pi.Session, details []byte, key string, t time.Time) []event.Event {
	n, ok := readNested(details)
	if !ok {
		p.r.Stats.CountUnknown("message/custom/" + nestedToolType + " (no tool)")
		return nil
	}
	var id string
	var a event.Action
	c, wrapped := s.Find(n.Parent)
	wrapped = wrapped && c.Inner && strings.EqualFold(c.Tool, n.Tool)
	if wrapped {
		id, a = c.Key, event.Action{Type: c.Type, Tool: c.Tool, Target: string(c.Target), ToolUseID: c.CallID,
			MessageID: c.Msg, Model: c.Model}
	} else {
		callID := n.CallID
		if callID == "" {
			callID = "nested:" + n.Parent + ":" + n.Tool
		}
		id = event.ID(Client, string(event.KindAction), callID, key)
		a = event.Action{Type: ToolType(n.Tool), Tool: n.Tool, Target: p.r.Target(s, n.Tool, n.Input),
			ToolUseID: callID, InputHash: pi.HashInput(n.Input)}
		if c, ok := s.Find(n.Parent); ok {
			a.MessageID, a.Model = c.Msg, c.Model
		}
	}
	start, hasStart := pi.MessageTime(n.Started)
	done, hasDone := pi.MessageTime(n.Done)
	if hasStart && hasDone {
		a.DurationMs = pi.Duration(start, done)
	}
	if len(n.Result) > 0 && n.Result[0] == '{' {
		var content []byte
		_ = jsonscan.Members(n.Result, func(k, v []byte) bool {
			if jsonscan.Key(k, "content") {
				content = v
				return false
			}
			return true
		})
		pi.Outcome(&a, content, n.IsError)
	}
	evs := []event.Event{p.r.Action(s, id, t, &a)}
	if !wrapped {
		// A tool a Code Mode program called is a tool call of its own, in its place.
		evs = append(evs, p.r.Message(s, event.ID(Client, string(event.KindMessage), a.ToolUseID, key), t, 0,
			&event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool, ToolUseID: a.ToolUseID,
				MessageID: a.MessageID, Model: a.Model}))
	}
	return evs
}
