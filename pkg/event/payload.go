package event

import "time"

// ActionType is the normalized taxonomy every client's tools map into. The raw tool name is kept
// beside it in Action.Tool.
type ActionType string

// The normalized action types.
const (
	ActionReadFile         ActionType = "read_file"
	ActionWriteFile        ActionType = "write_file"
	ActionEditFile         ActionType = "edit_file"
	ActionRunCommand       ActionType = "run_command"
	ActionSearchText       ActionType = "search_text"
	ActionSearchFiles      ActionType = "search_files"
	ActionWebSearch        ActionType = "web_search"
	ActionWebFetch         ActionType = "web_fetch"
	ActionMCPCall          ActionType = "mcp_call"
	ActionSpawnSubagent    ActionType = "spawn_subagent"
	ActionTodoUpdate       ActionType = "todo_update"
	ActionAskUser          ActionType = "ask_user"
	ActionTaskComplete     ActionType = "task_complete"
	ActionUserPrompt       ActionType = "user_prompt"
	ActionAPIError         ActionType = "api_error"
	ActionTurnAborted      ActionType = "turn_aborted"
	ActionContextCompacted ActionType = "context_compacted"
	ActionSystemPrompt     ActionType = "system_prompt"
	ActionUnknown          ActionType = "unknown"
)

// ActionTypes lists the taxonomy in a stable order.
var ActionTypes = []ActionType{
	ActionReadFile, ActionWriteFile, ActionEditFile, ActionRunCommand, ActionSearchText,
	ActionSearchFiles, ActionWebSearch, ActionWebFetch, ActionMCPCall, ActionSpawnSubagent,
	ActionTodoUpdate, ActionAskUser, ActionTaskComplete, ActionUserPrompt, ActionAPIError,
	ActionTurnAborted, ActionContextCompacted, ActionSystemPrompt, ActionUnknown,
}

// Valid reports whether t is part of the taxonomy.
func (t ActionType) Valid() bool {
	for _, known := range ActionTypes {
		if t == known {
			return true
		}
	}
	return false
}

// Reliability says how far a token or cost figure can be trusted.
type Reliability string

// Reliability levels, from the capture path that produced a figure.
const (
	ReliabilityAccurate    Reliability = "accurate"    // the API's own usage envelope, seen by the proxy
	ReliabilityApproximate Reliability = "approximate" // a client's transcript that logs final usage
	ReliabilityUnreliable  Reliability = "unreliable"  // a transcript known to log placeholders
	ReliabilityUnknown     Reliability = "unknown"     // no price for the model
)

// Action is one thing an agent did or was told: a tool call with its result, a prompt, an error.
type Action struct {
	Type       ActionType `json:"type"`
	Tool       string     `json:"tool,omitempty"`   // raw tool name as the client called it
	Target     string     `json:"target,omitempty"` // file path (relative to the project), command, pattern, URL or query
	ToolUseID  string     `json:"tool_use_id,omitempty"`
	MessageID  string     `json:"message_id,omitempty"`
	RequestID  string     `json:"request_id,omitempty"`
	AgentID    string     `json:"agent_id,omitempty"` // subagent that acted; empty for the main agent
	Sidechain  bool       `json:"sidechain,omitempty"`
	Success    *bool      `json:"success,omitempty"` // nil while the result is not known
	Error      string     `json:"error,omitempty"`
	DurationMs int64      `json:"duration_ms,omitempty"`
	InputHash  string     `json:"input_hash,omitempty"`
	Output     string     `json:"output,omitempty"` // tool output, scrubbed and truncated by the producer
	OutputSize int64      `json:"output_size,omitempty"`
	Model      string     `json:"model,omitempty"`
	Transcript string     `json:"transcript,omitempty"` // source file, for tracing back
	// Freshness classifies a read_file result seen live by observer-watch: one of the Fresh*
	// constants, empty when not classified (history, a failed read, a target outside any project).
	Freshness string `json:"freshness,omitempty"`
	// ContentHash is the sha256 (hex) of the file a live read_file, edit_file or write_file result
	// left on disk, taken when observer-watch saw the result; ContentSize is its size in bytes.
	ContentHash string `json:"content_hash,omitempty"`
	ContentSize int64  `json:"content_size,omitempty"`
}

// Freshness classes of a read_file result (Action.Freshness). Package internal/freshness states
// how each is decided.
const (
	FreshnessFresh            = "fresh"
	FreshnessStale            = "stale"
	FreshnessChangedByAgent   = "changed_by_agent"
	FreshnessChangedElsewhere = "changed_elsewhere"
	FreshnessMissing          = "missing"
)

// Tokens are the four billing buckets plus the breakdowns shown beside them. Input is net: it
// excludes cache reads and cache writes. Reasoning is already inside Output.
type Tokens struct {
	Input           int64 `json:"input_tokens"`
	Output          int64 `json:"output_tokens"`
	CacheRead       int64 `json:"cache_read_tokens"`
	CacheCreation   int64 `json:"cache_creation_tokens"`    // 5m and 1h writes together
	CacheCreation1h int64 `json:"cache_creation_1h_tokens"` // the 1h part of CacheCreation
	Reasoning       int64 `json:"reasoning_tokens"`         // part of Output
}

// TokenUsage is the usage of one model message, as a transcript or the proxy reported it.
type TokenUsage struct {
	Tokens
	MessageID   string      `json:"message_id,omitempty"`
	RequestID   string      `json:"request_id,omitempty"`
	Model       string      `json:"model,omitempty"`
	AgentID     string      `json:"agent_id,omitempty"`
	CostUSD     float64     `json:"cost_usd"`
	Reliability Reliability `json:"reliability,omitempty"`
	Origin      string      `json:"origin,omitempty"` // "proxy" or "transcript"
}

// APITurn is one request the proxy forwarded to a model API.
type APITurn struct {
	Tokens
	Provider     string      `json:"provider"` // anthropic, openai, google
	Endpoint     string      `json:"endpoint"` // request path without the query
	Model        string      `json:"model,omitempty"`
	MessageID    string      `json:"message_id,omitempty"` // upstream message or response id
	RequestID    string      `json:"request_id,omitempty"` // upstream request id header
	Stream       bool        `json:"stream,omitempty"`
	Status       int         `json:"status"`
	ErrorClass   string      `json:"error_class,omitempty"`
	ErrorMessage string      `json:"error_message,omitempty"`
	StopReason   string      `json:"stop_reason,omitempty"`
	LatencyMs    float64     `json:"latency_ms"`
	TTFBMs       float64     `json:"ttfb_ms,omitempty"`
	CostUSD      float64     `json:"cost_usd"`
	Reliability  Reliability `json:"reliability,omitempty"`
	Messages     int         `json:"messages,omitempty"`
	Tools        int         `json:"tools,omitempty"`
	BytesIn      int64       `json:"bytes_in"`
	BytesOut     int64       `json:"bytes_out"`
	Partial      bool        `json:"partial,omitempty"` // the stream ended before its final event
	// Compression is set when the proxy compressed the request.
	Compression *TurnCompression `json:"compression,omitempty"`
	// Origin is the capture path that saw the turn: "" for the proxy, "otlp" for the client's own
	// telemetry (counted only where the proxy did not see the same request).
	Origin string `json:"origin,omitempty"`
}

// Compression is one decision the proxy's request compression made on one request: a tool
// output compressed by one content compressor, a run of messages dropped, or the tool
// descriptions shortened. Token figures are estimates (a quarter of the bytes), never counts.
type Compression struct {
	Mechanism    string  `json:"mechanism"` // json, code, logs, text, diff, html, drop, tool_trim
	Mode         string  `json:"mode,omitempty"`
	Model        string  `json:"model,omitempty"`
	Provider     string  `json:"provider,omitempty"`
	TurnID       string  `json:"turn_id,omitempty"`       // the api_turn event of the request
	MessageIndex int     `json:"message_index,omitempty"` // the message (first of a dropped run)
	Count        int     `json:"count,omitempty"`         // messages dropped, descriptions trimmed
	Score        float64 `json:"score,omitempty"`         // a drop's importance score
	BytesBefore  int64   `json:"bytes_before"`
	BytesAfter   int64   `json:"bytes_after"`
	TokensBefore int64   `json:"tokens_before,omitempty"`
	TokensAfter  int64   `json:"tokens_after,omitempty"`
	// SavedUSD is what the tokens saved cost at the model's input price (0 when unpriced).
	SavedUSD float64 `json:"saved_usd,omitempty"`
	// StashID names the original output, kept in Original (scrubbed) when stashing is on.
	StashID  string `json:"stash_id,omitempty"`
	Original string `json:"original,omitempty"`
}

// TurnCompression sums what compression did to one request.
type TurnCompression struct {
	Mode        string `json:"mode"`
	Decisions   int    `json:"decisions"`
	BytesBefore int64  `json:"bytes_before"` // the body as the client sent it
	BytesAfter  int64  `json:"bytes_after"`  // the body sent upstream
	// TokensSaved is an estimate: a quarter of the bytes saved.
	TokensSaved int64 `json:"tokens_saved"`
}

// Session lifecycle states.
const (
	SessionStarted   = "started"
	SessionActive    = "active"
	SessionIdle      = "idle"
	SessionFinalized = "finalized"
)

// Session reports a change in a session's lifecycle.
type Session struct {
	State           string    `json:"state"`
	Cwd             string    `json:"cwd,omitempty"`
	TranscriptPath  string    `json:"transcript_path,omitempty"`
	ParentSessionID string    `json:"parent_session_id,omitempty"`
	Epoch           int       `json:"epoch,omitempty"` // increments at each compaction
	Model           string    `json:"model,omitempty"`
	GitBranch       string    `json:"git_branch,omitempty"`
	StartedAt       time.Time `json:"started_at,omitzero"`
	// Title is the session's title as the client names it (a summary record, a title it
	// generated or the user gave); empty when this event does not say. The store falls back to
	// the first prompt.
	Title string `json:"title,omitempty"`
	// TitleByUser is true when the user gave Title (a rename), false when the client made it.
	TitleByUser bool `json:"title_by_user,omitempty"`
}

// Hook is one lifecycle hook call a client made (SessionStart, PreToolUse, Stop, ...).
type Hook struct {
	Event          string `json:"event"` // the client's hook event name
	Cwd            string `json:"cwd,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	ToolName       string `json:"tool_name,omitempty"`
	ToolUseID      string `json:"tool_use_id,omitempty"`
	Matcher        string `json:"matcher,omitempty"` // SessionStart source, PreCompact trigger, Notification type
	PayloadBytes   int64  `json:"payload_bytes"`
}

// MCPCall is one tools/call that passed through observer-mcp wrap.
type MCPCall struct {
	Server        string  `json:"server"`
	Tool          string  `json:"tool"`
	RequestID     string  `json:"request_id,omitempty"`
	InputBytes    int64   `json:"input_bytes"`
	OutputBytes   int64   `json:"output_bytes"`
	InputHash     string  `json:"input_hash,omitempty"`
	OutputHash    string  `json:"output_hash,omitempty"`
	DurationMs    float64 `json:"duration_ms"`
	Error         string  `json:"error,omitempty"`
	TokenEstimate int64   `json:"token_estimate,omitempty"`
}
