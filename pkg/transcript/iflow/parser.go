package iflow

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape"
)

// Component is the source stamped on every event.
const Component = ccshape.Component

// Parser reads one transcript.
type Parser = ccshape.Parser[record, *record]

var _ transcript.Parser = (*Parser)(nil)

// record is one line: Claude Code's fields, and those iFlow adds.
type record struct {
	ccshape.Record
	SessionID string `json:"sessionId"`
	// ToolUseResult is an object {toolName, status}; Claude Code's habit of writing a string
	// there (an error's text) is kept too, so it is decoded when a result is read, and a string
	// (or anything else) carries no status rather than making the line malformed.
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

// status is the record's toolUseResult.status, "" when it has none.
func (r *record) status() string {
	var v struct {
		Status string `json:"status"`
	}
	if len(r.ToolUseResult) == 0 || r.ToolUseResult[0] != '{' || json.Unmarshal(r.ToolUseResult, &v) != nil {
		return ""
	}
	return v.Status
}

// config is what iFlow's records read differently from the others in Claude Code's shape: its
// tool names, its tool results, and a subagent's file linked by the session its records name.
var config = ccshape.Config[*record]{
	Client:  Client,
	Tool:    toolOf,
	Result:  result,
	Session: func(r *record) string { return r.SessionID },
}

// result reads a tool_result block. The record's toolUseResult status is read when the record
// holds this one result, since it cannot say which of several it speaks of.
func result(b *ccshape.Block, r *record, alone bool) ccshape.Outcome {
	status := ""
	if alone {
		status = r.status()
	}
	res := resultOf(b.Content)
	o := ccshape.Outcome{Output: res.out, Failed: b.IsError || res.err != "" || statusFailed(status),
		Error: transcript.FirstNonEmpty(res.err, res.out, status)}
	if res.name != "" {
		o.Tool = transcript.CutRunes(res.name, 200)
		o.Type = toolType(o.Tool)
	}
	return o
}

// statusFailed reads a toolUseResult status: "success" (and an empty one) did not fail.
func statusFailed(status string) bool {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "", "success", "succeeded", "completed", "ok":
		return false
	}
	return true
}

// toolResult is what a tool_result's content says.
type toolResult struct {
	name, out, err string
}

// functionResponse is Gemini CLI's {id, name, response: {output, error}}.
type functionResponse struct {
	Name     string `json:"name"`
	Response struct {
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	} `json:"response"`
}

// resultOf reads a tool_result's content: iFlow's object {callId, responseParts:
// {functionResponse}, resultDisplay} or {functionResponse}, else a string or text blocks.
func resultOf(raw json.RawMessage) toolResult {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return toolResult{}
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return toolResult{out: s}
	case '[':
		var blocks []ccshape.Block
		_ = json.Unmarshal(raw, &blocks)
		return toolResult{out: ccshape.BlockText(blocks)}
	case '{':
		var c struct {
			ResponseParts *struct {
				FunctionResponse *functionResponse `json:"functionResponse"`
			} `json:"responseParts"`
			FunctionResponse *functionResponse `json:"functionResponse"`
			ResultDisplay    json.RawMessage   `json:"resultDisplay"`
		}
		if json.Unmarshal(raw, &c) != nil {
			return toolResult{}
		}
		fr := c.FunctionResponse
		if c.ResponseParts != nil && c.ResponseParts.FunctionResponse != nil {
			fr = c.ResponseParts.FunctionResponse
		}
		var r toolResult
		if fr != nil {
			r.name = strings.TrimSpace(fr.Name)
			r.out = anyText(fr.Response.Output)
			r.err = anyText(fr.Response.Error)
		}
		if r.out == "" {
			r.out = anyText(c.ResultDisplay)
		}
		return r
	}
	return toolResult{out: string(raw)}
}

// anyText reads a string, an object's message (or fileDiff), else the JSON itself; null is "".
func anyText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message  string `json:"message"`
		FileDiff string `json:"fileDiff"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &o) == nil {
		if t := transcript.FirstNonEmpty(o.Message, o.FileDiff); t != "" {
			return t
		}
	}
	return string(raw)
}
