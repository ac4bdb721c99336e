package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// Provider names.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// route says where a request goes and whether it is a model call to meter.
type route struct {
	provider string
	endpoint string // the API endpoint, without query and version prefix quirks
	metered  bool
}

var meteredPaths = map[string]string{
	"/v1/messages":              Anthropic,
	"/v1/messages/count_tokens": Anthropic,
	"/v1/complete":              Anthropic,
	"/v1/chat/completions":      OpenAI,
	"/v1/responses":             OpenAI,
	"/v1/completions":           OpenAI,
	"/v1/embeddings":            OpenAI,
}

// routeFor picks the upstream: the metered paths by their provider, any other path by its
// headers (an Anthropic client sends anthropic-version or x-api-key), else OpenAI.
func routeFor(r *http.Request) route {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if p, ok := meteredPaths[path]; ok && r.Method == http.MethodPost {
		return route{provider: p, endpoint: path, metered: true}
	}
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" || strings.HasPrefix(r.Header.Get("User-Agent"), "claude-cli") {
		return route{provider: Anthropic, endpoint: path}
	}
	if p, ok := meteredPaths[path]; ok {
		return route{provider: p, endpoint: path}
	}
	return route{provider: OpenAI, endpoint: path}
}

// requestInfo is what the proxy reads from a request body. Parsing runs beside the forwarding,
// never in front of it.
type requestInfo struct {
	Model        string
	Stream       bool
	Messages     int
	Tools        int
	SessionID    string
	IncludeUsage bool // chat: stream_options.include_usage
	NotJSON      bool
}

type requestBody struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	Messages []struct{}      `json:"messages"` // only counted: decoding into struct{} copies nothing
	Input    json.RawMessage `json:"input"`    // Responses: a string or a list of items
	Tools    []struct{}      `json:"tools"`
	Metadata *struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	PromptCacheKey string `json:"prompt_cache_key"`
}

func parseRequest(body []byte) requestInfo {
	var b requestBody
	if err := json.Unmarshal(body, &b); err != nil {
		return requestInfo{NotJSON: true}
	}
	info := requestInfo{Model: b.Model, Stream: b.Stream, Messages: len(b.Messages), Tools: len(b.Tools)}
	if len(b.Input) > 0 && b.Input[0] == '[' {
		var items []struct{}
		if json.Unmarshal(b.Input, &items) == nil {
			info.Messages = len(items)
		}
	} else if len(b.Input) > 0 {
		info.Messages = 1
	}
	if b.StreamOptions != nil {
		info.IncludeUsage = b.StreamOptions.IncludeUsage
	}
	if b.Metadata != nil {
		info.SessionID = sessionFromUserID(b.Metadata.UserID)
	}
	if info.SessionID == "" && b.PromptCacheKey != "" {
		info.SessionID = b.PromptCacheKey // Codex keys its prompt cache by the conversation id
	}
	return info
}

var legacySession = regexp.MustCompile(`session_([0-9a-fA-F-]{36})`)

// sessionFromUserID reads Claude Code's metadata.user_id: a JSON string holding session_id in
// current versions, "user_<hash>_account_<id>_session_<uuid>" in older ones.
func sessionFromUserID(uid string) string {
	if uid == "" {
		return ""
	}
	if strings.HasPrefix(uid, "{") {
		var m struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(uid), &m) == nil {
			return m.SessionID
		}
	}
	if m := legacySession.FindStringSubmatch(uid); m != nil {
		return m[1]
	}
	return ""
}

// clientOf names the AI client from its headers.
func clientOf(h http.Header) string {
	ua := strings.ToLower(h.Get("User-Agent"))
	orig := strings.ToLower(h.Get("originator"))
	switch {
	case h.Get("X-Claude-Code-Session-Id") != "" || strings.HasPrefix(ua, "claude-cli") || strings.Contains(ua, "claude-code"):
		return "claude-code"
	case strings.HasPrefix(orig, "codex") || strings.HasPrefix(ua, "codex"):
		return "codex"
	case strings.Contains(ua, "opencode"):
		return "opencode"
	case strings.Contains(ua, "gemini"):
		return "gemini-cli"
	}
	return "unknown"
}

// sessionOf reads the client's session id from the headers, falling back to the body's.
func sessionOf(h http.Header, info requestInfo) string {
	for _, k := range []string{"X-Claude-Code-Session-Id", "session-id", "session_id", "x-session-id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return info.SessionID
}

// wantsInjectedUsage reports a streaming chat request that does not ask for usage: the proxy asks
// for it upstream and hides the extra chunk from the client. A cheap byte check keeps the full
// parse off the common path.
func wantsInjectedUsage(body []byte) bool {
	if !bytes.Contains(body, []byte(`"stream"`)) {
		return false
	}
	var b struct {
		Stream        bool            `json:"stream"`
		StreamOptions json.RawMessage `json:"stream_options"`
	}
	if json.Unmarshal(body, &b) != nil || !b.Stream {
		return false
	}
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	if len(b.StreamOptions) > 0 && string(b.StreamOptions) != "null" {
		if json.Unmarshal(b.StreamOptions, &so) == nil && so.IncludeUsage {
			return false
		}
	}
	return true
}

// injectIncludeUsage sets stream_options.include_usage in a chat request body, keeping every
// other field as it was.
func injectIncludeUsage(body []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body, false
	}
	so := map[string]json.RawMessage{}
	if raw, ok := m["stream_options"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &so) != nil {
			return body, false
		}
	}
	so["include_usage"] = json.RawMessage("true")
	raw, _ := json.Marshal(so)
	m["stream_options"] = raw
	out, err := json.Marshal(m)
	if err != nil {
		return body, false
	}
	return out, true
}
