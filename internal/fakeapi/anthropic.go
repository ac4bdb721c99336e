package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Texts of the scripted answers.
const (
	TextAfterTool  = "Done: the tool ran."
	TextBeforeTool = "Let me run a tool."
	TextNoTools    = "This is the observer fake API."
)

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Metadata struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	OutputConfig struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

// jsonSchema returns the schema the answer must follow, if the request asks for JSON output.
func (q *anthropicRequest) jsonSchema() json.RawMessage {
	if q.OutputConfig.Format.Type == "json_schema" {
		return q.OutputConfig.Format.Schema
	}
	return nil
}

// hasToolResult reports whether any message holds a tool_result block.
func (q *anthropicRequest) hasToolResult() bool {
	for _, m := range q.Messages {
		c := bytes.TrimSpace(m.Content)
		if len(c) == 0 || c[0] != '[' {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(c, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				return true
			}
		}
	}
	return false
}

// pickTool returns the tool to call and its input: Read with {"file_path": readPath} when
// readPath is set and Read is offered, else Bash with {"command":"ls"} when offered, else the
// first client tool with {}. Server tools (web search and the like, which have a versioned type)
// are never called. ok is false when no tool should be called.
func (q *anthropicRequest) pickTool(cmd, readPath string) (name string, input obj, ok bool) {
	if q.hasToolResult() {
		return "", nil, false
	}
	if readPath != "" {
		for _, t := range q.Tools {
			if t.Name == "Read" && (t.Type == "" || t.Type == "custom") {
				return t.Name, obj{"file_path": readPath}, true
			}
		}
	}
	first := ""
	for _, t := range q.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue
		}
		if t.Name == "Bash" {
			return t.Name, obj{"command": cmd}, true
		}
		if first == "" {
			first = t.Name
		}
	}
	if first == "" {
		return "", nil, false
	}
	return first, obj{}, true
}

// sessionID reads the session id Claude Code puts in metadata.user_id, a JSON string.
func (q *anthropicRequest) sessionID() string {
	var u struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(q.Metadata.UserID), &u) != nil {
		return ""
	}
	return u.SessionID
}

// anthropicUsage is the usage object of a message, and the record of it.
func (s *Server) anthropicUsage(output int64) (obj, map[string]int64) {
	u := s.cfg.Usage
	usage := obj{
		"input_tokens":                u.Input,
		"cache_creation_input_tokens": u.CacheWrite5m + u.CacheWrite1h,
		"cache_read_input_tokens":     u.CacheRead,
		"cache_creation": obj{
			"ephemeral_5m_input_tokens": u.CacheWrite5m,
			"ephemeral_1h_input_tokens": u.CacheWrite1h,
		},
		"output_tokens": output,
		"service_tier":  "standard",
	}
	rec := map[string]int64{
		"input_tokens":                             u.Input,
		"cache_creation_input_tokens":              u.CacheWrite5m + u.CacheWrite1h,
		"cache_read_input_tokens":                  u.CacheRead,
		"cache_creation.ephemeral_5m_input_tokens": u.CacheWrite5m,
		"cache_creation.ephemeral_1h_input_tokens": u.CacheWrite1h,
		"output_tokens":                            u.Output,
	}
	return usage, rec
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request, rec *Request) {
	var q anthropicRequest
	if !readJSON(w, r, ProviderAnthropic, &q) {
		return
	}
	if rec.SessionID == "" {
		rec.SessionID = q.sessionID()
	}
	rec.Model = s.model(q.Model, "claude-fake")
	rec.Stream = q.Stream
	rec.ToolResult = q.hasToolResult()
	rec.ResponseID = s.nextID("msg_fake_")

	// A tool call is a short text block and then the tool_use block, as real models answer: Claude
	// Code then writes two transcript lines with the same message id and usage.
	var blocks []obj
	stop := "end_turn"
	if name, input, ok := q.pickTool(s.command(), s.cfg.ReadPath); ok {
		rec.Action, rec.Tool, stop = ActionToolCall, name, "tool_use"
		blocks = []obj{
			{"type": "text", "text": TextBeforeTool},
			{"type": "tool_use", "id": s.nextID("toolu_fake_"), "name": name, "input": input},
		}
	} else {
		rec.Action = ActionFinalText
		blocks = []obj{{"type": "text", "text": finalText(q.jsonSchema(), q.hasToolResult())}}
	}
	finalUsage, recUsage := s.anthropicUsage(s.cfg.Usage.Output)
	rec.Usage = recUsage
	if !s.wait(r) {
		return
	}
	w.Header().Set("Request-Id", s.nextID("req_fake_"))
	if full := s.writeLimitHeaders(w, ProviderAnthropic); full != nil {
		rec.Action, rec.Tool, rec.Usage, rec.ResponseID = ActionError, "", nil, ""
		refuseFull(w, ProviderAnthropic, full)
		return
	}
	if !q.Stream {
		writeJSON(w, http.StatusOK, obj{
			"id": rec.ResponseID, "type": "message", "role": "assistant", "model": rec.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": finalUsage,
		})
		return
	}

	startUsage, _ := s.anthropicUsage(min(s.cfg.Usage.Output, 1))
	startSSE(w)
	sse(w, "message_start", obj{"type": "message_start", "message": obj{
		"id": rec.ResponseID, "type": "message", "role": "assistant", "model": rec.Model,
		"content": []obj{}, "stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	for i, b := range blocks {
		if b["type"] == "tool_use" {
			input, _ := json.Marshal(b["input"])
			sse(w, "content_block_start", obj{"type": "content_block_start", "index": i, "content_block": obj{
				"type": "tool_use", "id": b["id"], "name": b["name"], "input": obj{},
			}})
			sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": i,
				"delta": obj{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			sse(w, "content_block_start", obj{"type": "content_block_start", "index": i,
				"content_block": obj{"type": "text", "text": ""}})
			if i == 0 {
				sse(w, "ping", obj{"type": "ping"})
			}
			for _, part := range splitText(b["text"].(string)) {
				sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": i,
					"delta": obj{"type": "text_delta", "text": part}})
			}
		}
		sse(w, "content_block_stop", obj{"type": "content_block_stop", "index": i})
	}
	// Like the real API, message_delta repeats the input buckets beside the final output count.
	// Claude Code overwrites its input counts with these, so they must agree with message_start.
	deltaUsage := obj{
		"input_tokens":                finalUsage["input_tokens"],
		"cache_creation_input_tokens": finalUsage["cache_creation_input_tokens"],
		"cache_read_input_tokens":     finalUsage["cache_read_input_tokens"],
		"output_tokens":               finalUsage["output_tokens"],
	}
	sse(w, "message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": deltaUsage})
	sse(w, "message_stop", obj{"type": "message_stop"})
}

// anthropicCountTokens answers with the whole prompt size of the configured usage: uncached,
// cache-read and cache-written input together.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request, rec *Request) {
	var q anthropicRequest
	if !readJSON(w, r, ProviderAnthropic, &q) {
		return
	}
	rec.Action = ActionInfo
	rec.Model = s.model(q.Model, "claude-fake")
	u := s.cfg.Usage
	writeJSON(w, http.StatusOK, obj{"input_tokens": u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h})
}

// splitText cuts a text into two deltas so that clients see a real stream.
func splitText(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i < len(s) && s[i] != ' ' {
		i++
	}
	if i == len(s) {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}
