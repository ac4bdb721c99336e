package validate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/compress/compresstest"
	"github.com/observerhq/observer/pkg/compress/validate"
)

// anth wraps messages (the inside of the array) in a minimal Messages API body; extra is more
// top-level members, written with a trailing comma.
func anth(extra, msgs string) string {
	return `{"model":"claude-sonnet-4-5","max_tokens":1024,` + extra + `"messages":[` + msgs + `]}`
}

func chat(extra, msgs string) string {
	return `{"model":"gpt-5",` + extra + `"messages":[` + msgs + `]}`
}

func resp(extra, items string) string {
	return `{"model":"gpt-5",` + extra + `"input":[` + items + `]}`
}

const (
	user      = `{"role":"user","content":"hi"}`
	assistant = `{"role":"assistant","content":"hello"}`
	useA      = `{"role":"assistant","content":[{"type":"text","text":"reading"},{"type":"tool_use","id":"toolu_A","name":"Read","input":{"file_path":"/a"}}]}`
	resultA   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"file a"}]}`
	callA     = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_A","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"/a\"}"}}]}`
	toolA     = `{"role":"tool","tool_call_id":"call_A","content":"file a"}`
	rUser     = `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	rCallA    = `{"type":"function_call","call_id":"call_A","name":"shell","arguments":"{\"cmd\":\"ls\"}"}`
	rOutA     = `{"type":"function_call_output","call_id":"call_A","output":"a.txt"}`
	rAnswer   = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`
)

// cacheBlock is a user text block with a breakpoint of the given ttl ("" for the default).
func cacheBlock(ttl string) string {
	cc := `{"type":"ephemeral"}`
	if ttl != "" {
		cc = `{"type":"ephemeral","ttl":"` + ttl + `"}`
	}
	return `{"type":"text","text":"x","cache_control":` + cc + `}`
}

func TestBody_Rules(t *testing.T) {
	cases := []struct {
		name string
		api  string
		body string
		want string // a substring of one reported problem; "" when the body is valid
	}{
		// Every API: JSON, an object, a model.
		{"JSON/valid", validate.Anthropic, anth("", user), ""},
		{"JSON/syntax", validate.Anthropic, `{"model":"m","max_tokens":1,"messages":[`, "not valid JSON"},
		{"JSON/trailing garbage", validate.Anthropic, anth("", user) + "x", "not valid JSON"},
		{"JSON/two values", validate.Chat, chat("", user) + " {}", "not valid JSON"},
		{"JSON/trailing white space", validate.Chat, chat("", user) + " \n", ""},
		{"JSON/invalid UTF-8", validate.Chat, chat("", `{"role":"user","content":"caf`+"\xe9"+`"}`), "not valid UTF-8"},
		{"JSON/surrogate pair", validate.Chat, chat("", `{"role":"user","content":"\ud83d\ude00"}`), ""},
		{"JSON/lone high surrogate", validate.Anthropic, anth("", `{"role":"user","content":"cut \ud83d here"}`), "high surrogate"},
		{"JSON/high surrogate at end of string", validate.Anthropic, anth("", `{"role":"user","content":"cut \ud83d"}`), "high surrogate"},
		{"JSON/lone low surrogate", validate.Responses, resp("", `{"role":"user","content":"\ude00"}`), "low surrogate"},
		{"JSON/escaped backslash before u", validate.Chat, chat("", `{"role":"user","content":"\\ud83d"}`), ""},
		{"top/not an object", validate.Chat, `[1]`, "not a JSON object"},
		{"top/no model", validate.Chat, `{"messages":[` + user + `]}`, "model is missing"},
		{"top/empty model", validate.Responses, `{"model":"","input":"hi"}`, "model: is empty"},
		{"top/unknown API", "gemini", `{}`, "unknown API"},

		// Anthropic: max_tokens, messages, roles, content.
		{"A/max_tokens missing", validate.Anthropic, `{"model":"m","messages":[` + user + `]}`, "max_tokens is missing"},
		{"A/max_tokens zero", validate.Anthropic, `{"model":"m","max_tokens":0,"messages":[` + user + `]}`, "max_tokens: is 0"},
		{"A/messages missing", validate.Anthropic, `{"model":"m","max_tokens":1}`, "messages is missing"},
		{"A/messages empty", validate.Anthropic, anth("", ""), "messages: is empty"},
		{"A/role system first", validate.Anthropic, anth("", `{"role":"system","content":"be brief"},`+user), `messages[0].role: the first message must have role user, not "system"`},
		{"A/system message inside, as Claude Code 2.x sends", validate.Anthropic, anth("", user+`,{"role":"system","content":"Available agent types"},`+
			`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`), ""},
		{"A/role tool", validate.Anthropic, anth("", user+`,{"role":"tool","content":"x"}`), `messages[1].role: is "tool"`},
		{"A/system message with an image", validate.Anthropic, anth("", user+`,{"role":"system","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}`), `messages[1].content[0]: a system message holds text blocks only`},
		{"A/first message assistant", validate.Anthropic, anth("", assistant+","+user), "first message must have role user"},
		{"A/alternating", validate.Anthropic, anth("", user+","+assistant+","+user), ""},
		{"A/empty string content", validate.Anthropic, anth("", `{"role":"user","content":""}`), "messages[0].content: is empty"},
		{"A/empty array content", validate.Anthropic, anth("", `{"role":"user","content":[]}`), "empty array"},
		{"A/empty final assistant", validate.Anthropic, anth("", user+`,{"role":"assistant","content":""}`), ""},
		{"A/empty assistant not final", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[]},`+user), "messages[1].content: is an empty array"},
		{"A/final assistant trailing space", validate.Anthropic, anth("", user+`,{"role":"assistant","content":"Sure, "}`), "ends with white space"},
		{"A/content a number", validate.Anthropic, anth("", `{"role":"user","content":3}`), "want a string or an array"},

		// Anthropic: blocks.
		{"A/block without type", validate.Anthropic, anth("", `{"role":"user","content":[{"text":"x"}]}`), "messages[0].content[0]: has no type"},
		{"A/unknown block type", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"future_block","x":1}]}`), ""},
		{"A/text empty", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"text","text":""}]}`), "text content blocks must be non-empty"},
		{"A/text white space", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"text","text":" \n"}]}`), "non-whitespace"},
		{"A/string content white space", validate.Anthropic, anth("", `{"role":"user","content":"  "}`), "only white space"},
		{"A/extra field", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"text","text":"x","compressed":true}]}`), "content[0].compressed: field not allowed"},
		{"A/image", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}`), ""},
		{"A/image without source", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"image"}]}`), "source is missing"},

		// Anthropic: tool_use.
		{"A/tool_use", validate.Anthropic, anth("", user+","+useA+","+resultA), ""},
		{"A/tool_use bad id", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"Read","input":{}}]}`), "does not match"},
		{"A/tool_use no name", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"tool_use","id":"t1","input":{}}]}`), "name is missing"},
		{"A/tool_use input string", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":"{}"}]}`), "input: is a string"},
		{"A/tool_use in user", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}`), "tool_use block in a user message"},
		{"A/tool_use ids unique", validate.Anthropic, anth("", user+","+useA+","+resultA+","+useA+","+resultA), "tool_use ids must be unique"},

		// Anthropic: tool_result.
		{"A/tool_result unknown id", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"a"},{"type":"tool_result","tool_use_id":"toolu_B","content":"b"}]}`), `"toolu_B" matches no tool_use`},
		{"A/tool_result first turn", validate.Anthropic, anth("", resultA), "no assistant turn before it"},
		{"A/tool_result twice", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A"},{"type":"tool_result","tool_use_id":"toolu_A"}]}`), "answered twice"},
		{"A/tool_result in assistant", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"x","content":"a"}]}`), "tool_result block in an assistant message"},
		{"A/tool_result array content", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}],"is_error":false}]}`), ""},
		{"A/tool_result tool_use inside", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"tool_use","id":"x","name":"y","input":{}}]}]}`), "a tool_result holds text, image, document or search_result"},
		{"A/tool_result empty inner text", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":""}]}]}`), "content[0].content[0].text: is empty"},
		{"A/tool_result is_error string", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","is_error":"yes"}]}`), "is_error: is a string"},
		{"A/tool_result empty string content", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":""}]}`), ""},

		// Anthropic: order and pairing, by turn.
		{"A/tool_result after text", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"text","text":"also"},{"type":"tool_result","tool_use_id":"toolu_A","content":"a"}]}`), "tool_result comes after messages[2].content[0]"},
		{"A/text after tool_result", validate.Anthropic, anth("", user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"a"},{"type":"text","text":"also"}]}`), ""},
		{"A/tool_result after text across merged messages", validate.Anthropic, anth("", user+","+useA+","+user+","+resultA), "tool_result comes after messages[2]"},
		{"A/tool_use answered across merged assistant messages", validate.Anthropic, anth("", user+","+useA+","+assistant+","+resultA), ""},
		{"A/tool_use unanswered", validate.Anthropic, anth("", user+","+useA+","+user), `tool_use "toolu_A" has no tool_result`},
		{"A/tool_use unanswered in final turn", validate.Anthropic, anth("", user+","+useA), ""},

		// Anthropic: thinking.
		{"A/thinking", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"ok"}]},`+user), ""},
		{"A/thinking without signature", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"ok"}]},`+user), "signature is missing"},
		{"A/thinking in user", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"thinking","thinking":"hmm","signature":"s"}]}`), "thinking block in a user message"},
		{"A/redacted thinking without data", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"redacted_thinking"},{"type":"text","text":"ok"}]},`+user), "data is missing"},
		{"A/thinking with cache_control", validate.Anthropic, anth("", user+`,{"role":"assistant","content":[{"type":"thinking","thinking":"h","signature":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"ok"}]},`+user), "cache_control: field not allowed"},

		// Anthropic: system.
		{"A/system string", validate.Anthropic, anth(`"system":"be brief",`, user), ""},
		{"A/system blocks", validate.Anthropic, anth(`"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],`, user), ""},
		{"A/system image block", validate.Anthropic, anth(`"system":[{"type":"image","source":{"type":"url","url":"u"}}],`, user), "system blocks are text blocks"},
		{"A/system empty text", validate.Anthropic, anth(`"system":[{"type":"text","text":""}],`, user), "system[0].text: is empty"},
		{"A/system number", validate.Anthropic, anth(`"system":1,`, user), "system: is a number"},

		// Anthropic: tools.
		{"A/tools", validate.Anthropic, anth(`"tools":[{"name":"Read","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],`, user), ""},
		{"A/tools no name", validate.Anthropic, anth(`"tools":[{"input_schema":{"type":"object"}}],`, user), "tools[0]: name is missing"},
		{"A/tools no schema", validate.Anthropic, anth(`"tools":[{"name":"Read"}],`, user), "input_schema is missing"},
		{"A/tools schema not object type", validate.Anthropic, anth(`"tools":[{"name":"Read","input_schema":{"type":"array"}}],`, user), `input_schema.type: is array`},
		{"A/tools bad name", validate.Anthropic, anth(`"tools":[{"name":"read file","input_schema":{"type":"object"}}],`, user), "does not match"},
		{"A/tools duplicate name", validate.Anthropic, anth(`"tools":[{"name":"Read","input_schema":{"type":"object"}},{"name":"Read","input_schema":{"type":"object"}}],`, user), "tool names must be unique"},

		// Anthropic: cache_control.
		{"A/cache_control four", validate.Anthropic, anth(`"system":[`+cacheBlock("")+`],`, `{"role":"user","content":[`+cacheBlock("")+`,`+cacheBlock("")+`,`+cacheBlock("")+`]}`), ""},
		{"A/cache_control five", validate.Anthropic, anth(`"tools":[{"name":"Read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"system":[`+cacheBlock("")+`],`, `{"role":"user","content":[`+cacheBlock("")+`,`+cacheBlock("")+`,`+cacheBlock("")+`]}`), "5th cache_control breakpoint"},
		{"A/cache_control five with one in a tool_result", validate.Anthropic, anth(`"system":[`+cacheBlock("")+`,`+cacheBlock("")+`],`, user+","+useA+`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[`+cacheBlock("")+`],"cache_control":{"type":"ephemeral"}},`+cacheBlock("")+`]}`), "5th cache_control"},
		{"A/cache_control bad type", validate.Anthropic, anth("", `{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"persistent"}}]}`), `want "ephemeral"`},
		{"A/cache_control bad ttl", validate.Anthropic, anth("", `{"role":"user","content":[`+cacheBlock("10m")+`]}`), `want "5m" or "1h"`},
		{"A/cache_control 1h then 5m", validate.Anthropic, anth(`"system":[`+cacheBlock("1h")+`],`, `{"role":"user","content":[`+cacheBlock("5m")+`]}`), ""},
		{"A/cache_control 5m then 1h", validate.Anthropic, anth(`"system":[`+cacheBlock("")+`],`, `{"role":"user","content":[`+cacheBlock("1h")+`]}`), "must not come after a ttl=5m"},
		{"A/cache_control tool 5m then system 1h", validate.Anthropic, anth(`"tools":[{"name":"Read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"5m"}}],"system":[`+cacheBlock("1h")+`],`, user), "system[0].cache_control: has ttl 1h"},

		// Chat: messages, roles, content.
		{"C/valid", validate.Chat, chat(`"stream":true,`, `{"role":"system","content":"be brief"},{"role":"developer","content":[{"type":"text","text":"x"}]},`+user+","+assistant), ""},
		{"C/messages missing", validate.Chat, `{"model":"gpt-5"}`, "messages is missing"},
		{"C/messages empty", validate.Chat, chat("", ""), "messages: is empty"},
		{"C/unknown role", validate.Chat, chat("", `{"role":"model","content":"x"}`), `role: is "model"`},
		{"C/function role", validate.Chat, chat("", user+`,{"role":"function","name":"f","content":"x"}`), ""},
		{"C/user parts", validate.Chat, chat("", `{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}},{"type":"file","file":{"file_id":"f"}}]}`), ""},
		{"C/user empty parts", validate.Chat, chat("", `{"role":"user","content":[]}`), "minimum length 1"},
		{"C/system image part", validate.Chat, chat("", `{"role":"system","content":[{"type":"image_url","image_url":{"url":"u"}}]},`+user), `not a content part of a system message`},
		{"C/image_url without url", validate.Chat, chat("", `{"role":"user","content":[{"type":"image_url","image_url":{}}]}`), "url is missing"},
		{"C/user null content", validate.Chat, chat("", `{"role":"user","content":null}`), "content: is null"},
		{"C/assistant null content without tool_calls", validate.Chat, chat("", user+`,{"role":"assistant","content":null}`), "only an assistant message with tool_calls"},
		{"C/assistant refusal part", validate.Chat, chat("", user+`,{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}`), ""},

		// Chat: tool calls.
		{"C/tool calls", validate.Chat, chat(`"tools":[{"type":"function","function":{"name":"Read","parameters":{"type":"object"}}}],`, user+","+callA+","+toolA+","+assistant), ""},
		{"C/tool_calls empty", validate.Chat, chat("", user+`,{"role":"assistant","content":"x","tool_calls":[]}`), "tool_calls: is an empty array"},
		{"C/tool_call arguments object", validate.Chat, chat("", user+`,{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","tool_call_id":"c","content":"x"}`), "arguments: is an object, want a string"},
		{"C/tool_call no id", validate.Chat, chat("", user+`,{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`), "id is missing"},
		{"C/tool_call bad type", validate.Chat, chat("", user+`,{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"tool","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"x"}`), `type: is "tool"`},
		{"C/tool_call ids unique", validate.Chat, chat("", user+","+callA+","+toolA+","+user+","+callA+","+toolA), "tool call ids must be unique"},
		{"C/tool message unknown id", validate.Chat, chat("", user+","+callA+","+toolA+`,{"role":"tool","tool_call_id":"call_B","content":"b"}`), `"call_B" matches no tool call of messages[1]`},
		{"C/tool message after user", validate.Chat, chat("", user+","+callA+","+user+","+toolA), "follows no assistant message with tool_calls"},
		{"C/tool message first", validate.Chat, chat("", toolA), "follows no assistant message with tool_calls"},
		{"C/tool message no id", validate.Chat, chat("", user+","+callA+`,{"role":"tool","content":"x"}`), "tool_call_id is missing"},
		{"C/tool answered twice", validate.Chat, chat("", user+","+callA+","+toolA+","+toolA), "answered twice"},
		{"C/tool call unanswered", validate.Chat, chat("", user+","+callA+","+user), `tool_call "call_A" has no tool message answering it before messages[2]`},
		{"C/tool call unanswered at end", validate.Chat, chat("", user+","+callA), ""},
		{"C/tool call partly answered at end", validate.Chat, chat("", user+`,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}`), `"c2" has no tool message`},
		{"C/tools bad name", validate.Chat, chat(`"tools":[{"type":"function","function":{"name":"read file"}}],`, user), "does not match"},
		{"C/tools no function", validate.Chat, chat(`"tools":[{"type":"function"}],`, user), "function is missing"},

		// Responses: input and items.
		{"R/valid", validate.Responses, resp(`"instructions":"be brief","store":false,`, `{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},`+rUser+`,{"type":"reasoning","summary":[],"encrypted_content":"gAAA"},`+rCallA+","+rOutA+","+rAnswer), ""},
		{"R/input string", validate.Responses, `{"model":"gpt-5","input":"hi"}`, ""},
		{"R/input missing", validate.Responses, `{"model":"gpt-5"}`, "input is missing"},
		{"R/input missing with previous_response_id", validate.Responses, `{"model":"gpt-5","previous_response_id":"resp_1"}`, ""},
		{"R/input object", validate.Responses, `{"model":"gpt-5","input":{}}`, "input: is an object"},
		{"R/instructions number", validate.Responses, resp(`"instructions":1,`, rUser), "instructions: is a number"},
		{"R/message without type", validate.Responses, resp("", `{"role":"user","content":"hi"}`), ""},
		{"R/item without type", validate.Responses, resp("", `{"call_id":"x","output":"y"}`), "input[0]: has no type"},
		{"R/unknown item type", validate.Responses, resp("", rUser+`,{"type":"tool_search_call","id":"x"}`), ""},
		{"R/bad role", validate.Responses, resp("", `{"type":"message","role":"tool","content":"x"}`), `role: is "tool"`},
		{"R/user output_text", validate.Responses, resp("", `{"type":"message","role":"user","content":[{"type":"output_text","text":"x"}]}`), `"output_text", not a content part of a user message`},
		{"R/assistant input_text", validate.Responses, resp("", rUser+`,{"type":"message","role":"assistant","content":[{"type":"input_text","text":"x"}]}`), `"input_text", not a content part of a assistant message`},
		{"R/input_image without url", validate.Responses, resp("", `{"type":"message","role":"user","content":[{"type":"input_image"}]}`), "neither image_url nor file_id"},
		{"R/message empty content", validate.Responses, resp("", `{"type":"message","role":"user","content":[]}`), "empty array"},

		// Responses: calls and outputs.
		{"R/function_call no arguments", validate.Responses, resp("", rUser+`,{"type":"function_call","call_id":"c","name":"shell"},{"type":"function_call_output","call_id":"c","output":"x"}`), "arguments is missing"},
		{"R/function_call arguments object", validate.Responses, resp("", rUser+`,{"type":"function_call","call_id":"c","name":"shell","arguments":{}},{"type":"function_call_output","call_id":"c","output":"x"}`), "arguments: is an object"},
		{"R/call_id unique", validate.Responses, resp("", rUser+","+rCallA+","+rOutA+","+rCallA+","+rOutA), "call_ids must be unique"},
		{"R/output without call", validate.Responses, resp("", rUser+","+rOutA), `"call_A" matches no function_call earlier`},
		{"R/output before call", validate.Responses, resp("", rUser+","+rOutA+","+rCallA), "matches no function_call earlier"},
		{"R/output twice", validate.Responses, resp("", rUser+","+rCallA+","+rOutA+","+rOutA), "answered twice"},
		{"R/output array", validate.Responses, resp("", rUser+","+rCallA+`,{"type":"function_call_output","call_id":"call_A","output":[{"type":"input_text","text":"a"}]}`), ""},
		{"R/output output_text part", validate.Responses, resp("", rUser+","+rCallA+`,{"type":"function_call_output","call_id":"call_A","output":[{"type":"output_text","text":"a"}]}`), "not a content part of a tool output"},
		{"R/output missing", validate.Responses, resp("", rUser+","+rCallA+`,{"type":"function_call_output","call_id":"call_A"}`), "output is missing"},
		{"R/call unanswered", validate.Responses, resp("", rUser+","+rCallA+","+rUser), `function_call "call_A" has no function_call_output later`},
		{"R/call unanswered trailing", validate.Responses, resp("", rUser+`,{"type":"reasoning","summary":[]},`+rCallA), ""},
		{"R/custom tool call", validate.Responses, resp("", rUser+`,{"type":"custom_tool_call","call_id":"p","name":"apply_patch","input":"*** Begin Patch"},{"type":"custom_tool_call_output","call_id":"p","output":"ok"}`), ""},
		{"R/custom output for a function call", validate.Responses, resp("", rUser+","+rCallA+`,{"type":"custom_tool_call_output","call_id":"call_A","output":"ok"},`+rOutA), "matches no custom_tool_call earlier"},
		{"R/custom call no input", validate.Responses, resp("", rUser+`,{"type":"custom_tool_call","call_id":"p","name":"apply_patch"},{"type":"custom_tool_call_output","call_id":"p","output":"ok"}`), "input is missing"},
		{"R/custom call unanswered", validate.Responses, resp("", rUser+`,{"type":"custom_tool_call","call_id":"p","name":"apply_patch","input":"x"},`+rUser), `custom_tool_call "p" has no custom_tool_call_output`},
		{"R/reasoning without summary", validate.Responses, resp("", rUser+`,{"type":"reasoning","encrypted_content":"gAAA"},`+rAnswer), "summary is missing"},
		{"R/reasoning summary text", validate.Responses, resp("", rUser+`,{"type":"reasoning","summary":[{"type":"summary_text","text":"thought"}]},`+rAnswer), ""},
		{"R/local shell", validate.Responses, resp("", rUser+`,{"type":"local_shell_call","call_id":"l","action":{"type":"exec","command":["ls"]}},{"type":"local_shell_call_output","id":"l","output":"a"}`), ""},
		{"R/local shell no action", validate.Responses, resp("", rUser+`,{"type":"local_shell_call","call_id":"l"}`), "action is missing"},
		{"R/tools", validate.Responses, resp(`"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}},{"type":"custom","name":"apply_patch"},{"type":"web_search"}],`, rUser), ""},
		{"R/tools no type", validate.Responses, resp(`"tools":[{"name":"shell"}],`, rUser), "tools[0]: has no type"},
		{"R/tools function no name", validate.Responses, resp(`"tools":[{"type":"function"}],`, rUser), "name is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validate.Body(tc.api, []byte(tc.body))
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("valid body reported: %v\nbody: %s", errs, tc.body)
				}
				return
			}
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.want) {
					var p *validate.Problem
					if !errors.As(err, &p) {
						t.Errorf("problem %v is %T, want *validate.Problem", err, err)
					}
					return
				}
			}
			t.Fatalf("no problem contains %q; got %v\nbody: %s", tc.want, errs, tc.body)
		})
	}
}

func TestBody_ReportsEveryProblem(t *testing.T) {
	body := anth("", `{"role":"user","content":[{"type":"text","text":""},{"text":"x"}]},{"role":"tool","content":"x"}`)
	errs := validate.Body(validate.Anthropic, []byte(body))
	if len(errs) < 3 {
		t.Fatalf("want at least 3 problems (empty text, missing type, bad role), got %v", errs)
	}
}

// ---- mutations of bodies rebuilt from the corpus ----

// mutation changes a decoded body so that it breaks a rule; it returns false when the body has
// nothing it applies to. want is a substring of the problem that must be reported (or several,
// separated by "|": the problem depends on what the mutation hit).
type mutation struct {
	name string
	want string
	fn   func(body map[string]any) bool
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode a rebuilt body: %v", err)
	}
	return m
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { o, _ := v.(map[string]any); return o }

func blocks(msg map[string]any) []any { return list(msg["content"]) }

// Anthropic mutations.
var anthropicMutations = []mutation{
	{"drop a tool_use", "matches no tool_use", func(b map[string]any) bool {
		msgs := list(b["messages"])
		for i := len(msgs) - 2; i >= 0; i-- {
			m := obj(msgs[i])
			if m["role"] != "assistant" {
				continue
			}
			bs := blocks(m)
			for j, x := range bs {
				if obj(x)["type"] == "tool_use" {
					m["content"] = append(bs[:j:j], bs[j+1:]...)
					return true
				}
			}
		}
		return false
	}},
	{"five cache_control", "5th cache_control", func(b map[string]any) bool {
		n := 0
		var without []map[string]any
		for _, tl := range list(b["tools"]) {
			if obj(tl)["cache_control"] != nil {
				n++
			} else {
				without = append(without, obj(tl))
			}
		}
		for _, s := range list(b["system"]) {
			if obj(s)["cache_control"] != nil {
				n++
			}
		}
		for _, m := range list(b["messages"]) {
			for _, x := range blocks(obj(m)) {
				if obj(x)["cache_control"] != nil {
					n++
				}
			}
		}
		for _, tl := range without {
			if n >= 5 {
				break
			}
			tl["cache_control"] = map[string]any{"type": "ephemeral"}
			n++
		}
		return n >= 5
	}},
	{"orphan tool_result", "matches no tool_use|answers no tool_use", func(b map[string]any) bool {
		msgs := list(b["messages"])
		last := obj(msgs[len(msgs)-1])
		orphan := map[string]any{"type": "tool_result", "tool_use_id": "toolu_orphan000", "content": "x"}
		last["content"] = append([]any{orphan}, blocks(last)...)
		return true
	}},
	{"text before tool_result", "tool_result comes after", func(b map[string]any) bool {
		for _, m := range list(b["messages"]) {
			mo := obj(m)
			bs := blocks(mo)
			if mo["role"] == "user" && len(bs) > 0 && obj(bs[0])["type"] == "tool_result" {
				text := map[string]any{"type": "text", "text": "moved first"}
				if j := len(bs) - 1; obj(bs[j])["type"] == "text" {
					text, bs = obj(bs[j]), bs[:j]
				}
				mo["content"] = append([]any{text}, bs...)
				return true
			}
		}
		return false
	}},
}

// Chat mutations.
var chatMutations = []mutation{
	{"drop a tool call", "matches no tool call|follows no assistant message with tool_calls", func(b map[string]any) bool {
		for _, m := range list(b["messages"]) {
			mo := obj(m)
			if calls := list(mo["tool_calls"]); len(calls) > 0 {
				if len(calls) == 1 {
					delete(mo, "tool_calls")
				} else {
					mo["tool_calls"] = calls[1:]
				}
				return true
			}
		}
		return false
	}},
	{"orphan tool message", "matches no tool call", func(b map[string]any) bool {
		msgs := list(b["messages"])
		for i := len(msgs) - 1; i >= 0; i-- {
			if len(list(obj(msgs[i])["tool_calls"])) > 0 {
				orphan := map[string]any{"role": "tool", "tool_call_id": "call_orphan", "content": "x"}
				b["messages"] = append(msgs[:i+1:i+1], append([]any{orphan}, msgs[i+1:]...)...)
				return true
			}
		}
		return false
	}},
	{"user message between call and answer", "follows no assistant message with tool_calls", func(b map[string]any) bool {
		msgs := list(b["messages"])
		for i := 0; i+1 < len(msgs); i++ {
			if len(list(obj(msgs[i])["tool_calls"])) > 0 && obj(msgs[i+1])["role"] == "tool" {
				u := map[string]any{"role": "user", "content": "interjection"}
				b["messages"] = append(msgs[:i+1:i+1], append([]any{u}, msgs[i+1:]...)...)
				return true
			}
		}
		return false
	}},
}

// Responses mutations.
var responsesMutations = []mutation{
	{"drop a function_call", "matches no function_call earlier", func(b map[string]any) bool {
		items := list(b["input"])
		for i, it := range items {
			if obj(it)["type"] == "function_call" {
				b["input"] = append(items[:i:i], items[i+1:]...)
				return true
			}
		}
		return false
	}},
	{"orphan output", "matches no function_call earlier", func(b map[string]any) bool {
		orphan := map[string]any{"type": "function_call_output", "call_id": "call_orphan", "output": "x"}
		b["input"] = append(list(b["input"]), orphan)
		return true
	}},
	{"output before its call", "matches no function_call earlier", func(b map[string]any) bool {
		items := list(b["input"])
		for i, it := range items {
			if obj(it)["type"] != "function_call" {
				continue
			}
			for j := i + 1; j < len(items); j++ {
				if obj(items[j])["type"] == "function_call_output" && obj(items[j])["call_id"] == obj(it)["call_id"] {
					items[i], items[j] = items[j], items[i]
					return true
				}
			}
		}
		return false
	}},
}

// TestBody_CorpusMutations takes the last body of every session rebuilt from the corpus, checks
// it is valid, then breaks it one way at a time and checks the break is reported.
func TestBody_CorpusMutations(t *testing.T) {
	sessions, _ := compresstest.Load(t)
	applied := map[string]int{}
	for _, s := range sessions {
		body := s.Bodies[len(s.Bodies)-1]
		if errs := validate.Body(s.API, body); len(errs) > 0 {
			t.Errorf("%s (%s): the rebuilt body is invalid before any mutation: %v", s.Name, s.API, errs)
			continue
		}
		// Broken JSON, for every API: cut short, and with trailing garbage.
		for _, broken := range [][]byte{body[:len(body)-1], append(append([]byte(nil), body...), ',')} {
			if !reported(validate.Body(s.API, broken), "not valid JSON") {
				t.Errorf("%s (%s): broken JSON not reported", s.Name, s.API)
			}
		}
		applied["break JSON"]++
		var muts []mutation
		switch s.API {
		case validate.Anthropic:
			muts = anthropicMutations
		case validate.Chat:
			muts = chatMutations
		case validate.Responses:
			muts = responsesMutations
		}
		for _, m := range muts {
			b := decode(t, body)
			if !m.fn(b) {
				continue
			}
			key := s.API + ": " + m.name
			applied[key]++
			if errs := validate.Body(s.API, encode(t, b)); !reported(errs, m.want) {
				t.Errorf("%s (%s): %s: no problem contains %q; got %v", s.Name, s.API, m.name, m.want, errs)
			}
		}
	}
	for _, api := range []struct {
		name string
		muts []mutation
	}{{validate.Anthropic, anthropicMutations}, {validate.Chat, chatMutations}, {validate.Responses, responsesMutations}} {
		for _, m := range api.muts {
			if applied[api.name+": "+m.name] == 0 {
				t.Errorf("mutation %q never applied to a %s body", m.name, api.name)
			}
		}
	}
	t.Logf("mutations applied: %v", applied)
}

// reported says whether a problem contains want, or one of its alternatives separated by "|".
func reported(errs []error, want string) bool {
	for _, err := range errs {
		for _, w := range strings.Split(want, "|") {
			if strings.Contains(err.Error(), w) {
				return true
			}
		}
	}
	return false
}

func ExampleBody() {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]},` +
		`{"role":"user","content":"go on"}]}`
	for _, err := range validate.Body(validate.Anthropic, []byte(body)) {
		fmt.Println(err)
	}
	// Output:
	// messages[1].content[0].id: tool_use "toolu_1" has no tool_result in the next user turn (tool_use ids were found without tool_result blocks immediately after)
}

// FuzzBody checks that Body never panics, and that it reports every body that is not valid JSON.
func FuzzBody(f *testing.F) {
	for _, seed := range []string{
		anth("", user+","+useA+","+resultA),
		anth(`"system":[`+cacheBlock("1h")+`],"tools":[{"name":"Read","input_schema":{"type":"object"}}],`, user),
		chat("", user+","+callA+","+toolA+","+assistant),
		resp("", rUser+","+rCallA+","+rOutA+","+rAnswer),
		`{"model":"m","messages":[{"role":"user","content":"\ud83d"}]}`,
		`{"model":"m","input":[{"type":"reasoning"},{"role":"user"}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		valid := json.Valid([]byte(body))
		for _, api := range []string{validate.Anthropic, validate.Chat, validate.Responses} {
			errs := validate.Body(api, []byte(body))
			if !valid && len(errs) == 0 {
				t.Fatalf("%s: invalid JSON %q not reported", api, body)
			}
		}
	})
}
