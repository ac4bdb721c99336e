package proxy

import (
	"bytes"
	"encoding/json"
	"testing"
)

// referenceRequest is parseRequest written with encoding/json, the behaviour the scanner must match.
func referenceRequest(body []byte) requestInfo {
	var b struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Input    json.RawMessage   `json:"input"`
		Tools    []json.RawMessage `json:"tools"`
		Metadata *struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		PromptCacheKey string `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return requestInfo{NotJSON: true}
	}
	info := requestInfo{Model: b.Model, Stream: b.Stream, Messages: len(b.Messages), Tools: len(b.Tools)}
	var items []json.RawMessage
	if len(b.Input) > 0 && json.Unmarshal(b.Input, &items) == nil && b.Input[0] == '[' {
		info.Messages = len(items)
	} else if len(b.Input) > 0 && b.Input[0] == '"' {
		info.Messages = 1
	}
	if b.StreamOptions != nil {
		info.IncludeUsage = b.StreamOptions.IncludeUsage
	}
	if b.Metadata != nil {
		info.SessionID = sessionFromUserID(b.Metadata.UserID)
	}
	if info.SessionID == "" {
		info.SessionID = b.PromptCacheKey
	}
	return info
}

var scanSeeds = []string{
	claudeBody,
	`{"model":"gpt-5.2-codex","stream":true,"input":[{"type":"message","content":[{"type":"input_text","text":"a \"quoted\" ]} text"}]},{"type":"function_call_output","output":"x"}],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],"prompt_cache_key":"019b7f94-51b4"}`,
	`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":false},"messages":[]}`,
	`{"model":"m\u00e9","input":"just a string","metadata":{"user_id":"user_ab_account__session_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}}`,
	` { "model" : "x" , "messages" : [ 1 , -2.5e3 , true , null , { } , [ ] ] } `,
	`{}`, `[]`, `{"model":`, `{"model":"x",}`, `nope`, `{"messages":{"a":1}}`,
}

func TestScan_MatchesEncodingJSON(t *testing.T) {
	for _, s := range scanSeeds {
		got, want := parseRequest([]byte(s)), referenceRequest([]byte(s))
		if want.NotJSON {
			continue // the scanner may accept some invalid bodies; it only needs to agree on valid ones
		}
		if got != want {
			t.Errorf("%s:\n scanner   %+v\n reference %+v", s, got, want)
		}
	}
}

// FuzzScanMatchesEncodingJSON: on any valid JSON object the scanner reads the same fields as
// encoding/json, and on any input it neither panics nor loops.
func FuzzScanMatchesEncodingJSON(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := parseRequest(data)
		var u turnUsage
		u.parseJSONBody(Anthropic, data)
		u.parseJSONBody(OpenAI, data)
		u.parseJSONBody(Google, data)
		parseGeminiRequest(data, route{})
		if !json.Valid(data) || foldedOrEscapedKey(data) {
			return
		}
		want := referenceRequest(data)
		if want.NotJSON {
			return // valid JSON, but not an object of the expected shape (e.g. "model": 5)
		}
		if got != want {
			t.Fatalf("%q:\n scanner   %+v\n reference %+v", data, got, want)
		}
	})
}

// foldedOrEscapedKey spots inputs where encoding/json and the APIs part ways: encoding/json matches
// keys case-insensitively and decodes escapes in keys; the APIs (and the scanner) do neither.
func foldedOrEscapedKey(data []byte) bool {
	if bytes.IndexByte(data, '\\') >= 0 {
		return true
	}
	lower := bytes.ToLower(data)
	for _, k := range []string{"model", "stream", "messages", "input", "tools", "metadata", "user_id", "stream_options", "include_usage", "prompt_cache_key"} {
		q := []byte(`"` + k + `"`)
		if bytes.Count(lower, q) != bytes.Count(data, q) {
			return true
		}
	}
	return false
}
