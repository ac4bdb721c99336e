package proxy

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// Provider names.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Google    = "google" // the Gemini API
)

// route says where a request goes and whether it is a model call to meter.
type route struct {
	provider string
	endpoint string // the API endpoint, without query and version prefix quirks
	metered  bool
	// model is the model a Gemini API path names (models/{model}:{method}); Gemini request bodies
	// carry none.
	model string
	// geminiStream is a streamGenerateContent call: its response is SSE with ?alt=sse, else one
	// JSON array whose elements arrive as they are made.
	geminiStream bool
}

// Gemini API methods the proxy meters, after models/{model}: in the path.
var geminiMethods = map[string]bool{"generateContent": true, "streamGenerateContent": true, "countTokens": true}

// geminiPath splits a Gemini API model path, /v1beta/models/{model}:{method} or /v1/..., into
// its model and method.
func geminiPath(path string) (model, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/v1/models/")
	}
	if !ok {
		return "", "", false
	}
	model, method, ok = strings.Cut(rest, ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	return model, method, true
}

// googleRequest reports a request meant for the Gemini API by its path (/v1beta) or its key
// (x-goog-api-key, or key in the query).
func googleRequest(r *http.Request, path string) bool {
	return strings.HasPrefix(path, "/v1beta/") || path == "/v1beta" || r.Header.Get("X-Goog-Api-Key") != "" ||
		r.URL.Query().Has("key")
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

// routeFor picks the upstream: the metered paths by their provider, Gemini API model paths
// (/v1beta/models/{model}:{method} and /v1/models/...) and any request with a Google API key to
// Google, any other path by its headers (an Anthropic client sends anthropic-version or
// x-api-key), else OpenAI.
func routeFor(r *http.Request) route {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if p, ok := meteredPaths[path]; ok && r.Method == http.MethodPost {
		return route{provider: p, endpoint: path, metered: true}
	}
	// An OpenAI fine-tuned model's id has colons too (GET /v1/models/ft:gpt-4o:org::id): a /v1 path
	// is Gemini's only with one of its methods or a Google key.
	if model, method, ok := geminiPath(path); ok && (geminiMethods[method] || googleRequest(r, path)) {
		return route{provider: Google, endpoint: path, model: model, metered: r.Method == http.MethodPost && geminiMethods[method],
			geminiStream: method == "streamGenerateContent"}
	}
	if googleRequest(r, path) {
		return route{provider: Google, endpoint: path}
	}
	if r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != "" || strings.HasPrefix(r.Header.Get("User-Agent"), "claude-cli") {
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

// parseGeminiRequest reads a Gemini API request body: its contents are the messages, the function
// declarations of its tools the tools. The model and whether it streams are in the path.
func parseGeminiRequest(body []byte, rt route) requestInfo {
	info := requestInfo{Model: rt.model, Stream: rt.geminiStream}
	err := jsonscan.Members(body, func(key, val []byte) bool {
		switch {
		case jsonscan.Key(key, "contents"):
			info.Messages = max(jsonscan.Count(val), 0)
		case jsonscan.Key(key, "tools"):
			jsonscan.Elements(val, func(tool []byte) bool {
				jsonscan.Members(tool, func(k, v []byte) bool {
					if jsonscan.Key(k, "functionDeclarations") || jsonscan.Key(k, "function_declarations") {
						info.Tools += max(jsonscan.Count(v), 0)
					}
					return true
				})
				return true
			})
		}
		return true
	})
	if err != nil {
		info.NotJSON = true
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

// clientOf names the AI client from its headers: the first whose marks they carry (pkg/client's
// registry says each client's marks, as each sent them to the fake API), else "unknown". A client
// without a mark of its own (Pi, OpenClaw: only the OpenAI SDK's) stays unknown here; the writer
// names such a turn when the client's record of the same response id links it to its session
// (see pkg/store/write.go).
func clientOf(h http.Header) string {
	if c := client.FromHeaders(h); c != "" {
		return c
	}
	return "unknown"
}

// sessionHeaders are the headers a session id comes in, in canonical form (Header.Get makes no
// copy of a key already canonical).
var sessionHeaders = []string{"X-Claude-Code-Session-Id", "Session-Id", "Session_id", "X-Session-Id"}

// sessionOf reads the client's session id from the headers (Claude Code's, Codex's session-id,
// OpenCode's and Kilo's X-Session-Id), falling back to the body's. Gemini CLI, Qwen Code, Cline and
// Pi send none. Kilo 7.7.7 sends its session-title request as X-Session-Id title-ses_...: that turn
// belongs to session ses_....
func sessionOf(h http.Header, info requestInfo) string {
	for _, k := range sessionHeaders {
		if v := h.Get(k); v != "" {
			if rest, ok := strings.CutPrefix(v, "title-"); ok && strings.HasPrefix(rest, "ses_") {
				return rest
			}
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
