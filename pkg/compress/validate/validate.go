// Package validate checks model API request bodies against the rules the APIs enforce, so that a
// proxy that rewrites bodies (the compressor) can prove it never sends upstream a request the API
// would reject with a 400. It knows three APIs: Anthropic Messages (POST /v1/messages), OpenAI
// Chat Completions (POST /v1/chat/completions) and OpenAI Responses (POST /v1/responses).
//
// The checks are strict where the APIs are strict (JSON syntax, UTF-8, surrogates, roles, the
// pairing of tool calls with their results, content that must not be empty, prompt-caching
// breakpoints) and lenient where the APIs grow: a block or item type this package does not know is
// accepted as long as it names its type, and top-level parameters it does not check are ignored.
// Each rule is written beside the code that checks it, with the API's own error message where one
// is known (quoted from public bug reports, cited as owner/repo#issue).
//
// Body returns every problem it finds, not only the first, each naming where it is with a path in
// the body ("messages[3].content[1]"). It is safe for concurrent use.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The APIs Body knows.
const (
	Anthropic = "anthropic"        // POST /v1/messages
	Chat      = "openai_chat"      // POST /v1/chat/completions
	Responses = "openai_responses" // POST /v1/responses
)

// Problem is one rule a body breaks.
type Problem struct {
	Where string // path in the body, "" for the body as a whole
	What  string
}

func (p *Problem) Error() string {
	if p.Where == "" {
		return p.What
	}
	return p.Where + ": " + p.What
}

// Body checks one request body against the rules the API enforces, and returns every problem found
// (nil when valid). Each problem is a *Problem naming where it is (e.g. "messages[3].content[1]").
func Body(api string, body []byte) []error {
	var c checker
	switch api {
	case Anthropic, Chat, Responses:
	default:
		c.add("", "unknown API %q (want %q, %q or %q)", api, Anthropic, Chat, Responses)
		return c.errs
	}
	root, ok := c.parse(body)
	if !ok {
		return c.errs
	}
	// Every API: the body is one JSON object, and `model` is a non-empty string ("model: Field
	// required" from Anthropic, "you must provide a model parameter" from OpenAI).
	top, ok := root.(map[string]any)
	if !ok {
		c.add("", "body is %s, not a JSON object", kind(root))
		return c.errs
	}
	c.nonEmptyString(top, "", "model")
	switch api {
	case Anthropic:
		c.anthropic(top)
	case Chat:
		c.chat(top)
	case Responses:
		c.responses(top)
	}
	return c.errs
}

type checker struct {
	errs []error
}

func (c *checker) add(where, format string, args ...any) {
	c.errs = append(c.errs, &Problem{Where: where, What: fmt.Sprintf(format, args...)})
}

// parse decodes the body, reporting what a strict JSON parser rejects:
//   - bytes that are not UTF-8: JSON text is UTF-8 (RFC 8259 §8.1) and the APIs reject the body
//     ("The request body is not valid JSON"); encoding/json would silently turn them into U+FFFD;
//   - anything but exactly one JSON value: trailing garbage included;
//   - a \u escape that is half of a surrogate pair without its other half: Anthropic answers "The
//     request body is not valid JSON: no low surrogate in string" (anthropics/claude-code#60394)
//     or "invalid high surrogate in string" (anthropics/claude-code#50919). It is what cutting a
//     string between the two escapes of an emoji produces, which a compressor must never do.
func (c *checker) parse(body []byte) (any, bool) {
	if !utf8.Valid(body) {
		at := 0
		for at < len(body) {
			r, n := utf8.DecodeRune(body[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		c.add("", "body is not valid UTF-8 (first bad byte at offset %d)", at)
		return nil, false
	}
	if !json.Valid(body) {
		// Valid rejects trailing data too; Unmarshal says what and where.
		var v any
		err := json.Unmarshal(body, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		c.add("", "body is not valid JSON: %s", describeJSONError(err))
		return nil, false
	}
	if off, what := badSurrogate(body); off >= 0 {
		c.add("", "body is not valid JSON: %s at offset %d", what, off)
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		c.add("", "body is not valid JSON: %s", describeJSONError(err))
		return nil, false
	}
	return v, true
}

func describeJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (offset %d)", se, se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input" {
		return "unexpected end of input"
	}
	return err.Error()
}

// badSurrogate finds the first \u escape in a string of body (already known to be valid JSON)
// that encodes half a surrogate pair without the other half, and returns its offset, or -1.
func badSurrogate(body []byte) (int, string) {
	inString := false
	for i := 0; i < len(body); i++ {
		b := body[i]
		if !inString {
			if b == '"' {
				inString = true
			}
			continue
		}
		switch b {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(body) && body[i+1] == 'u' {
				u, ok := hex4(body, i+2)
				if !ok {
					return i, "bad \\u escape"
				}
				switch {
				case u >= 0xD800 && u <= 0xDBFF:
					if i+11 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
						if lo, ok := hex4(body, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
							i += 11
							continue
						}
					}
					return i, fmt.Sprintf("high surrogate \\u%04x without a low surrogate after it", u)
				case u >= 0xDC00 && u <= 0xDFFF:
					return i, fmt.Sprintf("low surrogate \\u%04x without a high surrogate before it", u)
				}
				i += 5
				continue
			}
			i++ // skip the escaped character
		}
	}
	return -1, ""
}

func hex4(b []byte, i int) (uint16, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint16(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// ---- helpers over decoded JSON ----

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

func index(where string, i int) string { return fmt.Sprintf("%s[%d]", where, i) }

// nonEmptyString reports unless obj[key] is a non-empty string, and returns it.
func (c *checker) nonEmptyString(obj map[string]any, where, key string) (string, bool) {
	s, ok := c.stringField(obj, where, key)
	if ok && s == "" {
		c.add(join(where, key), "is empty")
		return "", false
	}
	return s, ok
}

// stringField reports unless obj[key] is a string (empty allowed).
func (c *checker) stringField(obj map[string]any, where, key string) (string, bool) {
	v, present := obj[key]
	s, ok := v.(string)
	switch {
	case !present:
		c.add(where, "%s is missing", key)
	case !ok:
		c.add(join(where, key), "is %s, want a string", kind(v))
	default:
		return s, true
	}
	return "", false
}

// optionalString reports when obj[key] is present, not null, and not a string.
func (c *checker) optionalString(obj map[string]any, where, key string) {
	if v, ok := obj[key]; ok && v != nil {
		if _, ok := v.(string); !ok {
			c.add(join(where, key), "is %s, want a string", kind(v))
		}
	}
}

func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// typeOf returns the block's or item's "type", reporting a missing or non-string one: the APIs
// accept new types over time, but every block names its type.
func (c *checker) typeOf(obj map[string]any, where string) (string, bool) {
	v, present := obj["type"]
	if !present {
		c.add(where, "has no type")
		return "", false
	}
	t, ok := v.(string)
	if !ok || t == "" {
		c.add(join(where, "type"), "is %s, want a non-empty string", kind(v))
		return "", false
	}
	return t, true
}

// element is an object found in an array: its index, its path in the body, its members and,
// from typedObjects, its type.
type element struct {
	i     int
	where string
	typ   string
	obj   map[string]any
}

// objects yields the members of arr (the array at where) that are objects, and reports each
// other one: "is <kind>, want <want>".
func (c *checker) objects(arr []any, where, want string) iter.Seq[element] {
	return func(yield func(element) bool) {
		for i, v := range arr {
			ew := index(where, i)
			obj, ok := v.(map[string]any)
			if !ok {
				c.add(ew, "is %s, want %s", kind(v), want)
				continue
			}
			if !yield(element{i: i, where: ew, obj: obj}) {
				return
			}
		}
	}
}

// typedObjects is objects without the objects that do not name their type, which typeOf reports.
func (c *checker) typedObjects(arr []any, where, want string) iter.Seq[element] {
	return func(yield func(element) bool) {
		for e := range c.objects(arr, where, want) {
			t, ok := c.typeOf(e.obj, e.where)
			if !ok {
				continue
			}
			e.typ = t
			if !yield(e) {
				return
			}
		}
	}
}

// object returns obj[key] when it is an object, and reports "<key> is missing or not an object"
// otherwise.
func (c *checker) object(obj map[string]any, where, key string) (map[string]any, bool) {
	v, ok := obj[key].(map[string]any)
	if !ok {
		c.add(where, "%s is missing or not an object", key)
	}
	return v, ok
}

// optionalArray returns obj[key] when it is an array, and reports it when it is set, not null,
// and not an array.
func (c *checker) optionalArray(obj map[string]any, where, key string) ([]any, bool) {
	raw, present := obj[key]
	if !present || raw == nil {
		return nil, false
	}
	arr, ok := raw.([]any)
	if !ok {
		c.add(join(where, key), "is %s, want an array", kind(raw))
		return nil, false
	}
	return arr, true
}

// messages returns top's messages, reporting unless it is an array of at least one; empty says
// why an empty one is refused.
func (c *checker) messages(top map[string]any, empty string) ([]any, bool) {
	raw, present := top["messages"]
	msgs, ok := raw.([]any)
	switch {
	case !present:
		c.add("", "messages is missing")
	case !ok:
		c.add("messages", "is %s, want an array", kind(raw))
	case len(msgs) == 0:
		c.add("messages", "is empty (%s)", empty)
	default:
		return msgs, true
	}
	return nil, false
}

// notStringOrArray reports obj[key] when it is neither a string nor an array: "<key> is missing",
// or "is <kind>, want a string or an array of <of>".
func (c *checker) notStringOrArray(obj map[string]any, where, key, of string) {
	raw, present := obj[key]
	if !present {
		c.add(where, "%s is missing", key)
		return
	}
	c.add(join(where, key), "is %s, want a string or an array of %s", kind(raw), of)
}

// contentParts checks obj[key]: a string, or an array of content parts, objects naming their type
// that part checks. It reports an empty array with the message empty (not when empty is ""), and
// anything else, null and a missing key included, with notStringOrArray.
func (c *checker) contentParts(obj map[string]any, where, key, empty string, part func(element)) {
	switch v := obj[key].(type) {
	case string:
	case []any:
		if len(v) == 0 && empty != "" {
			c.add(join(where, key), "%s", empty)
		}
		for p := range c.typedObjects(v, join(where, key), "a content part object") {
			part(p)
		}
	default:
		c.notStringOrArray(obj, where, key, "content parts")
	}
}

// role returns obj's role, reporting a missing one (then it returns "" and true) and one outside
// roles (then "" and false); want lists the roles for the message.
func (c *checker) role(obj map[string]any, where string, roles map[string]bool, want string) (string, bool) {
	role, ok := c.nonEmptyString(obj, where, "role")
	if ok && !roles[role] {
		c.add(join(where, "role"), "is %q, want %s", role, want)
		return "", false
	}
	return role, true
}

// unique records where as the first member whose field is id, or reports that an earlier one
// (in seen) has it too and returns false; plural names the field in the message.
func (c *checker) unique(seen map[string]string, id, where, field, plural string) bool {
	if prev, dup := seen[id]; dup {
		c.add(join(where, field), "%q is also the %s of %s (%s must be unique)", id, field, prev, plural)
		return false
	}
	seen[id] = where
	return true
}

// toolCall is an OpenAI tool call that an output may answer: where it is, its index in input,
// and whether it has been answered.
type toolCall struct {
	where    string
	index    int
	answered bool
}

// answer marks the call id answered by an output whose id is at where, and reports an id that
// matches no call in calls (noCall says what it should have matched) and one answered twice.
func (c *checker) answer(calls map[string]*toolCall, id, where, noCall string) {
	call := calls[id]
	switch {
	case call == nil:
		c.add(where, "%q matches no %s", id, noCall)
	case call.answered:
		c.add(where, "%q is answered twice", id)
	default:
		call.answered = true
	}
}

// extraFields reports members outside allowed: the Anthropic API validates blocks it knows
// against their schema and answers "Extra inputs are not permitted" for anything else (a
// cache_control on a thinking block, a field a rewriter invented).
func (c *checker) extraFields(obj map[string]any, where, typ string, allowed ...string) {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			c.add(join(where, k), "field not allowed on a %s block (the API answers \"Extra inputs are not permitted\")", typ)
		}
	}
}

// idPattern is what Anthropic requires of tool_use ids ("tool_use.id: String should match pattern
// '^[a-zA-Z0-9_-]+$'", anomalyco/opencode#1279).
var idPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// anthropicToolName is the pattern of client tool names ("tools.0.custom.name: String should
// match pattern '^[a-zA-Z0-9_-]{1,128}$'").
var anthropicToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// openAIToolName is the pattern of OpenAI function names (1 to 64 of a-z, A-Z, 0-9, _ and -).
var openAIToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ==== Anthropic Messages ====

// anthropicBlockTypes are the content block types of the Messages API. Others are accepted as
// long as they name their type: the API adds types, and rejecting them would be wrong.
var anthropicBlockTypes = map[string]bool{
	"text": true, "image": true, "document": true, "tool_use": true, "tool_result": true,
	"thinking": true, "redacted_thinking": true, "server_tool_use": true,
	"web_search_tool_result": true, "search_result": true, "container_upload": true,
	"mcp_tool_use": true, "mcp_tool_result": true,
}

// anthropicRoles are the roles of messages[]: "system" only for a message of text.
var anthropicRoles = map[string]bool{"user": true, "assistant": true, "system": true}

type aMessage struct {
	where  string
	role   string
	blocks []element
	// text is the string content, when content is a string.
	text     string
	isString bool
	system   bool // a "system" message inside the conversation (Claude Code 2.x)
}

// cacheState follows prompt-caching breakpoints through tools, system and messages, the order in
// which the API reads them.
type cacheState struct {
	count   int
	seen5m  string // where the first 5-minute breakpoint is
	reports int
}

// anthropic checks a Messages API body.
func (c *checker) anthropic(top map[string]any) {
	// max_tokens is required and at least 1 ("max_tokens: Field required").
	switch v := top["max_tokens"].(type) {
	case nil:
		c.add("", "max_tokens is missing (the Messages API requires it)")
	case json.Number:
		if n, err := v.Int64(); err != nil || n < 1 {
			c.add("max_tokens", "is %s, want an integer >= 1", v)
		}
	default:
		c.add("max_tokens", "is %s, want an integer", kind(v))
	}

	var cache cacheState
	c.anthropicTools(top, &cache)
	c.anthropicSystem(top, &cache)

	// messages is a non-empty array.
	msgs, ok := c.messages(top, "at least one message is required")
	if !ok {
		return
	}
	parsed := make([]aMessage, 0, len(msgs))
	for e := range c.objects(msgs, "messages", "an object") {
		parsed = append(parsed, c.anthropicMessage(e.obj, e.where, e.i == len(msgs)-1, &cache))
	}
	// The first message is a user message ("messages: first message must use the "user" role").
	if len(parsed) > 0 && ((parsed[0].role != "" && parsed[0].role != "user") || parsed[0].system) {
		role := parsed[0].role
		if parsed[0].system {
			role = "system"
		}
		c.add(join(parsed[0].where, "role"), "the first message must have role user, not %q", role)
	}
	c.anthropicFinalAssistant(parsed)
	c.anthropicToolPairing(parsed)
}

func (c *checker) anthropicMessage(obj map[string]any, where string, last bool, cache *cacheState) aMessage {
	m := aMessage{where: where}
	// Roles are user and assistant; system text goes in the top-level `system`, except that
	// Claude Code 2.x also sends a "system" message of text inside the conversation (its list of
	// agent types, after the first prompt), which the API takes. Such a message is no turn of its
	// own: tool pairing looks through it.
	role, _ := c.role(obj, where, anthropicRoles, `"user", "assistant" or a text "system" message`)
	system := role == "system"
	m.role = role
	if system {
		m.role, m.system = "", true
		if _, isString := obj["content"].(string); !isString {
			if blocks, ok := obj["content"].([]any); ok {
				for j, b := range blocks {
					if bo, ok := b.(map[string]any); !ok || bo["type"] != "text" {
						c.add(index(join(where, "content"), j), "a system message holds text blocks only")
					}
				}
			}
		}
	}
	// Content is a non-empty string or a non-empty array of blocks: "all messages must have
	// non-empty content except for the optional final assistant message" (microsoft/autogen#6083).
	emptyOK := last && role == "assistant"
	switch v := obj["content"].(type) {
	case string:
		m.text, m.isString = v, true
		// A string is one text block to the API, which matters for the order in a turn.
		m.blocks = []element{{where: join(where, "content"), typ: "text"}}
		switch {
		case v == "" && !emptyOK:
			c.add(join(where, "content"), "is empty (all messages must have non-empty content except for the optional final assistant message)")
		case v != "" && blank(v):
			c.add(join(where, "content"), "is only white space (text content blocks must contain non-whitespace text)")
		}
	case []any:
		if len(v) == 0 && !emptyOK {
			c.add(join(where, "content"), "is an empty array (all messages must have non-empty content except for the optional final assistant message)")
		}
		for b := range c.typedObjects(v, join(where, "content"), "a content block object") {
			m.blocks = append(m.blocks, b)
			c.anthropicBlock(b.obj, b.where, b.typ, role, cache)
		}
	default:
		c.notStringOrArray(obj, where, "content", "content blocks")
	}
	return m
}

// anthropicBlock checks one content block of a message whose role is role ("" when unknown).
func (c *checker) anthropicBlock(b map[string]any, where, typ, role string, cache *cacheState) {
	c.cacheControl(b, where, cache)
	switch typ {
	case "text":
		c.extraFields(b, where, typ, "type", "text", "cache_control", "citations")
		c.textField(b, where)
	case "image":
		c.extraFields(b, where, typ, "type", "source", "cache_control")
		c.source(b, where)
	case "document":
		c.extraFields(b, where, typ, "type", "source", "title", "context", "citations", "cache_control")
		c.source(b, where)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		// tool_use blocks are the model's: they belong in assistant messages, carry an id
		// matching ^[a-zA-Z0-9_-]+$, a name, and an input object. Unique ids are checked with
		// the pairing.
		if typ == "tool_use" {
			c.extraFields(b, where, typ, "type", "id", "name", "input", "cache_control", "caller")
		}
		if role == "user" {
			c.add(where, "%s block in a user message (tool calls are the assistant's)", typ)
		}
		if id, ok := c.nonEmptyString(b, where, "id"); ok && !idPattern.MatchString(id) {
			c.add(join(where, "id"), "%q does not match ^[a-zA-Z0-9_-]+$", id)
		}
		c.nonEmptyString(b, where, "name")
		if in, present := b["input"]; !present {
			c.add(where, "input is missing")
		} else if _, ok := in.(map[string]any); !ok {
			c.add(join(where, "input"), "is %s, want an object", kind(in))
		}
	case "tool_result":
		// tool_result blocks answer a tool_use: they belong in user messages, name the
		// tool_use_id, and hold a string or an array of text, image, document or search_result
		// blocks (each checked like a message block: no empty text).
		c.extraFields(b, where, typ, "type", "tool_use_id", "content", "is_error", "cache_control")
		if role == "assistant" {
			c.add(where, "tool_result block in an assistant message (tool results go in the next user message)")
		}
		c.nonEmptyString(b, where, "tool_use_id")
		if v, ok := b["is_error"]; ok {
			if _, isBool := v.(bool); !isBool {
				c.add(join(where, "is_error"), "is %s, want a boolean", kind(v))
			}
		}
		switch content := b["content"].(type) {
		case nil, string:
		case []any:
			for e := range c.typedObjects(content, join(where, "content"), "a content block object") {
				switch e.typ {
				case "text", "image", "document", "search_result":
					c.anthropicBlock(e.obj, e.where, e.typ, "", cache)
				default:
					c.add(join(e.where, "type"), "is %q; a tool_result holds text, image, document or search_result blocks", e.typ)
				}
			}
		default:
			c.notStringOrArray(b, where, "content", "blocks")
		}
	case "thinking", "redacted_thinking":
		// Thinking blocks are the model's: only in assistant messages, each with its signature
		// (thinking) or its encrypted data (redacted_thinking), and no cache_control.
		if typ == "thinking" {
			c.extraFields(b, where, typ, "type", "thinking", "signature")
			c.stringField(b, where, "thinking")
			c.nonEmptyString(b, where, "signature")
		} else {
			c.extraFields(b, where, typ, "type", "data")
			c.nonEmptyString(b, where, "data")
		}
		if role == "user" {
			c.add(where, "%s block in a user message (thinking blocks are the assistant's)", typ)
		}
	case "search_result":
		c.nonEmptyString(b, where, "source")
		c.stringField(b, where, "title")
		if arr, ok := b["content"].([]any); !ok {
			c.add(where, "content is missing or not an array of text blocks")
		} else {
			for e := range c.typedObjects(arr, join(where, "content"), "a text block") {
				c.anthropicBlock(e.obj, e.where, e.typ, "", cache)
			}
		}
	}
}

// textField checks a text block's text: a string, not empty ("messages: text content blocks must
// be non-empty", anthropics/claude-code#59812), not only white space ("text content blocks must
// contain non-whitespace text", anthropics/claude-code#23440).
func (c *checker) textField(b map[string]any, where string) {
	s, ok := c.stringField(b, where, "text")
	switch {
	case !ok:
	case s == "":
		c.add(join(where, "text"), "is empty (text content blocks must be non-empty)")
	case blank(s):
		c.add(join(where, "text"), "is only white space (text content blocks must contain non-whitespace text)")
	}
}

// source checks the source object of an image or document block.
func (c *checker) source(b map[string]any, where string) {
	if src, ok := c.object(b, where, "source"); ok {
		c.typeOf(src, join(where, "source"))
	}
}

// cacheControl checks a cache_control member when there is one: {"type":"ephemeral"} with an
// optional ttl of "5m" or "1h". It counts breakpoints: "A maximum of 4 blocks with cache_control
// may be provided. Found 5." (tghamm/Anthropic.SDK#50), over tools, system blocks and message
// blocks (tool_result contents included). And it checks their order: read in the order tools,
// system, messages, a breakpoint with ttl "1h" must not come after one with ttl "5m" (the
// default), which the API rejects (cnighswonger/claude-code-cache-fix v2.0.5; the docs' "1-hour
// cache entries must appear before 5-minute entries").
func (c *checker) cacheControl(obj map[string]any, where string, cache *cacheState) {
	raw, present := obj["cache_control"]
	if !present || raw == nil {
		return
	}
	where = join(where, "cache_control")
	cc, ok := raw.(map[string]any)
	if !ok {
		c.add(where, "is %s, want an object", kind(raw))
		return
	}
	if t, _ := cc["type"].(string); t != "ephemeral" {
		c.add(join(where, "type"), "is %v, want \"ephemeral\"", cc["type"])
	}
	ttl := "5m"
	if v, ok := cc["ttl"]; ok {
		s, _ := v.(string)
		if s != "5m" && s != "1h" {
			c.add(join(where, "ttl"), "is %v, want \"5m\" or \"1h\"", v)
		} else {
			ttl = s
		}
	}
	for k := range cc {
		if k != "type" && k != "ttl" {
			c.add(join(where, k), "field not allowed in cache_control")
		}
	}
	cache.count++
	if cache.count == 5 {
		c.add(where, "is the 5th cache_control breakpoint (a maximum of 4 blocks with cache_control may be provided)")
	}
	switch {
	case ttl == "5m" && cache.seen5m == "":
		cache.seen5m = where
	case ttl == "1h" && cache.seen5m != "":
		c.add(where, "has ttl 1h but comes after the 5m breakpoint at %s (a ttl=1h cache_control block must not come after a ttl=5m one; order is tools, system, messages)", cache.seen5m)
	}
}

// anthropicTools checks `tools`: absent, or an array of objects each with a name, unique. A client
// tool (no type, or type "custom") has an input_schema object whose type is "object"; a typed
// server or built-in tool ("web_search_20250305", "bash_20250124", ...) needs only its type.
func (c *checker) anthropicTools(top map[string]any, cache *cacheState) {
	tools, _ := c.optionalArray(top, "", "tools")
	names := map[string]string{}
	for e := range c.objects(tools, "tools", "an object") {
		where, obj := e.where, e.obj
		c.cacheControl(obj, where, cache)
		name, ok := c.nonEmptyString(obj, where, "name")
		if ok && !c.unique(names, name, where, "name", "tool names") {
			names[name] = where // a repeat is reported against the one just before it
		}
		typ, hasType := obj["type"]
		if ts, _ := typ.(string); hasType && typ != nil && ts != "custom" {
			if ts == "" {
				c.add(join(where, "type"), "is %s, want a non-empty string", kind(typ))
			}
			continue
		}
		if ok && !anthropicToolName.MatchString(name) {
			c.add(join(where, "name"), "%q does not match ^[a-zA-Z0-9_-]{1,128}$", name)
		}
		schema, ok := obj["input_schema"].(map[string]any)
		if !ok {
			c.add(where, "input_schema is missing or not an object (client tools need one)")
			continue
		}
		if st, _ := schema["type"].(string); st != "object" {
			c.add(join(where, "input_schema.type"), "is %v, want \"object\"", schema["type"])
		}
	}
}

// anthropicSystem checks `system`: absent, a string, or an array of text blocks.
func (c *checker) anthropicSystem(top map[string]any, cache *cacheState) {
	raw, present := top["system"]
	if !present || raw == nil {
		return
	}
	switch v := raw.(type) {
	case string:
	case []any:
		for e := range c.objects(v, "system", "a text block") {
			if t, ok := c.typeOf(e.obj, e.where); ok && t != "text" {
				c.add(join(e.where, "type"), "is %q; system blocks are text blocks", t)
				continue
			}
			c.extraFields(e.obj, e.where, "text", "type", "text", "cache_control", "citations")
			c.textField(e.obj, e.where)
			c.cacheControl(e.obj, e.where, cache)
		}
	default:
		c.notStringOrArray(top, "", "system", "text blocks")
	}
}

// anthropicFinalAssistant: a final assistant message (a prefill) must not end with white space
// ("final assistant content cannot end with trailing whitespace").
func (c *checker) anthropicFinalAssistant(msgs []aMessage) {
	if len(msgs) == 0 {
		return
	}
	m := msgs[len(msgs)-1]
	if m.role != "assistant" {
		return
	}
	if m.isString {
		if m.text != "" && strings.TrimRightFunc(m.text, unicode.IsSpace) != m.text {
			c.add(join(m.where, "content"), "final assistant content ends with white space")
		}
		return
	}
	if len(m.blocks) == 0 {
		return
	}
	b := m.blocks[len(m.blocks)-1]
	if s, ok := b.obj["text"].(string); ok && b.typ == "text" && s != "" && strings.TrimRightFunc(s, unicode.IsSpace) != s {
		c.add(join(b.where, "text"), "final assistant content ends with white space")
	}
}

// anthropicToolPairing checks how tool_use and tool_result blocks pair up. The API merges
// consecutive messages of the same role into one turn, so the rules are about turns:
//   - tool_use ids are unique across the request ("messages.43.content.2: tool_use ids must be
//     unique", anthropics/claude-code#28515);
//   - every tool_result answers a tool_use of the assistant turn just before it ("unexpected
//     tool_use_id found in tool_result blocks ... Each tool_result block must have a
//     corresponding tool_use block in the previous message", tghamm/Anthropic.SDK#184), once;
//   - in a user turn every tool_result comes before any other block ("Did not find 1
//     tool_result block(s) at the beginning of this message",
//     anthropics/anthropic-sdk-typescript#653);
//   - every tool_use of an assistant turn followed by a user turn has its tool_result in that
//     turn ("tool_use ids were found without tool_result blocks immediately after",
//     anthropics/claude-code#2697); only the last turn of the request may leave tool_use blocks
//     unanswered.
func (c *checker) anthropicToolPairing(msgs []aMessage) {
	type turn struct {
		role   string
		blocks []element
	}
	var turns []turn
	for _, m := range msgs {
		if m.role == "" {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].role == m.role {
			turns[n-1].blocks = append(turns[n-1].blocks, m.blocks...)
			continue
		}
		turns = append(turns, turn{role: m.role, blocks: m.blocks})
	}
	ids := map[string]string{}
	for _, t := range turns {
		for _, b := range t.blocks {
			switch b.typ {
			case "tool_use", "server_tool_use", "mcp_tool_use":
				if id, _ := b.obj["id"].(string); id != "" {
					c.unique(ids, id, b.where, "id", "tool_use ids")
				}
			}
		}
	}
	for i, t := range turns {
		if t.role != "user" {
			continue
		}
		// The tool_use blocks this turn must answer, in order.
		var want []element
		if i > 0 {
			for _, b := range turns[i-1].blocks {
				if b.typ == "tool_use" {
					want = append(want, b)
				}
			}
		}
		wanted := map[string]bool{}
		for _, b := range want {
			if id, ok := b.obj["id"].(string); ok {
				wanted[id] = true
			}
		}
		answered := map[string]string{}
		other := ""
		for _, b := range t.blocks {
			if b.typ != "tool_result" {
				if other == "" {
					other = b.where
				}
				continue
			}
			if other != "" {
				c.add(b.where, "tool_result comes after %s (in a user turn every tool_result must come before any other block)", other)
			}
			id, ok := b.obj["tool_use_id"].(string)
			if !ok || id == "" {
				continue
			}
			if !wanted[id] {
				if i == 0 {
					c.add(join(b.where, "tool_use_id"), "%q answers no tool_use: there is no assistant turn before it", id)
				} else {
					c.add(join(b.where, "tool_use_id"), "%q matches no tool_use of the assistant turn just before (each tool_result must answer a tool_use of the previous message)", id)
				}
				continue
			}
			if prev, dup := answered[id]; dup {
				c.add(join(b.where, "tool_use_id"), "%q is answered twice (also at %s)", id, prev)
				continue
			}
			answered[id] = b.where
		}
		for _, b := range want {
			id, _ := b.obj["id"].(string)
			if id != "" && answered[id] == "" {
				c.add(join(b.where, "id"), "tool_use %q has no tool_result in the next user turn (tool_use ids were found without tool_result blocks immediately after)", id)
			}
		}
	}
}

// ==== OpenAI Chat Completions ====

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// chat checks a Chat Completions body.
func (c *checker) chat(top map[string]any) {
	c.chatTools(top)
	msgs, ok := c.messages(top, "expected an array with minimum length 1")
	if !ok {
		return
	}

	ids := map[string]string{} // tool_call id → where
	// The assistant message whose tool calls the following tool messages answer.
	var (
		open     bool
		owner    string
		ownerIdx int
		calls    map[string]*toolCall
		order    []string
	)
	closeCalls := func(reason string) {
		if !open {
			return
		}
		for _, id := range order {
			if !calls[id].answered {
				c.add(owner, "tool_call %q has no tool message answering it %s (an assistant message with tool_calls must be followed by tool messages responding to each tool_call_id)", id, reason)
			}
		}
		open = false
	}
	for e := range c.objects(msgs, "messages", "an object") {
		where, obj := e.where, e.obj
		role, known := c.role(obj, where, chatRoles, "system, developer, user, assistant or tool")
		if !known {
			continue
		}
		c.optionalString(obj, where, "name")
		switch role {
		case "system", "developer":
			c.chatContent(obj, where, role, false, "text")
		case "user":
			c.chatContent(obj, where, role, false, "text", "image_url", "input_audio", "file")
		case "assistant":
			tc, hasCalls := c.chatToolCalls(obj, where, ids)
			c.chatContent(obj, where, role, hasCalls || obj["function_call"] != nil || obj["audio"] != nil, "text", "refusal")
			closeCalls("before " + where)
			if hasCalls {
				open, owner, ownerIdx = true, where, e.i
				calls, order = map[string]*toolCall{}, tc
				for _, id := range tc {
					calls[id] = &toolCall{}
				}
			}
			continue
		case "tool":
			c.chatContent(obj, where, role, false, "text")
			id, ok := c.nonEmptyString(obj, where, "tool_call_id")
			switch {
			case !open:
				c.add(where, "tool message follows no assistant message with tool_calls (messages with role 'tool' must be a response to a preceding message with 'tool_calls', with only tool messages in between)")
			case ok:
				c.answer(calls, id, join(where, "tool_call_id"), "tool call of "+owner)
			}
			continue
		case "function":
			c.nonEmptyString(obj, where, "name")
		}
		closeCalls("before " + where)
	}
	// Only the last message may be an assistant message with tool calls not answered yet.
	if open && ownerIdx != len(msgs)-1 {
		closeCalls("before the end of messages")
	}
}

// chatContent checks a message's content: a string, or a non-empty array of parts whose types
// are in parts ("Invalid 'messages[0].content': empty array. Expected an array with minimum
// length 1"). Only an assistant message with tool calls (nullOK) may have none.
func (c *checker) chatContent(obj map[string]any, where, role string, nullOK bool, parts ...string) {
	if raw, present := obj["content"]; raw == nil {
		switch {
		case nullOK:
		case present:
			c.add(join(where, "content"), "is null (only an assistant message with tool_calls may have no content)")
		default:
			c.add(where, "content is missing (only an assistant message with tool_calls may have none)")
		}
		return
	}
	c.contentParts(obj, where, "content", "is an empty array (expected an array with minimum length 1)", func(p element) {
		c.chatPart(p.obj, p.where, p.typ, role, parts)
	})
}

// chatPart checks a content part of type t of a message whose role allows the part types allowed.
func (c *checker) chatPart(po map[string]any, where, t, role string, allowed []string) {
	if !slices.Contains(allowed, t) {
		c.add(join(where, "type"), "is %q, not a content part of a %s message (want one of %s)", t, role, strings.Join(allowed, ", "))
		return
	}
	switch t {
	case "text":
		c.stringField(po, where, "text")
	case "refusal":
		c.stringField(po, where, "refusal")
	case "image_url":
		if iu, ok := c.object(po, where, "image_url"); ok {
			c.nonEmptyString(iu, join(where, "image_url"), "url")
		}
	case "input_audio":
		if ia, ok := c.object(po, where, "input_audio"); ok {
			c.nonEmptyString(ia, join(where, "input_audio"), "data")
			c.nonEmptyString(ia, join(where, "input_audio"), "format")
		}
	case "file":
		c.object(po, where, "file")
	}
}

// chatToolCalls checks an assistant message's tool_calls: when present, a non-empty array of
// {id, type "function", function {name, arguments (a string)}} (or a custom tool call), ids unique
// across the request. It returns the ids, and whether the message has tool calls.
func (c *checker) chatToolCalls(obj map[string]any, where string, ids map[string]string) ([]string, bool) {
	arr, ok := c.optionalArray(obj, where, "tool_calls")
	if !ok {
		return nil, false
	}
	where = join(where, "tool_calls")
	if len(arr) == 0 {
		c.add(where, "is an empty array (expected an array with minimum length 1; omit it instead)")
		return nil, false
	}
	var out []string
	for e := range c.objects(arr, where, "an object") {
		tw, to := e.where, e.obj
		if id, ok := c.nonEmptyString(to, tw, "id"); ok && c.unique(ids, id, tw, "id", "tool call ids") {
			out = append(out, id)
		}
		typ, _ := c.nonEmptyString(to, tw, "type")
		switch typ {
		case "function":
			if fn, ok := c.object(to, tw, "function"); ok {
				c.nonEmptyString(fn, join(tw, "function"), "name")
				c.stringField(fn, join(tw, "function"), "arguments")
			}
		case "custom":
			if cu, ok := c.object(to, tw, "custom"); ok {
				c.nonEmptyString(cu, join(tw, "custom"), "name")
				c.stringField(cu, join(tw, "custom"), "input")
			}
		case "":
		default:
			c.add(join(tw, "type"), "is %q, want \"function\"", typ)
		}
	}
	return out, true
}

// chatTools checks `tools`: absent, or an array of {type "function", function {name, parameters}}
// (or {type "custom", custom {name}}), names matching ^[a-zA-Z0-9_-]{1,64}$.
func (c *checker) chatTools(top map[string]any) {
	tools, _ := c.optionalArray(top, "", "tools")
	for e := range c.objects(tools, "tools", "an object") {
		typ, _ := c.nonEmptyString(e.obj, e.where, "type")
		switch typ {
		case "function":
			if fn, ok := c.object(e.obj, e.where, "function"); ok {
				c.openAIFunction(fn, join(e.where, "function"))
			}
		case "custom":
			if cu, ok := c.object(e.obj, e.where, "custom"); ok {
				c.nonEmptyString(cu, join(e.where, "custom"), "name")
			}
		}
	}
}

// openAIFunction checks the definition of a function tool at where (Chat's tools[i].function,
// a Responses tool itself): a name matching ^[a-zA-Z0-9_-]{1,64}$, and parameters a JSON Schema
// object when set.
func (c *checker) openAIFunction(fn map[string]any, where string) {
	if name, ok := c.nonEmptyString(fn, where, "name"); ok && !openAIToolName.MatchString(name) {
		c.add(join(where, "name"), "%q does not match ^[a-zA-Z0-9_-]{1,64}$", name)
	}
	if p, ok := fn["parameters"]; ok && p != nil {
		if _, isObj := p.(map[string]any); !isObj {
			c.add(join(where, "parameters"), "is %s, want a JSON Schema object", kind(p))
		}
	}
}

// ==== OpenAI Responses ====

// responsesCallKinds maps each call item type to the output item type that answers it.
var responsesCallKinds = map[string]string{
	"function_call":    "function_call_output",
	"custom_tool_call": "custom_tool_call_output",
}

// responsesRoles are the roles of message items.
var responsesRoles = map[string]bool{"user": true, "assistant": true, "system": true, "developer": true}

// responsesInputParts are the content parts of user, system and developer messages and of tool
// outputs.
var responsesInputParts = []string{"input_text", "input_image", "input_file"}

// responses checks a Responses API body.
func (c *checker) responses(top map[string]any) {
	c.optionalString(top, "", "instructions")
	c.responsesTools(top)
	raw, present := top["input"]
	switch v := raw.(type) {
	case string:
		return
	case []any:
		c.responsesInput(v)
	case nil:
		// input may be left out only when the conversation lives on the server.
		if !present {
			for _, k := range []string{"previous_response_id", "conversation", "prompt"} {
				if top[k] != nil {
					return
				}
			}
			c.add("", "input is missing (and neither previous_response_id, conversation nor prompt is set)")
			return
		}
		c.add("input", "is null, want a string or an array of items")
	default:
		c.notStringOrArray(top, "", "input", "items")
	}
}

// responsesInput checks the items of input:
//   - every item names its type; a message may leave it out ({"role", "content"});
//   - messages have role user, assistant, system or developer and content a string or an array
//     of parts: input_text, input_image, input_file for user, system and developer, output_text
//     and refusal for assistant ("Invalid value: 'input_text'. Supported values are:
//     'output_text' and 'refusal'.");
//   - function_call has call_id, name and arguments (a string); custom_tool_call has call_id,
//     name and input (a string); call_ids are unique per kind;
//   - function_call_output and custom_tool_call_output answer a call of their kind earlier in
//     input ("No tool call found for function call output with call_id ...",
//     continuedev/continue#10092), once, with output a string or an array of parts;
//   - every call is answered later in input ("No tool output found for function call ...",
//     openai/openai-agents-python#673), unless it is among the trailing items: after the last
//     input-side item (a user/system/developer message or a tool output);
//   - reasoning has a summary array (encrypted_content and content optional);
//   - local_shell_call has call_id and action; local_shell_call_output has output (a string);
//   - other item types are accepted when they name their type.
func (c *checker) responsesInput(items []any) {
	calls := map[string]map[string]*toolCall{}
	lastInput := -1
	for e := range c.objects(items, "input", "an item object") {
		j, where, obj := e.i, e.where, e.obj
		var typ string
		if _, has := obj["type"]; !has {
			if _, isMsg := obj["role"]; !isMsg {
				c.add(where, "has no type (only a message may leave it out)")
				continue
			}
			typ = "message"
		} else if t, ok := c.typeOf(obj, where); ok {
			typ = t
		} else {
			continue
		}
		switch typ {
		case "message":
			if role := c.responsesMessage(obj, where); role != "assistant" {
				lastInput = j
			}
		case "function_call", "custom_tool_call":
			id, ok := c.nonEmptyString(obj, where, "call_id")
			c.nonEmptyString(obj, where, "name")
			if typ == "function_call" {
				c.stringField(obj, where, "arguments")
			} else {
				c.stringField(obj, where, "input")
			}
			if !ok {
				continue
			}
			if calls[typ] == nil {
				calls[typ] = map[string]*toolCall{}
			}
			if prev, dup := calls[typ][id]; dup {
				c.add(join(where, "call_id"), "%q is also the call_id of %s (call_ids must be unique)", id, prev.where)
				continue
			}
			calls[typ][id] = &toolCall{where: where, index: j}
		case "function_call_output", "custom_tool_call_output":
			lastInput = j
			callType := strings.TrimSuffix(typ, "_output")
			c.responsesOutput(obj, where)
			if id, ok := c.nonEmptyString(obj, where, "call_id"); ok {
				c.answer(calls[callType], id, join(where, "call_id"), callType+" earlier in input (no tool call found for this output)")
			}
		case "reasoning":
			if s, ok := obj["summary"].([]any); !ok {
				c.add(where, "summary is missing or not an array (reasoning items carry one, possibly empty)")
			} else {
				for p := range c.objects(s, join(where, "summary"), "a summary_text object") {
					c.typeOf(p.obj, p.where)
					c.stringField(p.obj, p.where, "text")
				}
			}
			c.optionalString(obj, where, "encrypted_content")
			c.optionalArray(obj, where, "content")
		case "local_shell_call":
			c.nonEmptyString(obj, where, "call_id")
			c.object(obj, where, "action")
		case "local_shell_call_output":
			lastInput = j
			c.stringField(obj, where, "output")
		default:
			if strings.HasSuffix(typ, "_output") {
				lastInput = j
			}
		}
	}
	for typ, byID := range calls {
		for id, call := range byID {
			if !call.answered && call.index < lastInput {
				c.add(join(call.where, "call_id"), "%s %q has no %s later in input (no tool output found for this call)", typ, id, responsesCallKinds[typ])
			}
		}
	}
}

// responsesMessage checks a message item and returns its role.
func (c *checker) responsesMessage(obj map[string]any, where string) string {
	role, known := c.role(obj, where, responsesRoles, "user, assistant, system or developer")
	if !known {
		return ""
	}
	parts := responsesInputParts
	if role == "assistant" {
		parts = []string{"output_text", "refusal"}
	}
	c.contentParts(obj, where, "content", "is an empty array", func(p element) {
		c.responsesPart(p.obj, p.where, p.typ, role, parts)
	})
	return role
}

// responsesPart checks a content part of type t of a message whose role allows the part types
// allowed.
func (c *checker) responsesPart(po map[string]any, where, t, role string, allowed []string) {
	if !slices.Contains(allowed, t) {
		c.add(join(where, "type"), "is %q, not a content part of a %s message (supported: %s)", t, role, strings.Join(allowed, ", "))
		return
	}
	switch t {
	case "input_text", "output_text":
		c.stringField(po, where, "text")
	case "refusal":
		c.stringField(po, where, "refusal")
	case "input_image":
		if po["image_url"] == nil && po["file_id"] == nil {
			c.add(where, "input_image has neither image_url nor file_id")
		}
	case "input_file":
		if po["file_id"] == nil && po["file_data"] == nil && po["file_url"] == nil {
			c.add(where, "input_file has none of file_id, file_data, file_url")
		}
	}
}

// responsesOutput checks a tool output's output: a string or an array of input parts.
func (c *checker) responsesOutput(obj map[string]any, where string) {
	c.contentParts(obj, where, "output", "", func(p element) {
		c.responsesPart(p.obj, p.where, p.typ, "tool output", responsesInputParts)
	})
}

// responsesTools checks `tools`: absent, or an array of objects naming their type; function tools
// have a name matching ^[a-zA-Z0-9_-]{1,64}$ and parameters a JSON Schema object when set; custom
// tools have a name.
func (c *checker) responsesTools(top map[string]any) {
	tools, _ := c.optionalArray(top, "", "tools")
	for e := range c.typedObjects(tools, "tools", "an object") {
		switch e.typ {
		case "function":
			c.openAIFunction(e.obj, e.where)
		case "custom":
			c.nonEmptyString(e.obj, e.where, "name")
		}
	}
}
