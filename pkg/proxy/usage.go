package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/scrub"
)

// turnUsage accumulates what the response says about the turn, from a JSON body or from the
// events of a stream.
type turnUsage struct {
	event.Tokens
	MessageID  string
	Model      string
	StopReason string
	ErrClass   string
	ErrMsg     string
	Final      bool // the stream's closing event (or a whole JSON body) was seen
	Seen       bool // some usage was read
	// creds are the request's credentials, taken out of an error message before it is scrubbed.
	creds credentials
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheCreation            *struct {
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// apply sets the buckets an Anthropic usage object carries. Anthropic's input_tokens already
// excludes cache reads and writes. A message_delta repeats input figures in newer API versions;
// zero figures there never overwrite the message_start ones.
func (u *turnUsage) applyAnthropic(a *anthropicUsage, final bool) {
	if a == nil {
		return
	}
	u.Seen = true
	if a.InputTokens > 0 || !final {
		u.Input = a.InputTokens
	}
	if a.CacheReadInputTokens > 0 || !final {
		u.CacheRead = a.CacheReadInputTokens
	}
	if a.CacheCreationInputTokens > 0 || !final {
		u.CacheCreation = a.CacheCreationInputTokens
	}
	// The 5m/1h breakdown comes with message_start; a message_delta that repeats the total
	// without it keeps the split already read.
	if a.CacheCreation != nil {
		u.CacheCreation1h = a.CacheCreation.Ephemeral1h
	}
	u.CacheCreation1h = min(u.CacheCreation1h, u.CacheCreation)
	u.Output = a.OutputTokens
}

type openAIUsage struct {
	// Responses API
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	// Chat and completions
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// applyOpenAI stores OpenAI usage net: OpenAI's input counts include cached tokens, which are
// moved to CacheRead; reasoning stays inside output and is shown beside it.
func (u *turnUsage) applyOpenAI(o *openAIUsage) {
	if o == nil {
		return
	}
	u.Seen = true
	in, out := o.InputTokens, o.OutputTokens
	var cached, reasoning int64
	if o.InputTokensDetails != nil {
		cached = o.InputTokensDetails.CachedTokens
	}
	if o.OutputTokensDetails != nil {
		reasoning = o.OutputTokensDetails.ReasoningTokens
	}
	if in == 0 && out == 0 {
		in, out = o.PromptTokens, o.CompletionTokens
		if o.PromptTokensDetails != nil {
			cached = o.PromptTokensDetails.CachedTokens
		}
		if o.CompletionTokensDetails != nil {
			reasoning = o.CompletionTokensDetails.ReasoningTokens
		}
	}
	u.Input = max(in-cached, 0)
	u.CacheRead = cached
	u.Output = out
	u.Reasoning = reasoning
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Code    any    `json:"code"`
}

func (u *turnUsage) applyError(e *apiError) {
	if e == nil {
		return
	}
	u.ErrClass = e.Type
	if u.ErrClass == "" {
		if s, ok := e.Code.(string); ok {
			u.ErrClass = s
		}
	}
	// An upstream's error can echo the request (its x-api-key, a bearer token, passwords in the
	// prompt): take the request's own credentials out, whatever their format, and scrub it whole,
	// before record cuts it.
	u.ErrMsg = scrub.String(u.creds.redact(e.Message))
}

// scrubError scrubs what an api_turn keeps of an error, whatever made it: the upstream's class
// and message (which applyError scrubbed already, whole) or a transport error's text.
func scrubError(t *event.APITurn) {
	t.ErrorClass, t.ErrorMessage = scrub.String(t.ErrorClass), scrub.String(t.ErrorMessage)
}

// parseJSONBody reads a whole (non-streaming) response body.
func (u *turnUsage) parseJSONBody(provider string, body []byte) {
	if provider == Google {
		if u.geminiChunk(body) {
			u.Final = true
		}
		return
	}
	var usage, errVal, choices []byte
	var status string
	err := jsonscan.Members(body, func(key, val []byte) bool {
		switch {
		case jsonscan.Key(key, "id"):
			u.MessageID = jsonscan.Str(val)
		case jsonscan.Key(key, "model"):
			u.Model = jsonscan.Str(val)
		case jsonscan.Key(key, "stop_reason"):
			u.StopReason = jsonscan.Str(val)
		case jsonscan.Key(key, "status"):
			status = jsonscan.Str(val)
		case jsonscan.Key(key, "usage"):
			usage = val
		case jsonscan.Key(key, "error"):
			errVal = val
		case jsonscan.Key(key, "choices"):
			choices = val
		}
		return true
	})
	if err != nil {
		return
	}
	u.Final = true
	if u.StopReason == "" && len(choices) > 0 {
		var cs []struct {
			FinishReason string `json:"finish_reason"`
		}
		if json.Unmarshal(choices, &cs) == nil && len(cs) > 0 {
			u.StopReason = cs[0].FinishReason
		}
	}
	if u.StopReason == "" && status != "" && status != "completed" {
		u.StopReason = status
	}
	if len(errVal) > 0 && string(errVal) != "null" {
		var e apiError
		if json.Unmarshal(errVal, &e) == nil {
			u.applyError(&e)
		}
	}
	if len(usage) == 0 || string(usage) == "null" {
		return
	}
	if provider == Anthropic {
		if a, ok := scanAnthropicUsage(usage); ok {
			u.applyAnthropic(&a, false)
		}
		return
	}
	var o openAIUsage
	if json.Unmarshal(usage, &o) == nil {
		u.applyOpenAI(&o)
	}
}

// streamEvent reads one SSE data payload. It returns true when the payload is an OpenAI chat
// usage-only chunk (empty choices, usage set): the proxy hides that chunk when it asked for it.
func (u *turnUsage) streamEvent(provider string, data []byte) (usageOnlyChunk bool) {
	if provider == Google {
		if len(data) > 0 && data[0] == '{' {
			u.geminiChunk(data)
		}
		return false
	}
	if string(data) == "[DONE]" {
		u.Final = true
		return false
	}
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	// Most events are content deltas that carry no usage: skip them without decoding.
	typ := eventType(data)
	switch {
	case provider == Anthropic && typ != "" && !anthropicEvents[typ]:
		return false
	case provider == OpenAI && typ != "" && !openAIEvents[typ]:
		return false
	case provider == OpenAI && typ == "" && u.MessageID != "" && !bytes.Contains(data, []byte(`"usage"`)) &&
		!bytes.Contains(data, []byte(`"finish_reason":"`)) && !bytes.Contains(data, []byte(`"error"`)):
		return false // a chat content chunk after the first
	}
	if provider == Anthropic {
		if typ == "" { // keys in another order: find the type the slow way
			jsonscan.Members(data, func(k, v []byte) bool {
				if jsonscan.Key(k, "type") {
					typ = jsonscan.Str(v)
					return false
				}
				return true
			})
		}
		u.anthropicEvent(typ, data)
		return false
	}
	var ev struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Model    string `json:"model"`
		Response *struct {
			ID                string       `json:"id"`
			Model             string       `json:"model"`
			Status            string       `json:"status"`
			Usage             *openAIUsage `json:"usage"`
			Error             *apiError    `json:"error"`
			IncompleteDetails *struct {
				Reason string `json:"reason"`
			} `json:"incomplete_details"`
		} `json:"response"`
		Choices []struct {
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage   *openAIUsage `json:"usage"`
		Error   *apiError    `json:"error"`
		Message string       `json:"message"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return false
	}
	switch {
	case ev.Response != nil: // Responses API
		if ev.Response.ID != "" {
			u.MessageID = ev.Response.ID
		}
		if ev.Response.Model != "" {
			u.Model = ev.Response.Model
		}
		switch ev.Type {
		case "response.completed", "response.incomplete", "response.failed":
			u.Final = true
			u.applyOpenAI(ev.Response.Usage)
			u.applyError(ev.Response.Error)
			u.StopReason = ev.Response.Status
			if ev.Response.IncompleteDetails != nil && ev.Response.IncompleteDetails.Reason != "" {
				u.StopReason = ev.Response.IncompleteDetails.Reason
			}
		}
	case ev.Type == "error":
		u.Final = true
		if ev.Error != nil {
			u.applyError(ev.Error)
		} else {
			u.applyError(&apiError{Type: "error", Message: ev.Message})
		}
	default: // Chat chunks
		if ev.ID != "" {
			u.MessageID = ev.ID
		}
		if ev.Model != "" {
			u.Model = ev.Model
		}
		for _, c := range ev.Choices {
			if c.FinishReason != nil && *c.FinishReason != "" {
				u.StopReason = *c.FinishReason
			}
		}
		if ev.Usage != nil {
			u.applyOpenAI(ev.Usage)
			u.Final = true
			return len(ev.Choices) == 0
		}
		if ev.Error != nil {
			u.applyError(ev.Error)
		}
	}
	return false
}

var anthropicEvents = map[string]bool{"message_start": true, "message_delta": true, "message_stop": true, "error": true}

var openAIEvents = map[string]bool{"response.created": true, "response.completed": true, "response.incomplete": true,
	"response.failed": true, "error": true}

// eventType returns the value of a "type" key that opens an event's JSON, as the APIs write it
// ({"type":"message_delta",...}), or "" when the event does not start that way (and must then be
// decoded to be known).
func eventType(data []byte) string {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"`))
	if !ok {
		rest, ok = bytes.CutPrefix(data, []byte(`{"type": "`))
	}
	if !ok {
		return ""
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end > 64 {
		return ""
	}
	return string(rest[:end])
}

// anthropicEvent reads the events that carry usage with the scanner; only the small usage and
// error objects go through encoding/json.
func (u *turnUsage) anthropicEvent(typ string, data []byte) {
	switch typ {
	case "message_start":
		jsonscan.Members(data, func(key, val []byte) bool {
			if jsonscan.Key(key, "message") {
				jsonscan.Members(val, func(k, v []byte) bool {
					switch {
					case jsonscan.Key(k, "id"):
						u.MessageID = jsonscan.Str(v)
					case jsonscan.Key(k, "model"):
						u.Model = jsonscan.Str(v)
					case jsonscan.Key(k, "usage"):
						if a, ok := scanAnthropicUsage(v); ok {
							u.applyAnthropic(&a, false)
						}
					}
					return true
				})
			}
			return true
		})
	case "message_delta":
		jsonscan.Members(data, func(key, val []byte) bool {
			switch {
			case jsonscan.Key(key, "usage"):
				if a, ok := scanAnthropicUsage(val); ok {
					u.applyAnthropic(&a, true)
				}
			case jsonscan.Key(key, "delta"):
				jsonscan.Members(val, func(k, v []byte) bool {
					if jsonscan.Key(k, "stop_reason") {
						if r := jsonscan.Str(v); r != "" {
							u.StopReason = r
						}
					}
					return true
				})
			}
			return true
		})
	case "message_stop":
		u.Final = true
	case "error":
		jsonscan.Members(data, func(key, val []byte) bool {
			if jsonscan.Key(key, "error") {
				var e apiError
				if json.Unmarshal(val, &e) == nil {
					u.applyError(&e)
				}
			}
			return true
		})
		u.Final = true
	}
}

// scanAnthropicUsage reads an Anthropic usage object with the scanner.
func scanAnthropicUsage(val []byte) (anthropicUsage, bool) {
	var a anthropicUsage
	err := jsonscan.Members(val, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, "input_tokens"):
			a.InputTokens = num(v)
		case jsonscan.Key(k, "output_tokens"):
			a.OutputTokens = num(v)
		case jsonscan.Key(k, "cache_read_input_tokens"):
			a.CacheReadInputTokens = num(v)
		case jsonscan.Key(k, "cache_creation_input_tokens"):
			a.CacheCreationInputTokens = num(v)
		case jsonscan.Key(k, "cache_creation") && len(v) > 0 && v[0] == '{':
			a.CacheCreation = &struct {
				Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
				Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
			}{}
			jsonscan.Members(v, func(k2, v2 []byte) bool {
				switch {
				case jsonscan.Key(k2, "ephemeral_5m_input_tokens"):
					a.CacheCreation.Ephemeral5m = num(v2)
				case jsonscan.Key(k2, "ephemeral_1h_input_tokens"):
					a.CacheCreation.Ephemeral1h = num(v2)
				}
				return true
			})
		}
		return true
	})
	return a, err == nil
}

// num reads a non-negative integer token count; anything else is 0.
func num(v []byte) int64 {
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// geminiUsage is a Gemini API usageMetadata object.
type geminiUsage struct {
	Prompt     int64 // promptTokenCount: the whole prompt, cached tokens included
	Cached     int64 // cachedContentTokenCount
	Candidates int64 // candidatesTokenCount: the answer, thinking excluded
	Thoughts   int64 // thoughtsTokenCount: thinking, billed as output
	ToolUse    int64 // toolUsePromptTokenCount: the results of built-in tools, billed as input
}

// applyGemini stores Gemini usage net, as applyOpenAI does: the cached tokens are moved out of the
// prompt count into CacheRead, the prompt of built-in tools (search, code execution) is added to
// Input, thinking is added to Output and shown apart as Reasoning. A stream repeats usageMetadata
// in every chunk, growing; the last one read wins.
func (u *turnUsage) applyGemini(g geminiUsage) {
	u.Seen = true
	u.Input = max(g.Prompt-g.Cached, 0) + g.ToolUse
	u.CacheRead = g.Cached
	u.Output = g.Candidates + g.Thoughts
	u.Reasoning = g.Thoughts
}

// scanGeminiUsage reads a usageMetadata object with the scanner.
func scanGeminiUsage(val []byte) (geminiUsage, bool) {
	var g geminiUsage
	err := jsonscan.Members(val, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, "promptTokenCount"):
			g.Prompt = num(v)
		case jsonscan.Key(k, "cachedContentTokenCount"):
			g.Cached = num(v)
		case jsonscan.Key(k, "candidatesTokenCount"):
			g.Candidates = num(v)
		case jsonscan.Key(k, "thoughtsTokenCount"):
			g.Thoughts = num(v)
		case jsonscan.Key(k, "toolUsePromptTokenCount"):
			g.ToolUse = num(v)
		}
		return true
	})
	return g, err == nil
}

// geminiError is the Gemini API's error object: {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED"}.
type geminiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// geminiChunk reads one GenerateContentResponse: a whole JSON body, one SSE event or one element
// of a streamed JSON array. A candidate's finishReason (or the prompt's blockReason) ends the
// turn; so does an error. It reports whether data was one JSON object.
func (u *turnUsage) geminiChunk(data []byte) bool {
	return jsonscan.Members(data, func(key, val []byte) bool {
		switch {
		case jsonscan.Key(key, "responseId"):
			if id := jsonscan.Str(val); id != "" {
				u.MessageID = id
			}
		case jsonscan.Key(key, "modelVersion"):
			if m := jsonscan.Str(val); m != "" {
				u.Model = m
			}
		case jsonscan.Key(key, "usageMetadata"):
			if g, ok := scanGeminiUsage(val); ok {
				u.applyGemini(g)
			}
		case jsonscan.Key(key, "candidates"):
			jsonscan.Elements(val, func(c []byte) bool {
				jsonscan.Members(c, func(k, v []byte) bool {
					if jsonscan.Key(k, "finishReason") {
						if r := jsonscan.Str(v); r != "" {
							u.StopReason, u.Final = r, true
						}
					}
					return true
				})
				return false // the first candidate says why the turn ended
			})
		case jsonscan.Key(key, "promptFeedback"):
			jsonscan.Members(val, func(k, v []byte) bool {
				if jsonscan.Key(k, "blockReason") {
					if r := jsonscan.Str(v); r != "" {
						u.StopReason, u.Final = r, true
					}
				}
				return true
			})
		case jsonscan.Key(key, "error") && !jsonscan.Null(val):
			var e geminiError
			if json.Unmarshal(val, &e) == nil {
				u.applyError(&apiError{Type: e.Status, Message: e.Message, Code: e.Code})
			}
			u.Final = true
		}
		return true
	}) == nil
}
