package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Usage is the token count the server returns in every model response. The server translates it
// into each provider's own accounting (see the package doc): Anthropic reports input, cache reads
// and cache writes as separate buckets, OpenAI counts cached tokens inside the input and reasoning
// tokens inside the output.
type Usage struct {
	Input        int64 // uncached input tokens
	Output       int64 // output tokens, reasoning included
	CacheRead    int64 // input tokens read from the prompt cache
	CacheWrite5m int64 // input tokens written to the 5-minute cache (Anthropic only)
	CacheWrite1h int64 // input tokens written to the 1-hour cache (Anthropic only)
	Reasoning    int64 // the part of Output spent on reasoning (OpenAI only)
}

// Config configures a Server. The zero value is usable: it returns zero usage, echoes the
// request's model and logs nothing.
type Config struct {
	Usage Usage
	// Model, when set, is the model every response names instead of the request's model.
	Model string
	// LogPath, when set, is a file to which every request is appended as one JSON line (a Request).
	LogPath string
	// Latency is a delay before the first byte of every model response (messages, responses,
	// chat completions); probes and errors are answered at once.
	Latency time.Duration
	// Logger receives errors writing LogPath. Nil means silent.
	Logger *slog.Logger
	// Command is the command line the fake model asks a shell tool to run ("ls" when empty).
	Command string
	// ReadPath, when set, is the file the fake model asks Claude Code's Read tool to read (an
	// absolute path), instead of a Bash command.
	ReadPath string
	// BodyDir, when set, is a directory where the body of every POST is saved as it arrived,
	// one file per request named by its order and path (000001-v1-messages.json).
	BodyDir string
	// Limits, when set, are the plan usage figures model responses carry from the start (see
	// PlanLimits); Server.SetLimits changes them while the server runs.
	Limits *PlanLimits
}

// Providers, as recorded in Request.Provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderGoogle    = "google"
)

// Actions, as recorded in Request.Action.
const (
	ActionToolCall  = "tool_call"  // the response asked the client to call one tool
	ActionFinalText = "final_text" // the response was a plain text answer
	ActionError     = "error"      // the response had a 4xx status
	ActionInfo      = "info"       // a probe, a model list or a token count
)

// Request is the record of one request the server answered. It holds no credential: for
// x-api-key and Authorization it records only whether they were present.
type Request struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	// Path is the request path with its query; values of query parameters that commonly carry
	// keys (key, api_key, access_token) are replaced by "REDACTED".
	Path string `json:"path"`
	// Headers holds the headers that identify a client and its session, by canonical name
	// (X-Claude-Code-Session-Id, Session-Id, Anthropic-Version, User-Agent, ...: see
	// recordedHeaders). No other header is kept.
	Headers map[string]string `json:"headers,omitempty"`
	// HasAPIKey reports an x-api-key or x-goog-api-key header, or a key query parameter.
	HasAPIKey        bool `json:"has_api_key"`
	HasAuthorization bool `json:"has_authorization"`
	// SessionID is the client's session id: the X-Claude-Code-Session-Id, session-id or
	// x-session-id header, else the session_id inside an Anthropic body's metadata.user_id.
	SessionID string `json:"session_id,omitempty"`
	// Provider is ProviderAnthropic, ProviderOpenAI or ProviderGoogle; empty for a probe that does
	// not say.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"` // the model named in the response
	Stream   bool   `json:"stream"`
	// ToolResult reports whether the request's conversation held the result of a tool call.
	ToolResult bool `json:"tool_result,omitempty"`
	// ResponseID is the message, response or completion id the server returned.
	ResponseID string `json:"response_id,omitempty"`
	// Usage maps each usage field put in the response JSON, by its dotted JSON path inside the
	// usage object (for example "cache_creation.ephemeral_5m_input_tokens"), to its final value.
	// It is nil when the response carried no usage.
	Usage  map[string]int64 `json:"usage,omitempty"`
	Status int              `json:"status"`
	Action string           `json:"action"`
	// Tool is the name of the tool the response called, for ActionToolCall.
	Tool string `json:"tool,omitempty"`
}

// recordedHeaders are the only headers a Request keeps. Credentials must never be added here.
var recordedHeaders = []string{
	"X-Claude-Code-Session-Id", // Claude Code
	"X-App",                    // Claude Code: "cli"
	"Anthropic-Version",
	"Anthropic-Beta",
	"Session-Id", // Codex
	"Thread-Id",  // Codex
	"X-Codex-Turn-Metadata",
	"X-Codex-Window-Id",
	"Originator", // Codex: "codex_exec"
	"User-Agent",
	"X-Goog-Api-Client", // the Google GenAI SDK (Gemini CLI)
	"X-Session-Id",      // OpenCode, Kilo
	"X-Title",           // OpenRouter-style app name (Cline, Kilo, Crush)
	"Http-Referer",
	"X-Initiator",
	"Origin", // browser marks: observer-proxy refuses a request that carries either
	"Sec-Fetch-Site",
}

// redactedQuery are query parameters whose values are not recorded.
var redactedQuery = []string{"key", "api_key", "access_token"}

// maxBody bounds the request bodies the server reads.
const maxBody = 64 << 20

// Server is the fake API, an http.Handler. It is safe for concurrent use.
type Server struct {
	cfg    Config
	seq    atomic.Int64
	bodies atomic.Int64

	mu       sync.Mutex
	requests []Request

	fileMu sync.Mutex // serializes appends to cfg.LogPath

	limits atomic.Pointer[PlanLimits] // nil: no plan limit headers
}

// New returns a Server answering with cfg.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg}
	s.SetLimits(cfg.Limits)
	return s
}

// Requests returns a copy of the record of every request answered so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// ServeHTTP answers one request and records it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &Request{
		Time:             time.Now().UTC(),
		Method:           r.Method,
		Path:             redactURI(r.URL),
		HasAPIKey:        r.Header.Get("X-Api-Key") != "" || r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key"),
		HasAuthorization: r.Header.Get("Authorization") != "",
	}
	for _, h := range recordedHeaders {
		if v := r.Header.Get(h); v != "" {
			if rec.Headers == nil {
				rec.Headers = map[string]string{}
			}
			rec.Headers[h] = v
		}
	}
	rec.SessionID = r.Header.Get("X-Claude-Code-Session-Id")
	if rec.SessionID == "" {
		rec.SessionID = r.Header.Get("Session-Id")
	}
	if rec.SessionID == "" {
		rec.SessionID = r.Header.Get("X-Session-Id")
	}
	if s.cfg.BodyDir != "" && r.Method == http.MethodPost {
		s.saveBody(r)
	}
	sw := &statusWriter{ResponseWriter: w}
	s.route(sw, r, rec)
	rec.Status = sw.status
	if rec.Status == 0 {
		rec.Status = http.StatusOK
	}
	if rec.Status >= 400 {
		rec.Action = ActionError
	}
	s.record(*rec)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, rec *Request) {
	p := r.URL.Path
	switch {
	case p == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		rec.Provider, rec.Action = providerOf(r), ActionInfo
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			io.WriteString(w, "observer fake API\n")
		}
	case p == "/v1/messages" && r.Method == http.MethodPost:
		rec.Provider = ProviderAnthropic
		s.anthropicMessages(w, r, rec)
	case p == "/v1/messages/count_tokens" && r.Method == http.MethodPost:
		rec.Provider = ProviderAnthropic
		s.anthropicCountTokens(w, r, rec)
	case p == "/v1/responses" && r.Method == http.MethodGet && isWebSocket(r):
		// Codex tries a WebSocket first and falls back to HTTP on 426.
		rec.Provider = ProviderOpenAI
		openAIError(w, http.StatusUpgradeRequired, "WebSocket is not supported by the observer fake API; use HTTP")
	case p == "/v1/responses" && r.Method == http.MethodPost:
		rec.Provider = ProviderOpenAI
		s.openAIResponses(w, r, rec)
	case p == "/v1/chat/completions" && r.Method == http.MethodPost:
		rec.Provider = ProviderOpenAI
		s.openAIChat(w, r, rec)
	case r.Method == http.MethodPost && isGemini(p):
		rec.Provider = ProviderGoogle
		model, action, ok := geminiRoute(p)
		if !ok {
			geminiError(w, http.StatusNotFound, fmt.Sprintf("%s %s is not an endpoint of the observer fake API", r.Method, p))
			return
		}
		s.gemini(w, r, rec, model, action)
	case (p == "/v1beta/models" || p == "/v1/models" && r.Header.Get("X-Goog-Api-Key") != "") && r.Method == http.MethodGet:
		rec.Provider, rec.Action = ProviderGoogle, ActionInfo
		s.geminiModels(w)
	case p == "/v1/models" && r.Method == http.MethodGet:
		rec.Provider, rec.Action = providerOf(r), ActionInfo
		if rec.Provider == "" {
			rec.Provider = ProviderOpenAI
		}
		s.models(w, rec.Provider)
	default:
		rec.Provider = providerOf(r)
		msg := fmt.Sprintf("%s %s is not an endpoint of the observer fake API", r.Method, p)
		switch rec.Provider {
		case ProviderAnthropic:
			anthropicError(w, http.StatusNotFound, "not_found_error", msg)
		case ProviderGoogle:
			geminiError(w, http.StatusNotFound, msg)
		default:
			rec.Provider = ProviderOpenAI
			openAIError(w, http.StatusNotFound, msg)
		}
	}
}

// providerOf guesses which provider a request is meant for when its path does not say: Google by
// a /v1beta path or x-goog-api-key, Anthropic by its headers, OpenAI by a bearer token, else ""
// (Claude Code's HEAD / probe sends neither).
func providerOf(r *http.Request) string {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1beta/") || r.Header.Get("X-Goog-Api-Key") != "":
		return ProviderGoogle
	case strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Header.Get("Anthropic-Version") != "" ||
		r.Header.Get("X-Api-Key") != "":
		return ProviderAnthropic
	case r.Header.Get("Authorization") != "":
		return ProviderOpenAI
	}
	return ""
}

// isGemini reports a Gemini API model path: /v1beta/models/... or /v1/models/...:action.
func isGemini(path string) bool {
	return strings.HasPrefix(path, "/v1beta/models/") || strings.HasPrefix(path, "/v1/models/") && strings.Contains(path, ":")
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// nextID returns prefix followed by a number unique within the server.
func (s *Server) nextID(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, s.seq.Add(1))
}

// model is the model a response names.
func (s *Server) model(requested, fallback string) string {
	switch {
	case s.cfg.Model != "":
		return s.cfg.Model
	case requested != "":
		return requested
	}
	return fallback
}

// wait delays the first byte by cfg.Latency. It reports false when the client went away.
func (s *Server) wait(r *http.Request) bool {
	if s.cfg.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.cfg.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// readJSON decodes the request body into v. It reports false, having answered 400 in the
// provider's error shape, when the body is not a JSON object.
func readJSON(w http.ResponseWriter, r *http.Request, provider string, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err == nil {
		return true
	}
	msg := "the request body is not a valid JSON request: " + err.Error()
	switch provider {
	case ProviderAnthropic:
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", msg)
	case ProviderGoogle:
		geminiError(w, http.StatusBadRequest, msg)
	default:
		openAIError(w, http.StatusBadRequest, msg)
	}
	return false
}

// command is the command line a tool call runs.
func (s *Server) command() string {
	if s.cfg.Command == "" {
		return "ls"
	}
	return s.cfg.Command
}

// saveBody keeps a copy of a request body in BodyDir and leaves the body readable.
func (s *Server) saveBody(r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return
	}
	n := s.bodies.Add(1)
	name := fmt.Sprintf("%06d-%s.json", n, strings.ReplaceAll(strings.Trim(r.URL.Path, "/"), "/", "-"))
	if err := os.WriteFile(filepath.Join(s.cfg.BodyDir, name), body, 0o600); err != nil && s.cfg.Logger != nil {
		s.cfg.Logger.Error("fakeapi: save request body", "dir", s.cfg.BodyDir, "err", err)
	}
}

func (s *Server) record(rec Request) {
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	if s.cfg.LogPath == "" {
		return
	}
	line, err := json.Marshal(rec)
	if err == nil {
		s.fileMu.Lock()
		err = appendLine(s.cfg.LogPath, line)
		s.fileMu.Unlock()
	}
	if err != nil && s.cfg.Logger != nil {
		s.cfg.Logger.Error("fakeapi: append to request log", "path", s.cfg.LogPath, "err", err)
	}
}

// appendLine appends line and a newline to the file at path, creating it 0600. A nil line only
// creates the file.
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if line != nil {
		_, err = f.Write(append(line, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func redactURI(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	q := u.Query()
	for _, k := range redactedQuery {
		if q.Has(k) {
			q.Set(k, "REDACTED")
		}
	}
	return u.Path + "?" + q.Encode()
}

// statusWriter remembers the status code and passes flushes through.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event and flushes it. An empty event writes a data-only event.
func sse(w http.ResponseWriter, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // only maps and slices built here are marshaled
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, obj{"type": "error", "error": obj{"type": typ, "message": msg}})
}

func openAIError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, obj{"error": obj{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

// obj keeps the response literals short.
type obj = map[string]any

func (s *Server) models(w http.ResponseWriter, provider string) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if provider == ProviderAnthropic {
		ids := []string{"claude-opus-4-8", "claude-sonnet-4-5", "claude-haiku-4-5"}
		data := make([]obj, len(ids))
		for i, id := range ids {
			data[i] = obj{"type": "model", "id": id, "display_name": id + " (fake)", "created_at": created.Format(time.RFC3339)}
		}
		writeJSON(w, http.StatusOK, obj{"data": data, "has_more": false, "first_id": ids[0], "last_id": ids[len(ids)-1]})
		return
	}
	ids := []string{"gpt-5.2-codex", "gpt-5.2", "gpt-4.1-mini"}
	data := make([]obj, len(ids))
	for i, id := range ids {
		data[i] = obj{"id": id, "object": "model", "created": created.Unix(), "owned_by": "observer-fake"}
	}
	writeJSON(w, http.StatusOK, obj{"object": "list", "data": data})
}

// RoundTrip finds, among the requests to path, a call of tool followed by a final text answering a
// conversation that holds the tool's result: the proof that a client completed a tool round trip.
func RoundTrip(reqs []Request, path, tool string) (call, final Request, err error) {
	i := slices.IndexFunc(reqs, func(r Request) bool {
		return strings.HasPrefix(r.Path, path) && r.Action == ActionToolCall && r.Tool == tool
	})
	if i < 0 {
		return call, final, fmt.Errorf("no %s call among %v", tool, Summary(reqs))
	}
	j := slices.IndexFunc(reqs[i+1:], func(r Request) bool {
		return strings.HasPrefix(r.Path, path) && r.Action == ActionFinalText && r.ToolResult
	})
	if j < 0 {
		return call, final, fmt.Errorf("no final text after the tool result among %v", Summary(reqs))
	}
	return reqs[i], reqs[i+1+j], nil
}

// Summary lists requests one line each, for error messages.
func Summary(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+r.Path+" "+r.Action+" "+r.Tool)
	}
	return out
}
