package mcpserver

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool arguments. Schemas are inferred from these types by the SDK: a field without omitempty is
// required. Descriptions are kept to what a name does not say, since every byte of tools/list is
// paid in every conversation that loads the server (TestToolsListSize holds the total under
// maxListBytes).

// argLimits bound the string arguments, in bytes, before any reaches SQL or FTS5, so that every
// call costs bounded work and an argument pasted by mistake gets a clear error rather than a
// search for it. (A maxLength in the schemas would tell the client too, at the cost of tools/list
// bytes in every conversation.)
var argLimits = map[string]int{
	"path":     4096, // PATH_MAX
	"project":  4096,
	"session":  256, // ids are UUIDs or shorter
	"command":  8192,
	"query":    maxQueryBytes,
	"stash_id": 64,
	"in":       16, // outputs or chat
}

type fileArgs struct {
	Path    string `json:"path"`
	Project string `json:"project,omitempty"`
	Session string `json:"session,omitempty"`
}

type historyArgs struct {
	Path    string `json:"path"`
	Project string `json:"project,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

type scopeArgs struct {
	Session string `json:"session,omitempty"`
	Project string `json:"project,omitempty"`
}

type searchArgs struct {
	Query   string `json:"query"`
	Project string `json:"project,omitempty" jsonschema:"* for all"`
	Limit   int    `json:"limit,omitempty"`
	In      string `json:"in,omitempty"`
}

type testArgs struct {
	Project string `json:"project,omitempty"`
	Session string `json:"session,omitempty"`
	Max     int    `json:"max_bytes,omitempty"`
}

type listArgs struct {
	Project string `json:"project,omitempty"`
	Session string `json:"session,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

type detailArgs struct {
	ID  int64 `json:"id"`
	Max int   `json:"max_bytes,omitempty"`
}

type commandArgs struct {
	Command string `json:"command"`
	Project string `json:"project,omitempty"`
	Session string `json:"session,omitempty"`
}

type patternArgs struct {
	Project string `json:"project,omitempty"`
	Days    int    `json:"days,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

type costArgs struct {
	Session string `json:"session,omitempty"`
	Project string `json:"project,omitempty"`
	Days    int    `json:"days,omitempty"`
}

type stashArgs struct {
	StashID string `json:"stash_id"`
	Offset  int    `json:"offset,omitempty"`
	Max     int    `json:"max_bytes,omitempty"`
}

type aroundArgs struct {
	ID      int64  `json:"id,omitempty"`
	Session string `json:"session,omitempty"`
	Project string `json:"project,omitempty"`
	Before  int    `json:"before,omitempty"`
	After   int    `json:"after,omitempty"`
}

// Names of the tools, fixed by the issue that asked for them.
const (
	toolFileFreshness    = "check_file_freshness"
	toolFileHistory      = "get_file_history"
	toolSessionSummary   = "get_session_summary"
	toolSearch           = "search_past_outputs"
	toolLastTest         = "get_last_test_result"
	toolFailures         = "get_failure_context"
	toolActionDetails    = "get_action_details"
	toolCommandFreshness = "check_command_freshness"
	toolRecovery         = "get_session_recovery_context"
	toolPatterns         = "get_project_patterns"
	toolCost             = "get_cost_summary"
	toolRedundancy       = "get_redundancy_report"
	toolAround           = "list_actions_around"
	toolStash            = "retrieve_stashed"
)

func (s *Server) addTools() {
	addTool(s, toolFileFreshness, "Did the file change since agents last read/wrote it? When, which session.", s.fileFreshness)
	addTool(s, toolFileHistory, "Reads, edits and writes of a file, newest first.", s.fileHistory)
	addTool(s, toolSessionSummary, "Session counts by action type, failures, edited files, cost.", s.sessionSummary)
	addTool(s, toolSearch, "Full-text search of past tool outputs, newest first; in=chat: prompts, replies, calls.", s.search)
	addTool(s, toolLastTest, "Last test run (go test, pytest, npm test...): result, output.", s.lastTest)
	addTool(s, toolFailures, "Recent failures: error, output tail, step before, fixed since?", s.failures)
	addTool(s, toolActionDetails, "One action by id: full target, error, output.", s.actionDetails)
	addTool(s, toolCommandFreshness, "Edits since this command last ran, and its result.", s.commandFreshness)
	addTool(s, toolRecovery, "Resume after compaction: last prompts and actions, edited files, open failures.", s.recovery)
	addTool(s, toolPatterns, "Most touched files, frequent and failing commands over days (7).", s.patterns)
	addTool(s, toolCost, "Tokens and USD: a session, or the project over days (7).", s.costSummary)
	addTool(s, toolRedundancy, "Re-reads of unchanged files, reruns with no edit between; bytes wasted.", s.redundancy)
	addTool(s, toolAround, "Session actions before/after an action id (default: latest).", s.around)
	addTool(s, toolStash, "Original of a tool output observer compressed (stash_... id in its marker).", s.stashed)
	addTool(s, toolMemory, "Lessons of past sessions: test/build/failing commands, last goals.", s.projectMemory)
}

// addTool registers a tool whose input schema is inferred from In, without the
// "additionalProperties":false the inference adds: that is 28 bytes per tool in every
// tools/list, so unknown arguments are refused by tool (knownArgs) instead.
func addTool[In any](s *Server, name, desc string, h func(context.Context, *dbh, In) (any, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	schema.AdditionalProperties = nil
	known := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		known = append(known, k)
	}
	sort.Strings(known)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: name, Description: desc, InputSchema: schema}, tool(s, name, known, h))
}
