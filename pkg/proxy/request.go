package proxy

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/observerhq/observer/pkg/jsonscan"
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

func parseRequest(body []byte) requestInfo {
	var info requestInfo
	var cacheKey string
	err := jsonscan.Members(body, func(key, val []byte) bool {
		switch {
		case jsonscan.Key(key, "model"):
			info.Model = jsonscan.Str(val)
		case jsonscan.Key(key, "stream"):
			info.Stream = string(val) == "true"
		case jsonscan.Key(key, "messages"):
			info.Messages = max(jsonscan.Count(val), 0)
		case jsonscan.Key(key, "input"): // Responses: a string or a list of items
			if n := jsonscan.Count(val); n >= 0 {
				info.Messages = n
			} else if len(val) > 0 && val[0] == '"' {
				info.Messages = 1
			}
		case jsonscan.Key(key, "tools"):
			info.Tools = max(jsonscan.Count(val), 0)
		case jsonscan.Key(key, "metadata"):
			jsonscan.Members(val, func(k, v []byte) bool {
				if jsonscan.Key(k, "user_id") {
					info.SessionID = sessionFromUserID(jsonscan.Str(v))
				}
				return true
			})
		case jsonscan.Key(key, "stream_options"):
			jsonscan.Members(val, func(k, v []byte) bool {
				if jsonscan.Key(k, "include_usage") {
					info.IncludeUsage = string(v) == "true"
				}
				return true
			})
		case jsonscan.Key(key, "prompt_cache_key"):
			cacheKey = jsonscan.Str(val) // Codex keys its prompt cache by the conversation id
		}
		return true
	})
	if err != nil {
		return requestInfo{NotJSON: true}
	}
	if info.SessionID == "" {
		info.SessionID = cacheKey
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
		var id string
		if jsonscan.Members([]byte(uid), func(k, v []byte) bool {
			if jsonscan.Key(k, "session_id") {
				id = jsonscan.Str(v)
				return false
			}
			return true
		}) == nil {
			return id
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

// injectIncludeUsage sets stream_options.include_usage in a chat request body that streams without
// asking for usage, keeping every other field as it was: the proxy hides the extra chunk from the
// client.
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
