// Package iflow reads the sessions of iFlow CLI (iflow-ai/iflow-cli, Alibaba's terminal agent,
// a fork of Gemini CLI; client "iflow-cli") into observer events, following the transcript
// contract. iFlow CLI shut down on 2026-04-17 (its users were told to move to Qoder): its
// sessions are a user's history, read as such. Its source is not public (the npm bundle is); the
// format is learned from the published readers of other tools (agentsview's
// internal/parser/iflow.go; Engram's iFlow format reference, which audited live stores and the
// official bundle @iflow-ai/iflow-cli 0.5.19; notes of tools that read ~/.iflow/projects),
// facts only. The reader is tested on fixtures written here to that format.
//
// # Not Gemini CLI's format
//
// Although iFlow CLI is a Gemini CLI fork, its sessions are not Gemini CLI's chat recordings
// (tmp/<project>/chats/session-*.json, read by package gemini): they are Claude Code-shaped
// JSON lines in a Qwen-style layout, with Gemini CLI's tool names and tool-result payloads.
// Package gemini's reader cannot read them, so this package reads them, with the reader of that
// shape it shares with package qoder (package ccshape); it reuses package gemini's tool taxonomy
// (gemini.ToolType), which iFlow's tool names follow.
//
// # Files
//
// ~/.iflow/projects/<cwd with every "/" as "->/session-<uuid>.jsonl, JSON lines appended (the
// same on Linux and macOS; iFlow honours no environment variable for the directory, so
// observer's own OBSERVER_IFLOW_DIRS, a list of projects directories separated like PATH,
// replaces the default). There is no chats/ directory. A line is {uuid, parentUuid, sessionId
// ("session-<uuid>", the file's name), timestamp (RFC 3339), type ("user" or "assistant"),
// isSidechain, userType, message, and on user records cwd, gitBranch, version and, with a tool
// result, toolUseResult {toolName, status, timestamp}}. A user message's content is a string
// (a prompt) or blocks: text, image, tool_result {tool_use_id, content, is_error} whose content
// is Gemini CLI's {callId, responseParts: {functionResponse: {id, name, response: {output,
// error}}}, resultDisplay} or {functionResponse: ...}. An assistant message is {id, type,
// role, model, content: text, thinking and tool_use {id, name, input} blocks, stop_reason,
// usage}. A record marked isMeta is iFlow's own context (no prompt), one marked
// isCompactSummary a compaction. Any other record type is counted in Stats.Unknown; a line
// that is not a JSON object is malformed. A subagent's file (a "task" tool call) is a
// session-*.jsonl of its own whose records name the parent's sessionId (agentsview's reading):
// its events belong to the parent's session, with the file's own id as AgentID.
//
// # Token accounting
//
// An assistant record's message.usage is {input_tokens, output_tokens}, Anthropic's names, as
// iFlow fills them from its provider's response (it defaults to zeros: many records carry 0 and
// 0, which yield no token_usage at all). Its providers are OpenAI-compatible (GLM, Qwen3-Coder,
// Kimi K2, DeepSeek), whose prompt count includes cached tokens, and iFlow writes no cache
// figure in the records seen: input_tokens is then the whole prompt and output_tokens the
// answer, reasoning included. The bundle knows cache_read_input_tokens and
// cache_creation_input_tokens; where a record has them they are read with Anthropic's meaning
// (input net of the cache). So Input = input_tokens, CacheRead = cache_read_input_tokens,
// CacheCreation = cache_creation_input_tokens, Output = output_tokens. One token_usage per
// message, id event.ID("iflow-cli", "usage", message.id, else the record's uuid), so a message
// written again (agentsview reports iFlow writing an assistant turn as several snapshot
// records within a second, repeating its tool calls) counts once; the writer keeps the figures
// with the largest output. It is priced from the pricing table at the record's time
// ("approximate"; "unknown" at cost 0 for a model the table does not price). iFlow's traffic
// goes to its platform (apis.iflow.cn) or the OpenAI-compatible base URL the user set: the
// proxy sees it only when that base URL points at it.
//
// # Actions and messages
//
// A tool_use block is an action, id event.ID("iflow-cli", "action", session, tool_use id),
// first without an outcome; its tool_result emits the same id again with the outcome: failed
// when is_error, when the function response carries an error, or when the record's
// toolUseResult status is not "success"; else succeeded. Output is the function response's
// output, else the resultDisplay (8 KB); Error the response's error. DurationMs is the
// result's time minus the call's. Mapping: Gemini CLI's names (gemini.ToolType: read_file,
// read_many_files read_file; write_file write_file; replace edit_file; run_shell_command
// run_command; search_file_content search_text; glob, list_directory search_files; web_fetch
// web_fetch; web_search, google_web_search web_search; ...), and iFlow's task
// spawn_subagent (subagent_type: description), todo_read and todo_write todo_update,
// multi_edit edit_file, mcp__<server>__<tool> mcp_call; anything else unknown with the raw
// name in Tool. File targets are relative to the project.
//
// A user record's typed text is a user_prompt action, id event.ID("iflow-cli", "prompt",
// uuid), and a user message (not tool results, isMeta records, nor injected context; a
// subagent's user records, its task, are user messages but no prompts). An
// assistant's text blocks are assistant messages, thinking blocks thinking messages (iFlow
// records none in the files seen), each tool_use a tool_call message. Message ids
// event.ID("iflow-cli", "message", uuid, block index), a tool call's by its tool use id; Seq
// the line's number times 64 plus the block's index.
//
// # Times, sessions and re-reads
//
// Events carry their record's time. The session is the records' sessionId (with its
// "session-" prefix: the file's name), else the file's name; its cwd and git branch the first
// user record's; the project project.Root of the cwd. A main file yields a started session
// event at its first record and a session event for each new model. iFlow keeps no title in
// the session. Ids depend only on the records, so a re-read (State lost) stores nothing twice.
// Targets, errors and outputs are scrubbed and cut to 500 characters, 2 KB and 8 KB, message
// text to 64 KB.
package iflow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.IFlowCLI

// EnvDirs is observer's own override of the projects directories (a list, like PATH).
const EnvDirs = "OBSERVER_IFLOW_DIRS"

// Adapter reads iFlow CLI's sessions.
type Adapter struct {
	// Roots are projects directories (~/.iflow/projects).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given projects directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "iflow-cli".
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns iFlow CLI's projects directories: those of OBSERVER_IFLOW_DIRS when set,
// else ~/.iflow/projects (the same on Linux and macOS).
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".iflow", "projects")}
}

// WatchDirs lists the directories a watcher should watch: the roots (new project directories
// appear there, sessions in them).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the sessions (<root>/<project>/session-*.jsonl), sorted by path. A missing
// root is not an error; a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return ccshape.Discover(a.Roots, sessions)
}

// sessions lists one project directory's session files. A subagent's file is one of them: only
// its records tell it apart.
func sessions(dir string) []transcript.Source {
	entries, _ := transcript.ReadDir(dir)
	var out []transcript.Source
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		stem, ok := strings.CutSuffix(name, ".jsonl")
		if ok && strings.HasPrefix(stem, "session-") && transcript.IsFile(e, path) {
			out = append(out, transcript.Source{Client: Client, Path: path, SessionID: stem})
		}
	}
	return out
}

// NewParser returns a parser for one session file, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	p, err := ccshape.New(&config, src, state, pricing.Source(a.Prices, a.CurrentPrices))
	if err != nil {
		return nil, fmt.Errorf("iflow parser state for %s: %w", src.Path, err)
	}
	return p, nil
}
