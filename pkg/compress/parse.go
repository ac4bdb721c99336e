package compress

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/jsonscan"
)

// The request APIs a body can be compressed for.
const (
	APIAnthropic = "anthropic"        // POST /v1/messages
	APIChat      = "openai_chat"      // POST /v1/chat/completions
	APIResponses = "openai_responses" // POST /v1/responses
)

// request is what the compressor needs to know of one request body: where each conversation
// message (input item) lies, which tool calls it makes and answers, where the tool outputs are,
// where the cache breakpoints are and where the tool descriptions are. Offsets index the body;
// nothing is copied but the tool outputs' decoded text.
type request struct {
	api  string
	body []byte
	// arrStart, arrEnd bound the messages (input) array, brackets included.
	arrStart, arrEnd int
	msgs             []message
	// caches counts the cache_control markers of the whole request (tools, system, messages);
	// ttl is set when one of them names a TTL (a breakpoint added then could break the API's
	// rule that a 1-hour breakpoint never follows a 5-minute one).
	caches int
	ttl    bool
	// descs are the description strings of the tool definitions, with their depth (0: the tool's
	// own description, deeper: a parameter's).
	descs []span
	// model is the requested model, for events.
	model string
}

// span is the raw range of one JSON value in the body.
type span struct{ start, end, depth int }

// message is one element of the messages (or input) array.
type message struct {
	start, end int
	role       string // user, assistant, system, developer, tool; Responses items: see kind
	kind       string // Responses item type; "message" elsewhere
	model      bool   // written by the model (an assistant message, a reasoning item, a call)
	human      bool   // holds text a person (or the client for them) wrote: a prompt
	calls      []call // tool calls it makes
	answers    []string
	sites      []site // tool outputs it carries
	// lastBlock is the last content block object of an Anthropic message (start == end when the
	// content is a string or empty); cached reports whether that block has a cache_control, and
	// contentEnd is the index of the content array's closing bracket (0 when not an array).
	lastBlock  span
	cached     bool
	content    span // the content value
	contentEnd int
	text       int // bytes of text (prompts, answers, outputs) it holds
}

// call is one tool call: its id, the tool's name and the path it touches, if any.
type call struct{ id, name, path string }

// site is one tool output string: the raw JSON string's range and its decoded text.
type site struct {
	start, end int
	text       string
	id         string // the call it answers
}

var errShape = errors.New("not a request of the expected shape")

// parse reads a request body of api. It fails on anything that is not a JSON object with a
// messages (input) array of objects: such a body is forwarded as it came.
func parse(api string, body []byte) (*request, error) {
	r := &request{api: api, body: body, arrStart: -1}
	convKey := "messages"
	if api == APIResponses {
		convKey = "input"
	}
	end, err := jsonscan.WalkObject(body, 0, func(key []byte, at int) (int, error) {
		switch {
		case jsonscan.Key(key, convKey):
			if body[at] != '[' {
				return -1, nil // a Responses input string: nothing to compress
			}
			r.arrStart = at
			e, err := jsonscan.WalkArray(body, at, func(at int) (int, error) {
				m, e, err := r.message(at)
				if err != nil {
					return 0, err
				}
				r.msgs = append(r.msgs, m)
				return e, nil
			})
			r.arrEnd = e
			return e, err
		case jsonscan.Key(key, "model"):
			e, err := jsonscan.Skip(body, at)
			r.model = jsonscan.Str(body[at:max(e, at)])
			return e, err
		case jsonscan.Key(key, "system") && body[at] == '[':
			return jsonscan.WalkArray(body, at, func(at int) (int, error) {
				b, err := r.block(at, nil)
				return b.end, err
			})
		case jsonscan.Key(key, "tools") && body[at] == '[':
			return jsonscan.WalkArray(body, at, func(at int) (int, error) { return r.tool(at) })
		}
		return -1, nil
	})
	if err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if !jsonscan.AtEnd(body, end) {
		return nil, fmt.Errorf("compress: %w", jsonscan.ErrSyntax)
	}
	if r.arrStart < 0 {
		return nil, errShape
	}
	return r, nil
}

// message reads the conversation element at body[at].
func (r *request) message(at int) (message, int, error) {
	m := message{start: at, kind: "message"}
	if r.body[at] != '{' {
		return m, 0, errShape
	}
	var content []byte
	contentAt := -1
	var toolCallID, callID, output []byte
	outputAt := -1
	var name, args []byte
	end, err := jsonscan.WalkObject(r.body, at, func(key []byte, at int) (int, error) {
		e, err := jsonscan.Skip(r.body, at)
		if err != nil {
			return 0, err
		}
		v := r.body[at:e]
		switch {
		case jsonscan.Key(key, "role"):
			m.role = jsonscan.Str(v)
		case jsonscan.Key(key, "type"):
			m.kind = jsonscan.Str(v)
		case jsonscan.Key(key, "content"):
			content, contentAt = v, at
		case jsonscan.Key(key, "tool_call_id"):
			toolCallID = v
		case jsonscan.Key(key, "call_id"):
			callID = v
		case jsonscan.Key(key, "output"):
			output, outputAt = v, at
		case jsonscan.Key(key, "name"):
			name = v
		case jsonscan.Key(key, "arguments"), jsonscan.Key(key, "input"):
			args = v
		case jsonscan.Key(key, "tool_calls"):
			// Chat: {"id", "type":"function", "function":{"name","arguments"}}
			err := jsonscan.Elements(v, func(tc []byte) bool {
				id, fn := members2(tc, "id", "function")
				name, fargs := members2(fn, "name", "arguments")
				c := call{id: jsonscan.Str(id), name: jsonscan.Str(name)}
				c.path = pathOf(c.name, argsJSON(fargs))
				m.calls = append(m.calls, c)
				return true
			})
			if err != nil {
				return 0, err
			}
		}
		return e, nil
	})
	if err != nil {
		return m, 0, err
	}
	m.end = end
	switch r.api {
	case APIAnthropic:
		m.model = m.role == "assistant"
		err = r.anthropicContent(&m, content, contentAt)
	case APIChat:
		m.model = m.role == "assistant"
		switch m.role {
		case "tool", "function":
			m.answers = append(m.answers, jsonscan.Str(toolCallID))
			err = r.outputSites(&m, content, contentAt, jsonscan.Str(toolCallID))
		default:
			m.text += textSize(content)
			m.human = m.role == "user"
		}
	case APIResponses:
		id := jsonscan.Str(callID)
		switch m.kind {
		case "message":
			m.model = m.role == "assistant"
			m.human = m.role == "user"
			m.text += textSize(content)
		case "function_call", "custom_tool_call", "local_shell_call":
			m.model = true
			n := jsonscan.Str(name)
			m.calls = append(m.calls, call{id: id, name: n, path: pathOf(n, argsJSON(args))})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			m.answers = append(m.answers, id)
			err = r.outputSites(&m, output, outputAt, id)
		case "reasoning", "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call":
			m.model = true
		default:
			// Items of other kinds (a compaction summary, an MCP approval, an item reference) are
			// neither a turn of the model nor ever dropped: they end a unit.
		}
	}
	return m, end, err
}

// anthropicContent reads a Messages API content value: tool_use blocks, tool_result blocks (their
// outputs are sites), cache breakpoints, and the last block (where a breakpoint or a marker goes).
func (r *request) anthropicContent(m *message, content []byte, at int) error {
	if at >= 0 {
		m.content = span{start: at, end: at + len(content)}
	}
	if at < 0 || len(content) == 0 || content[0] != '[' {
		m.text += textSize(content)
		m.human = m.role == "user"
		return nil
	}
	end, err := jsonscan.WalkArray(r.body, at, func(at int) (int, error) {
		b, err := r.block(at, m)
		if err != nil {
			return 0, err
		}
		m.lastBlock, m.cached = span{start: at, end: b.end}, b.cached
		return b.end, nil
	})
	m.contentEnd = end - 1
	return err
}

// blockInfo is what block learned of one content block.
type blockInfo struct {
	end    int
	cached bool
}

// block reads one content block (of a message when m is not nil, of the system prompt else).
func (r *request) block(at int, m *message) (blockInfo, error) {
	var b blockInfo
	if r.body[at] != '{' {
		e, err := jsonscan.Skip(r.body, at)
		return blockInfo{end: e}, err
	}
	var typ, id, name, input, useID, content []byte
	contentAt := -1
	end, err := jsonscan.WalkObject(r.body, at, func(key []byte, at int) (int, error) {
		e, err := jsonscan.Skip(r.body, at)
		if err != nil {
			return 0, err
		}
		v := r.body[at:e]
		switch {
		case jsonscan.Key(key, "type"):
			typ = v
		case jsonscan.Key(key, "id"):
			id = v
		case jsonscan.Key(key, "name"):
			name = v
		case jsonscan.Key(key, "input"):
			input = v
		case jsonscan.Key(key, "tool_use_id"):
			useID = v
		case jsonscan.Key(key, "content"):
			content, contentAt = v, at
		case jsonscan.Key(key, "cache_control"):
			if !jsonscan.Null(v) {
				b.cached = true
				r.cache(v)
			}
		case jsonscan.Key(key, "text"):
			if m != nil {
				m.text += len(v)
			}
		}
		return e, nil
	})
	if err != nil {
		return b, err
	}
	b.end = end
	if m == nil {
		return b, nil
	}
	switch jsonscan.Str(typ) {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		n := jsonscan.Str(name)
		m.calls = append(m.calls, call{id: jsonscan.Str(id), name: n, path: pathOf(n, input)})
	case "tool_result":
		u := jsonscan.Str(useID)
		m.answers = append(m.answers, u)
		return b, r.outputSites(m, content, contentAt, u)
	case "text":
		if m.role == "user" {
			m.human = true
		}
	}
	return b, nil
}

// outputSites records the tool output strings of one output value: a string, or an array of
// parts whose text (text, input_text, output_text) is a site each. Images and files stay as
// they are.
func (r *request) outputSites(m *message, v []byte, at int, id string) error {
	if at < 0 || len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"':
		s, ok := jsonscan.String(v)
		if !ok {
			return jsonscan.ErrSyntax
		}
		m.sites = append(m.sites, site{start: at, end: at + len(v), text: s, id: id})
		m.text += len(s)
	case '[':
		_, err := jsonscan.WalkArray(r.body, at, func(at int) (int, error) {
			if r.body[at] != '{' {
				return -1, nil
			}
			var typ []byte
			textAt, textEnd := -1, 0
			e, err := jsonscan.WalkObject(r.body, at, func(key []byte, at int) (int, error) {
				e, err := jsonscan.Skip(r.body, at)
				switch {
				case err != nil:
				case jsonscan.Key(key, "type"):
					typ = r.body[at:e]
				case jsonscan.Key(key, "text") && r.body[at] == '"':
					textAt, textEnd = at, e
				case jsonscan.Key(key, "cache_control") && !jsonscan.Null(r.body[at:e]):
					r.cache(r.body[at:e])
				}
				return e, err
			})
			if err != nil {
				return 0, err
			}
			switch jsonscan.Str(typ) {
			case "text", "input_text", "output_text":
				if textAt >= 0 {
					s, _ := jsonscan.String(r.body[textAt:textEnd])
					m.sites = append(m.sites, site{start: textAt, end: textEnd, text: s, id: id})
					m.text += len(s)
				}
			}
			return e, nil
		})
		return err
	}
	return nil
}

// tool reads one tool definition: where its descriptions are, and whether it is a breakpoint.
func (r *request) tool(at int) (int, error) {
	if r.body[at] != '{' {
		return -1, nil
	}
	return jsonscan.WalkObject(r.body, at, func(key []byte, at int) (int, error) {
		switch {
		case jsonscan.Key(key, "description") && r.body[at] == '"':
			e, err := jsonscan.Skip(r.body, at)
			r.descs = append(r.descs, span{start: at, end: e})
			return e, err
		case jsonscan.Key(key, "cache_control"):
			e, err := jsonscan.Skip(r.body, at)
			if err == nil && !jsonscan.Null(r.body[at:e]) {
				r.cache(r.body[at:e])
			}
			return e, err
		case jsonscan.Key(key, "function") && r.body[at] == '{':
			return r.tool(at) // Chat: {"type":"function","function":{...}}
		case jsonscan.Key(key, "parameters"), jsonscan.Key(key, "input_schema"):
			return r.schemaDescs(at, 1)
		}
		return -1, nil
	})
}

// schemaDescs records the description strings inside a JSON schema. A property that happens to
// be named "description" holds an object, not a string, and is walked like any other.
func (r *request) schemaDescs(at, depth int) (int, error) {
	switch r.body[at] {
	case '{':
		return jsonscan.WalkObject(r.body, at, func(key []byte, at int) (int, error) {
			if jsonscan.Key(key, "description") && r.body[at] == '"' {
				e, err := jsonscan.Skip(r.body, at)
				r.descs = append(r.descs, span{start: at, end: e, depth: depth})
				return e, err
			}
			if depth > 16 {
				return -1, nil
			}
			return r.schemaDescs(at, depth+1)
		})
	case '[':
		return jsonscan.WalkArray(r.body, at, func(at int) (int, error) { return r.schemaDescs(at, depth+1) })
	}
	return -1, nil
}

// members2 returns the raw values of two members of an object (nil when absent).
func members2(obj []byte, a, b string) (va, vb []byte) {
	jsonscan.Members(obj, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, a):
			va = v
		case jsonscan.Key(k, b):
			vb = v
		}
		return true
	})
	return va, vb
}

// cache counts one cache_control value.
func (r *request) cache(v []byte) {
	r.caches++
	if bytes.Contains(v, []byte(`"ttl"`)) {
		r.ttl = true
	}
}

// textSize is the size of a text value (string, or parts), for the density of a message.
func textSize(v []byte) int { return len(v) }

// argsJSON returns the JSON object a call's arguments hold: the value itself, or the object
// encoded in a string (OpenAI sends arguments as a JSON string).
func argsJSON(v []byte) []byte {
	if len(v) > 0 && v[0] == '"' {
		if s, ok := jsonscan.String(v); ok {
			return []byte(s)
		}
	}
	return v
}

// pathOf returns the file a tool call reads or writes, from its input: a path argument, or the
// file a command prints (cat, head, tail, sed -n, nl, less).
func pathOf(tool string, input []byte) string {
	var path, cmd string
	jsonscan.Members(input, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, "file_path"), jsonscan.Key(k, "path"), jsonscan.Key(k, "filePath"),
			jsonscan.Key(k, "notebook_path"), jsonscan.Key(k, "absolute_path"), jsonscan.Key(k, "url"):
			if path == "" {
				path = jsonscan.Str(v)
			}
		case jsonscan.Key(k, "command"), jsonscan.Key(k, "cmd"):
			if len(v) > 0 && v[0] == '[' {
				var parts []string
				jsonscan.Elements(v, func(e []byte) bool { parts = append(parts, jsonscan.Str(e)); return true })
				cmd = strings.Join(parts, " ")
			} else {
				cmd = jsonscan.Str(v)
			}
		}
		return true
	})
	if path != "" {
		return path
	}
	return commandPath(cmd)
}

// commandPath reads the file a simple printing command names: `cat f`, `head -n 50 f`,
// `sed -n '1,200p' f`, and the same behind `bash -lc`.
func commandPath(cmd string) string {
	if i := strings.Index(cmd, "-lc "); i >= 0 && strings.HasPrefix(strings.TrimSpace(cmd), "bash") {
		cmd = strings.Trim(strings.TrimSpace(cmd[i+4:]), `'"`)
	}
	if strings.ContainsAny(cmd, "|;&><") {
		return ""
	}
	f := strings.Fields(cmd)
	if len(f) < 2 {
		return ""
	}
	switch f[0] {
	case "cat", "head", "tail", "sed", "nl", "less", "more", "bat":
		last := strings.Trim(f[len(f)-1], `'"`)
		if !strings.HasPrefix(last, "-") {
			return last
		}
	}
	return ""
}
