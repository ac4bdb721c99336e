// Package claudecode reads Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl and
// their subagent files) into observer events, following the transcript contract.
//
// # Files
//
// Each root is a "projects" directory (every directory of CLAUDE_CONFIG_DIR, a comma-separated
// list, each with /projects appended; else ~/.claude/projects and ~/.config/claude/projects). Under
// a root, each project directory holds:
//
//   - <session-id>.jsonl: a session. Its session id is the file name. Subagents of Claude Code 1.x
//     live inline in it, on lines marked isSidechain.
//   - agent-<id>.jsonl (Claude Code 2.0): a subagent file beside its session. Its session is the
//     sessionId written on its lines (Discover reads the first line that has one) and its agent id
//     the file name (or the lines' agentId).
//   - <session-id>/subagents/agent-<id>.jsonl (Claude Code 2.1): a subagent file under its session's
//     directory; the session is the directory name. An agent-<id>.meta.json beside it
//     ({"agentType":"Explore"}) is read for an agentId; the agent type has no field in the schema.
//
// All three belong to the parent session: Source.SessionID is the parent's id, and every event of
// the file carries it. Events of a session file carry the file's session id even on lines a resume
// copied from an earlier session (their ids are the earlier session's ids, so they are stored
// once, under whichever file was stored first); a source without a session id falls back to the
// lines' sessionId.
//
// # Token accounting
//
// Claude Code writes one line per content block of a model message, each repeating the message's
// id, requestId and usage; early lines carry a partial output_tokens. Every assistant line with
// usage and a message id yields a token_usage event whose id is event.ID("claude-code", "usage",
// message.id): the same on every line of the message and in every file (a resumed session copies
// messages into a new file; a sidechain replay reuses its parent's message ids). The writer keeps,
// per id, the figures of the event with the largest output, so a message counts once with its final
// output. To keep the volume down a parser emits a line only when its output grew since the last
// line of the same message in this file. The buckets are Anthropic's, which already exclude cache
// tokens from input:
//
//	Input = input_tokens
//	CacheRead = cache_read_input_tokens
//	CacheCreation = cache_creation_input_tokens (5m + 1h writes; the breakdown's sum when the total is 0)
//	CacheCreation1h = cache_creation.ephemeral_1h_input_tokens (at most CacheCreation)
//	Output = output_tokens (thinking included; Reasoning stays 0, the transcript does not split it)
//
// Lines of the "<synthetic>" model (Claude Code's own placeholders: API errors, "No response
// requested.") and lines without a message id carry no usage. The cost comes from the pricing table
// at the line's time. Reliability is "unreliable" (Claude Code logs streaming placeholders: the
// output of a message whose final line was never written is too low), or "unknown" with cost 0 when
// the table has no price for the model.
//
// # Actions
//
// A tool_use block (and a server_tool_use block: the API's own web search and fetch) is an action
// with id event.ID("claude-code", "action", tool_use_id), its normalized type, the raw tool name in
// Tool, a target, the message and request ids, the model, the agent id and the sidechain flag.
// Mapping: Read read_file; Write write_file; Edit, MultiEdit, NotebookEdit edit_file; Bash,
// BashOutput, KillShell, KillBash, and 2.1's TaskOutput and TaskStop (background shells)
// run_command; Grep search_text; Glob, LS search_files; WebSearch web_search; WebFetch web_fetch;
// mcp__* mcp_call; Task, Agent spawn_subagent; TodoWrite, TodoRead, and 2.1's TaskCreate,
// TaskUpdate, TaskList, TaskGet (the task list that replaced TodoWrite) todo_update;
// AskUserQuestion ask_user; anything else unknown. Targets: a file or notebook path, relative to the
// project root when inside it; the command of Bash (500 characters at most); the pattern of Grep
// and Glob with " in <path>" when a path is given; the URL of WebFetch; the query of WebSearch;
// "<subagent_type>: <description>" of Task; the path of LS, the shell id of BashOutput and
// KillShell, the skill of Skill, the first question of AskUserQuestion; for other tools the first
// of file_path, path, url, query, command, pattern found in the input.
//
// A tool_result block (in a later user line) is an action event with the SAME id as its call,
// carrying Success (is_error absent or false), Error (the result text on failure, without its
// <tool_use_error> tag, 2 KB at most), Output (the result text, failures included, 8 KB at most;
// an image is "[image]"), OutputSize (the full size of the result, image data included) and
// DurationMs (the toolUseResult's durationMs, totalDurationMs or durationSeconds when the line
// holds this one result, else the result's time minus the call's). The parser keeps the calls
// still waiting for their results (a bounded list, in State, the target a transcript.Memo) and
// copies the call's type, tool, target, message, request and model into the result; when it no
// longer knows the call (or, in another process, its target) the result lacks them and the
// writer, which merges the two events by id, keeps the call's. A
// web_search_tool_result block pairs with its server_tool_use the same way.
//
// User lines: typed text is a user_prompt (id event.ID("claude-code", "action", line uuid), the
// text as target). A slash command (<command-name>) is a prompt whose target is "/name args"; a
// shell escape (<bash-input>) one whose target is "!command". Not prompts: lines holding
// tool_result blocks; isMeta lines (the local-command caveat, a slash command's expanded
// instructions, skill bodies); the isCompactSummary / isVisibleInTranscriptOnly summary written
// after a compaction (a summary message); sidechain lines (a subagent's task prompt, already the
// target of its spawn_subagent call, and a user message of the subagent); command output (<local-command-stdout>, <bash-stdout>, ...) and
// <system-reminder> text. "[Request interrupted by user...]" is a turn_aborted action.
//
// System lines: subtype api_error (each retry Claude Code logs) is an api_error action with the
// error text; compact_boundary and microcompact_boundary are context_compacted actions with the
// trigger ("auto", "manual") as target. An assistant line flagged isApiErrorMessage (the final
// failure, written as a "<synthetic>" message) is an api_error action too. Other system subtypes
// (turn_duration, stop_hook_summary, informational, local_command, ...), summary,
// file-history-snapshot, queue-operation, progress, attachment and the other bookkeeping records
// yield nothing; a record type or system subtype this package does not know is counted in
// Stats.Unknown and yields nothing. A line that is not UTF-8 or not a JSON object, or whose known
// record does not decode, is malformed (transcript.ErrMalformed).
//
// # Messages
//
// The conversation is a message event per message (event.Message), with the line's time and Seq =
// the line's byte offset in its file × 64 + the block's index in the line, so the messages of one
// time keep their file order and a re-read or a resumed parser numbers them alike:
//
//   - user: every line that is a user_prompt above, with the same text unclipped (a slash command
//     as "/name args", a shell escape as "!command", an image alone as "[image]"); and a subagent's
//     task prompt (the first user line of a sidechain), on the sidechain. MessageID is the line's
//     uuid.
//   - assistant: each text block of an assistant line; thinking: each thinking block whose text is
//     not empty (a block that holds only its signature, and redacted_thinking, are skipped).
//     MessageID is message.id, shared by the lines of one model message; Model is its model.
//   - tool_call: each tool_use and server_tool_use block with an id, in its place: Tool the raw
//     tool name, ToolUseID the call's, Text the call action's target. The result stays with the
//     action (its output), joined by ToolUseID.
//   - summary: the isCompactSummary user line written after a compaction, its text.
//
// Not messages: tool_result lines, isMeta lines (the local-command caveat, a slash command's
// expanded instructions), isVisibleInTranscriptOnly lines that are no compaction summary, command
// output and <system-reminder> text, "[Request interrupted by user...]" markers (turn_aborted
// actions), the "<synthetic>" model's lines and isApiErrorMessage lines (Claude Code's own
// placeholders and API errors, which are api_error actions), empty text, system lines, and
// summary records (the title of a conversation in the /resume list, not a compaction summary).
//
// A message's id is event.ID("claude-code", "message", line uuid (or its content hash),
// block index), and a tool call's event.ID("claude-code", "message", "tool_use", tool_use_id), the
// same in every file that copies the line (a resumed session, a replay), so a block written twice
// is stored once. AgentID and Sidechain are the line's, as for actions: a subagent's messages,
// inline or in its own file, belong to the parent session. The text goes through scrub.String and
// is kept to 64 KiB.
//
// Every target, error and output goes through scrub.String. Events carry the line's time (UTC; the
// last time seen when a line has none), source observer-watch, client claude-code, the session as
// above, and the project: project.Root of the line's cwd (the last cwd seen when a line has none),
// except that the project stays the same while the cwd only moves inside it (Claude Code logs the
// shell's cwd, which follows the agent's `cd` into subdirectories and freshly generated nested
// repositories). File targets are relative to that project root.
package claudecode

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Claude Code events carry.
const Client = client.ClaudeCode

// Adapter finds and reads Claude Code transcripts under its roots.
type Adapter struct {
	// Roots are "projects" directories: ~/.claude/projects, $CLAUDE_CONFIG_DIR/projects.
	Roots []string
	// Prices prices token usage; nil means pricing.Default(). Use Table.WithAliases for gateway
	// model names.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a usage
	// line is priced, so a long-lived parser follows price changes (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given projects directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// DefaultRoots returns the projects directory of every directory in CLAUDE_CONFIG_DIR (one path or
// a comma-separated list) or, when it is unset, ~/.claude/projects and ~/.config/claude/projects
// (the XDG location newer Claude Code versions use). A root that does not exist is harmless.
func DefaultRoots() []string {
	var roots []string
	if env := os.Getenv("CLAUDE_CONFIG_DIR"); strings.TrimSpace(env) != "" {
		for dir := range strings.SplitSeq(env, ",") {
			if dir = strings.TrimSpace(dir); dir != "" {
				roots = append(roots, filepath.Join(transcript.ExpandHome(dir), "projects"))
			}
		}
	}
	if len(roots) == 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			return []string{filepath.Join(".claude", "projects")}
		}
		roots = []string{filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".config", "claude", "projects")}
	}
	return transcript.DedupePaths(roots)
}

// Client returns "claude-code".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories to watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the session files and subagent files under every root, sorted by path. A missing
// root is not an error; a root that cannot be read is reported after the others are listed, and a
// project directory that cannot be read is skipped.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seenRoot := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if seenRoot[real] {
				continue
			}
			seenRoot[real] = true
		}
		projects, err := os.ReadDir(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, pd := range projects {
			dir := filepath.Join(abs, pd.Name())
			if !transcript.IsDir(pd, dir) {
				continue
			}
			out = append(out, discoverProject(dir)...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// discoverProject lists one project directory: sessions, 2.0 subagent files beside them, and 2.1
// subagent files under <session>/subagents.
func discoverProject(dir string) []transcript.Source {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []transcript.Source
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(name, ".jsonl") && transcript.IsFile(e, path):
			stem := strings.TrimSuffix(name, ".jsonl")
			if agent, ok := strings.CutPrefix(stem, "agent-"); ok {
				sid, lineAgent := peekIDs(path)
				if agent == "" {
					agent = lineAgent
				}
				out = append(out, transcript.Source{Client: Client, Path: path, SessionID: sid, AgentID: agent})
				continue
			}
			out = append(out, transcript.Source{Client: Client, Path: path, SessionID: stem})
		case transcript.IsDir(e, path):
			out = append(out, discoverSubagents(filepath.Join(path, "subagents"), name)...)
		}
	}
	return out
}

// discoverSubagents lists the 2.1 layout's <session>/subagents/*.jsonl, all of session.
func discoverSubagents(dir, session string) []transcript.Source {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []transcript.Source
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		if !strings.HasSuffix(name, ".jsonl") || !transcript.IsFile(e, path) {
			continue
		}
		stem := strings.TrimSuffix(name, ".jsonl")
		agent := strings.TrimPrefix(stem, "agent-")
		if m := readMeta(filepath.Join(dir, stem+".meta.json")); m.AgentID != "" {
			agent = m.AgentID
		}
		if agent == "" {
			_, agent = peekIDs(path)
		}
		out = append(out, transcript.Source{Client: Client, Path: path, SessionID: session, AgentID: agent})
	}
	return out
}

// agentMeta is what a 2.1 subagent's .meta.json may hold.
type agentMeta struct {
	AgentID   string `json:"agentId"`
	AgentType string `json:"agentType"`
}

func readMeta(path string) agentMeta {
	var m agentMeta
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return m
	}
	_ = json.Unmarshal(data, &m) // a damaged meta file only loses what it would have added
	return m
}

// Limits on what Discover reads of a subagent file to find its session.
const (
	peekBytes = 8 << 20
	peekLines = 32
)

// peekIDs returns the first sessionId and agentId written on a file's first lines.
func peekIDs(path string) (session, agent string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, peekBytes), 64<<10)
	for range peekLines {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ids struct {
				SessionID any `json:"sessionId"`
				AgentID   any `json:"agentId"`
			}
			if json.Unmarshal(line, &ids) == nil {
				if s, ok := ids.SessionID.(string); ok && session == "" {
					session = s
				}
				if s, ok := ids.AgentID.(string); ok && agent == "" {
					agent = s
				}
				if session != "" && agent != "" {
					return session, agent
				}
			}
		}
		if err != nil {
			break
		}
	}
	return session, agent
}

// NewParser returns a parser for one transcript file, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}

func (a *Adapter) newParser(src transcript.Source, state []byte) (*Parser, error) {
	prices := pricing.Source(a.Prices, a.CurrentPrices)
	p := &Parser{src: src, prices: prices}
	if p.src.Client == "" {
		p.src.Client = Client
	}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &p.st); err != nil {
			return nil, errors.New("claudecode: bad parser state for " + src.Path + ": " + err.Error())
		}
		p.recallTitle()
	}
	return p, nil
}
