package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/client"
)

// fnTool is a function tool offered in an OpenAI request, from either the Responses shape
// ({"type":"function","name":...,"parameters":...}) or the Chat shape
// ({"type":"function","function":{"name":...,"parameters":...}}).
type fnTool struct {
	Name       string
	Parameters json.RawMessage
}

type responsesRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Text   struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
	Tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

func (q *responsesRequest) functionTools() []fnTool {
	var out []fnTool
	for _, t := range q.Tools {
		if t.Type == "function" && t.Name != "" {
			out = append(out, fnTool{Name: t.Name, Parameters: t.Parameters})
		}
	}
	return out
}

// hasToolResult reports whether the input holds the output of a tool call (function_call_output,
// custom_tool_call_output, local_shell_call_output, ...).
func (q *responsesRequest) hasToolResult() bool {
	in := bytes.TrimSpace(q.Input)
	if len(in) == 0 || in[0] != '[' {
		return false
	}
	var items []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(in, &items) != nil {
		return false
	}
	for _, it := range items {
		if strings.HasSuffix(it.Type, "_call_output") {
			return true
		}
	}
	return false
}

type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func (q *chatRequest) functionTools() []fnTool {
	var out []fnTool
	for _, t := range q.Tools {
		if t.Type == "function" && t.Function.Name != "" {
			out = append(out, fnTool{Name: t.Function.Name, Parameters: t.Function.Parameters})
		}
	}
	return out
}

func (q *chatRequest) hasToolResult() bool {
	for _, m := range q.Messages {
		if m.Role == "tool" || m.Role == "function" {
			return true
		}
	}
	return false
}

// commandTools are the clients' shell tools and the parameter that takes the command line (a
// string, or a list of command lines), as pkg/client's registry lists them: Gemini CLI's and Qwen
// Code's run_shell_command, Pi's, OpenCode's and Kilo's bash, Cline's run_commands (its older
// execute_command), OpenClaw's exec.
var commandTools = client.ShellTools()

// pickFunctionTool chooses the function tool to call and its JSON arguments: exec_command with its
// required string parameter (Codex names it cmd) set to "ls", else shell with ["ls"], else one of
// commandTools with "ls" (or ["ls"]) and a value of its schema for every other required parameter
// (OpenCode's bash requires a description), else the first function tool with {}.
func pickFunctionTool(tools []fnTool, cmd string) (name, args string, ok bool) {
	if len(tools) == 0 {
		return "", "", false
	}
	find := func(n string) (fnTool, bool) {
		i := slices.IndexFunc(tools, func(t fnTool) bool { return t.Name == n })
		if i < 0 {
			return fnTool{}, false
		}
		return tools[i], true
	}
	if t, ok := find("exec_command"); ok {
		param := requiredString(t.Parameters)
		if param == "" {
			param = "cmd"
		}
		return t.Name, marshalArgs(obj{param: cmd}), true
	}
	if t, ok := find("shell"); ok {
		if paramType(t.Parameters, "command") == "string" {
			return t.Name, marshalArgs(obj{"command": cmd}), true
		}
		argv := []string{"bash", "-lc", cmd}
		if !strings.ContainsAny(cmd, " \t") {
			argv = []string{cmd}
		}
		return t.Name, marshalArgs(obj{"command": argv}), true
	}
	for _, c := range commandTools {
		if t, ok := find(c.Name); ok {
			var schema any
			json.Unmarshal(t.Parameters, &schema)
			a, _ := schemaExample(schema, "value", 0).(map[string]any)
			if a == nil {
				a = obj{}
			}
			a[c.Param] = cmd
			if paramType(t.Parameters, c.Param) == "array" {
				a[c.Param] = []string{cmd}
			}
			return t.Name, marshalArgs(a), true
		}
	}
	return tools[0].Name, "{}", true
}

type jsonSchema struct {
	Properties map[string]struct {
		Type any `json:"type"` // a string, or a list of strings
	} `json:"properties"`
	Required []string `json:"required"`
}

// requiredString returns the first required parameter of type string in a JSON schema.
func requiredString(schema json.RawMessage) string {
	var s jsonSchema
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	for _, name := range s.Required {
		if paramType(schema, name) == "string" {
			return name
		}
	}
	return ""
}

// paramType returns the type of a property in a JSON schema ("string" when a list of types
// includes it).
func paramType(schema json.RawMessage, name string) string {
	var s jsonSchema
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	switch t := s.Properties[name].Type.(type) {
	case string:
		return strings.ToLower(t) // Gemini writes STRING
	case []any:
		for _, e := range t {
			if e == "string" {
				return "string"
			}
		}
		if len(t) > 0 {
			if str, ok := t[0].(string); ok {
				return strings.ToLower(str)
			}
		}
	}
	return ""
}

func marshalArgs(v obj) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// responsesUsage is the usage object of a Responses API response, and the record of it.
func (s *Server) responsesUsage() (obj, map[string]int64) {
	u := s.cfg.Usage
	in := u.Input + u.CacheRead
	usage := obj{
		"input_tokens":          in,
		"input_tokens_details":  obj{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": obj{"reasoning_tokens": u.Reasoning},
		"total_tokens":          in + u.Output,
	}
	rec := map[string]int64{
		"input_tokens":                           in,
		"input_tokens_details.cached_tokens":     u.CacheRead,
		"output_tokens":                          u.Output,
		"output_tokens_details.reasoning_tokens": u.Reasoning,
		"total_tokens":                           in + u.Output,
	}
	return usage, rec
}

// chatUsage is the usage object of a Chat Completions response, and the record of it.
func (s *Server) chatUsage() (obj, map[string]int64) {
	u := s.cfg.Usage
	in := u.Input + u.CacheRead
	usage := obj{
		"prompt_tokens":             in,
		"prompt_tokens_details":     obj{"cached_tokens": u.CacheRead},
		"completion_tokens":         u.Output,
		"completion_tokens_details": obj{"reasoning_tokens": u.Reasoning},
		"total_tokens":              in + u.Output,
	}
	rec := map[string]int64{
		"prompt_tokens":                              in,
		"prompt_tokens_details.cached_tokens":        u.CacheRead,
		"completion_tokens":                          u.Output,
		"completion_tokens_details.reasoning_tokens": u.Reasoning,
		"total_tokens":                               in + u.Output,
	}
	return usage, rec
}

func (s *Server) openAIResponses(w http.ResponseWriter, r *http.Request, rec *Request) {
	var q responsesRequest
	if !readJSON(w, r, ProviderOpenAI, &q) {
		return
	}
	rec.Model = s.model(q.Model, "gpt-fake")
	rec.Stream = q.Stream
	rec.ToolResult = q.hasToolResult()
	rec.ResponseID = s.nextID("resp_fake_")
	created := time.Now().Unix()

	var item obj // the one output item, completed
	if name, args, ok := pickFunctionTool(q.functionTools(), s.command()); ok && !q.hasToolResult() {
		rec.Action, rec.Tool = ActionToolCall, name
		item = obj{"type": "function_call", "id": s.nextID("fc_fake_"), "call_id": s.nextID("call_fake_"),
			"name": name, "arguments": args, "status": "completed"}
	} else {
		var schema json.RawMessage
		if q.Text.Format.Type == "json_schema" {
			schema = q.Text.Format.Schema
		}
		text := finalText(schema, q.hasToolResult())
		rec.Action = ActionFinalText
		item = obj{"type": "message", "id": s.nextID("msg_fake_"), "role": "assistant", "status": "completed",
			"content": []obj{{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	usage, recUsage := s.responsesUsage()
	rec.Usage = recUsage
	response := func(status string, output []obj, usage any) obj {
		return obj{
			"id": rec.ResponseID, "object": "response", "created_at": created, "status": status,
			"model": rec.Model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil,
			"parallel_tool_calls": false, "tool_choice": "auto", "store": false,
		}
	}
	if !s.wait(r) {
		return
	}
	w.Header().Set("X-Request-Id", s.nextID("req_fake_"))
	if full := s.writeLimitHeaders(w, ProviderOpenAI); full != nil {
		rec.Action, rec.Tool, rec.Usage, rec.ResponseID = ActionError, "", nil, ""
		refuseFull(w, ProviderOpenAI, full)
		return
	}
	if !q.Stream {
		writeJSON(w, http.StatusOK, response("completed", []obj{item}, usage))
		return
	}

	startSSE(w)
	seq := 0
	emit := func(typ string, fields obj) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		sse(w, typ, fields)
	}
	emit("response.created", obj{"response": response("in_progress", []obj{}, nil)})
	emit("response.in_progress", obj{"response": response("in_progress", []obj{}, nil)})
	id := item["id"]
	if item["type"] == "function_call" {
		added := obj{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		emit("response.output_item.added", obj{"output_index": 0, "item": added})
		emit("response.function_call_arguments.delta", obj{"item_id": id, "output_index": 0, "delta": item["arguments"]})
		emit("response.function_call_arguments.done", obj{"item_id": id, "output_index": 0, "arguments": item["arguments"]})
	} else {
		text := item["content"].([]obj)[0]["text"].(string)
		emit("response.output_item.added", obj{"output_index": 0, "item": obj{
			"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []obj{}}})
		emit("response.content_part.added", obj{"item_id": id, "output_index": 0, "content_index": 0,
			"part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, part := range splitText(text) {
			emit("response.output_text.delta", obj{"item_id": id, "output_index": 0, "content_index": 0, "delta": part})
		}
		emit("response.output_text.done", obj{"item_id": id, "output_index": 0, "content_index": 0, "text": text})
		emit("response.content_part.done", obj{"item_id": id, "output_index": 0, "content_index": 0,
			"part": obj{"type": "output_text", "text": text, "annotations": []any{}}})
	}
	emit("response.output_item.done", obj{"output_index": 0, "item": item})
	emit("response.completed", obj{"response": response("completed", []obj{item}, usage)})
}

func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request, rec *Request) {
	var q chatRequest
	if !readJSON(w, r, ProviderOpenAI, &q) {
		return
	}
	rec.Model = s.model(q.Model, "gpt-fake")
	rec.Stream = q.Stream
	rec.ToolResult = q.hasToolResult()
	rec.ResponseID = s.nextID("chatcmpl-fake-")
	created := time.Now().Unix()

	var text string
	var call obj // {"id","type","function":{"name","arguments"}} when calling a tool
	finish := "stop"
	if name, args, ok := pickFunctionTool(q.functionTools(), s.command()); ok && !q.hasToolResult() {
		rec.Action, rec.Tool, finish = ActionToolCall, name, "tool_calls"
		call = obj{"id": s.nextID("call_fake_"), "type": "function", "function": obj{"name": name, "arguments": args}}
	} else {
		var schema json.RawMessage
		if q.ResponseFormat.Type == "json_schema" {
			schema = q.ResponseFormat.JSONSchema.Schema
		}
		text = finalText(schema, q.hasToolResult())
		rec.Action = ActionFinalText
	}
	usage, recUsage := s.chatUsage()
	if !s.wait(r) {
		return
	}
	if full := s.writeLimitHeaders(w, ProviderOpenAI); full != nil {
		rec.Action, rec.Tool, rec.ResponseID = ActionError, "", ""
		refuseFull(w, ProviderOpenAI, full)
		return
	}
	if !q.Stream {
		rec.Usage = recUsage
		msg := obj{"role": "assistant", "content": text, "refusal": nil}
		if call != nil {
			msg["content"] = nil
			msg["tool_calls"] = []obj{call}
		}
		writeJSON(w, http.StatusOK, obj{
			"id": rec.ResponseID, "object": "chat.completion", "created": created, "model": rec.Model,
			"choices": []obj{{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage,
		})
		return
	}

	includeUsage := q.StreamOptions != nil && q.StreamOptions.IncludeUsage
	chunk := func(choices []obj) obj {
		c := obj{"id": rec.ResponseID, "object": "chat.completion.chunk", "created": created,
			"model": rec.Model, "choices": choices}
		if includeUsage {
			c["usage"] = nil // as the real API: null in every chunk but the last
		}
		return c
	}
	choice := func(delta obj, finish any) []obj {
		return []obj{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}
	}
	startSSE(w)
	if call != nil {
		fn := call["function"].(obj)
		sse(w, "", chunk(choice(obj{"role": "assistant", "content": nil, "tool_calls": []obj{{
			"index": 0, "id": call["id"], "type": "function", "function": obj{"name": fn["name"], "arguments": ""},
		}}}, nil)))
		sse(w, "", chunk(choice(obj{"tool_calls": []obj{{"index": 0, "function": obj{"arguments": fn["arguments"]}}}}, nil)))
	} else {
		sse(w, "", chunk(choice(obj{"role": "assistant", "content": ""}, nil)))
		for _, part := range splitText(text) {
			sse(w, "", chunk(choice(obj{"content": part}, nil)))
		}
	}
	sse(w, "", chunk(choice(obj{}, finish)))
	if includeUsage {
		rec.Usage = recUsage
		last := chunk([]obj{})
		last["usage"] = usage
		sse(w, "", last)
	}
	w.Write([]byte("data: [DONE]\n\n"))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
