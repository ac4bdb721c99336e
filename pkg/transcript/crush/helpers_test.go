package crush

import (
	"database/sql"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var (
	//go:embed testdata/schema_initial.sql
	schemaInitial string
	//go:embed testdata/schema_later.sql
	schemaLater string
)

// newDB creates a database with Crush's schema at path (the first migration only when old is
// set), in WAL mode as Crush keeps it, and returns a writer connection to it.
func newDB(tb testing.TB, path string, old bool) *sql.DB {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL&_foreign_keys=1")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	execT(tb, db, schemaInitial)
	if !old {
		execT(tb, db, schemaLater)
	}
	return db
}

func execT(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatalf("%v\n%s", err, q)
	}
}

// Rows as Crush's services write them: CreateSession and CreateTaskSession insert a session with
// the current second as created_at and updated_at; CreateMessage a message with its parts,
// model and provider; UpdateMessage rewrites parts and finished_at (the trigger sets updated_at).
const (
	insSession    = "INSERT INTO sessions (id, parent_session_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"
	insMessage    = "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	insMessageOld = "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
	updMessage    = "UPDATE messages SET parts = ?, finished_at = ? WHERE id = ?"
)

// The parts, with the JSON field names and order of Crush's content types (internal/message).
type (
	pText struct {
		Text   string `json:"text"`
		Hidden bool   `json:"hidden,omitempty"`
	}
	pReasoning struct {
		Thinking         string  `json:"thinking"`
		Signature        string  `json:"signature"`
		ThoughtSignature string  `json:"thought_signature"`
		ToolID           string  `json:"tool_id"`
		ResponsesData    *string `json:"responses_data"`
		StartedAt        int64   `json:"started_at,omitempty"`
		FinishedAt       int64   `json:"finished_at,omitempty"`
	}
	pCall struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		Input            string `json:"input"`
		ProviderExecuted bool   `json:"provider_executed"`
		Finished         bool   `json:"finished"`
	}
	pResult struct {
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
		Content    string `json:"content"`
		Data       string `json:"data"`
		MIMEType   string `json:"mime_type"`
		Metadata   string `json:"metadata"`
		IsError    bool   `json:"is_error"`
	}
	pFinish struct {
		Reason  string `json:"reason"`
		Time    int64  `json:"time"`
		Message string `json:"message,omitempty"`
		Details string `json:"details,omitempty"`
	}
	// pFinishUsage is the finish part of the builds that record a step's usage on it.
	pFinishUsage struct {
		Reason           string  `json:"reason"`
		Time             int64   `json:"time"`
		Message          string  `json:"message,omitempty"`
		Details          string  `json:"details,omitempty"`
		PromptTokens     int64   `json:"prompt_tokens,omitempty"`
		CompletionTokens int64   `json:"completion_tokens,omitempty"`
		Cost             float64 `json:"cost,omitempty"`
	}
	pBinary struct {
		Path     string
		MIMEType string
		Data     []byte
	}
)

// parts serializes content parts as Crush's marshalParts does: [{"type": ..., "data": ...}].
func parts(tb testing.TB, ps ...any) string {
	tb.Helper()
	type wrapper struct {
		Type string `json:"type"`
		Data any    `json:"data"`
	}
	out := make([]wrapper, 0, len(ps))
	for _, p := range ps {
		var typ string
		switch p.(type) {
		case pText:
			typ = "text"
		case pReasoning:
			typ = "reasoning"
		case pCall:
			typ = "tool_call"
		case pResult:
			typ = "tool_result"
		case pFinish, pFinishUsage:
			typ = "finish"
		case pBinary:
			typ = "binary"
		default:
			tb.Fatalf("part %T", p)
		}
		out = append(out, wrapper{typ, p})
	}
	b, err := json.Marshal(out)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// input is a tool call's input as the model streamed it: a JSON string.
func input(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// poll runs one pass of a fresh parser from state, and returns its events and new state.
func poll(tb testing.TB, a *Adapter, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, a, transcript.Source{Client: Client, Path: path, Database: true}, state)
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}
