// Package qoder reads the local sessions of Qoder CLI (qodercli, Alibaba's Qoder agent in the
// terminal; client "qoder") into observer events, following the transcript contract. Qoder is
// closed source: the format is learned from the published readers of other tools, which agree
// that Qoder CLI writes Claude Code's transcript format under its own directory (agentsview's
// internal/parser/qoder.go, which parses it with its Claude Code parser; claude-replay's
// agents/qoder discover.rs and its fixtures; herdr's qodercli module and constants.js; a
// qodercli skill's notes on credits), facts only. The reader is tested on fixtures written here
// to that format.
//
// # Files
//
// <config>/projects/<cwd with every "/" (and "_") as "->/<session id>.jsonl, JSON lines appended,
// where <config> is $QODER_CONFIG_DIR (the override herdr's module names; no published Qoder
// source confirms it), else ~/.qoder, the same on Linux and macOS; Qoder CLI CN keeps
// ~/.qoder-cn (read too). A subagent's transcript is <config>/projects/<cwd>/<session id>/
// subagents/agent-<agent id>.jsonl: it belongs to the session of its directory, and its events
// carry the subagent's id as AgentID. observer's own OBSERVER_QODER_DIRS (a list of projects
// directories, separated like PATH) replaces the defaults. Qoder IDE (its editor, whose chats
// live in its application data, and ~/.qoderwork for QoderWork) keeps other formats, not read
// here: no published source establishes them well enough.
//
// A line is one Claude Code record: {type, uuid, parentUuid, sessionId, timestamp (RFC 3339),
// cwd, gitBranch, version, isSidechain, agentId, message, toolUseResult}. Types read: "user"
// (message.content a string, or blocks: text, image, tool_result {tool_use_id, content,
// is_error}), "assistant" (message {id, model, content: text, thinking, tool_use {id, name,
// input}, usage}), "runtime-config" (Qoder's first line: {model, reasoningEffort,
// contextWindow, timestamp in unix ms}), "ai-title" {aiTitle} and "custom-title" {customTitle}
// (titles Qoder made and the user gave); "summary", "system", "last-prompt",
// "file-history-snapshot", "queue-operation" and "progress" are known and yield nothing. Any
// other type is counted in Stats.Unknown; a line that is not a JSON object is malformed. The
// reader of that shape is package ccshape's, shared with package iflow.
//
// # Token accounting
//
// An assistant record's message.usage has Anthropic's names: input_tokens (the prompt net of
// the cache), cache_read_input_tokens, cache_creation_input_tokens, output_tokens (the answer,
// thinking included), and Qoder's credits (its own billing unit, not tokens and not dollars:
// not read). So Input = input_tokens, CacheRead = cache_read_input_tokens, CacheCreation =
// cache_creation_input_tokens, Output = output_tokens. The published readers report that Qoder
// writes 0 in every token field and bills in credits, with message.model a tier alias
// ("efficient", "performance", "ultimate", "auto"): such a record has no token figures and
// yields no token_usage at all (no estimate from credits). Where a record does carry figures,
// it is one token_usage per message, id event.ID("qoder", "usage", message.id, else the
// record's uuid): Claude Code writes one line per content block with the same message id and
// usage, the early ones with a partial output, so the writer keeps the figures with the
// largest output. It is priced from the pricing table at the record's time, "approximate", or
// "unknown" at cost 0 for a model the table does not price (every tier alias). Qoder's traffic
// goes to Qoder's servers: the proxy does not see it.
//
// # Actions and messages
//
// A tool_use block is an action, id event.ID("qoder", "action", session, tool_use id), first
// without an outcome; its tool_result (a later user record) emits the same id again with the
// outcome: is_error true failed (Error the result's text), else succeeded; Output is the
// result's text (8 KB); DurationMs is the result's time minus the call's. The call waits for
// its result in the parser's State (its target as a transcript.Memo). Mapping (Claude Code's
// names, which Qoder keeps): Read read_file (file_path); Write write_file; Edit, MultiEdit,
// NotebookEdit edit_file; Bash, PowerShell and run_command (the name Qoder's IDE agent uses)
// run_command (command); Grep search_text (pattern " in " path); Glob, LS search_files
// (pattern, path); WebFetch web_fetch (url); WebSearch web_search (query); Task, Agent
// spawn_subagent (subagent_type: description); TodoWrite
// todo_update; AskUserQuestion ask_user; mcp__<server>__<tool> mcp_call ("server/tool");
// anything else unknown with the raw name in Tool. File targets are relative to the project.
//
// A user record's typed text (a string, or its text blocks; "[image]" for an image alone) is a
// user_prompt action, id event.ID("qoder", "prompt", uuid), and a user message; not the tool
// results, isMeta records, nor the context Claude Code-style clients inject (<command-...>,
// <local-command-...>, <system-reminder>, "Caveat:"). A subagent's user records (its task) are
// user messages but no prompts. A record marked isCompactSummary is a context_compacted
// action and a summary message. An assistant's text blocks are assistant messages, its thinking
// blocks thinking messages, each tool_use a tool_call message. Message ids
// event.ID("qoder", "message", uuid, block index), a tool call's event.ID("qoder", "message",
// "tool_use", session, tool_use id) (so a record written again with the same calls adds none);
// Seq the line's number times 64 plus the block's index.
//
// # Times, sessions and re-reads
//
// Events carry their record's time (the last one seen for a record without one). The session
// is the file name's (a subagent's: its directory's); its cwd and git branch the first record's
// that has them; the project project.Root of the cwd. A main file yields a started session event
// at its first record's time, emitted with the first record that names the cwd and carrying the
// model the runtime-config line named; then a session event for each new model and a title
// event for each new title (TitleByUser for custom-title).
// Ids depend only on the records, so a re-read (State lost) stores nothing twice. Targets,
// errors and outputs are scrubbed and cut to 500 characters, 2 KB and 8 KB, message text to
// 64 KB.
package qoder

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
const Client = client.Qoder

// EnvDirs is observer's own override of the projects directories (a list, like PATH).
const EnvDirs = "OBSERVER_QODER_DIRS"

// Adapter reads Qoder CLI's sessions.
type Adapter struct {
	// Roots are projects directories (~/.qoder/projects).
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

// Client returns "qoder".
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Qoder CLI's projects directories: those of OBSERVER_QODER_DIRS when set,
// else $QODER_CONFIG_DIR/projects when set, else ~/.qoder/projects and ~/.qoder-cn/projects
// (the same on Linux and macOS).
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	if d := strings.TrimSpace(os.Getenv("QODER_CONFIG_DIR")); d != "" {
		return []string{filepath.Join(transcript.ExpandHome(d), "projects")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".qoder", "projects"), filepath.Join(home, ".qoder-cn", "projects")}
}

// WatchDirs lists the directories a watcher should watch: the roots (new project directories
// appear there, sessions in them).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the sessions (<root>/<project>/<id>.jsonl) and subagent transcripts
// (<root>/<project>/<id>/subagents/agent-*.jsonl), sorted by path. A missing root is not an
// error; a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return ccshape.Discover(a.Roots, discoverProject)
}

// discoverProject lists one project directory: its sessions, and the subagents of each session
// directory (one listing per session that has one).
func discoverProject(dir string) []transcript.Source {
	entries, _ := transcript.ReadDir(dir)
	var out []transcript.Source
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(name, ".jsonl") && transcript.IsFile(e, path):
			stem := strings.TrimSuffix(name, ".jsonl")
			if stem == "" || strings.HasPrefix(stem, "agent-") {
				continue
			}
			out = append(out, transcript.Source{Client: Client, Path: path, SessionID: stem})
		case transcript.IsDir(e, path):
			subDir := filepath.Join(path, "subagents")
			subs, _ := transcript.ReadDir(subDir)
			for _, s := range subs {
				sp := filepath.Join(subDir, s.Name())
				stem, ok := strings.CutSuffix(s.Name(), ".jsonl")
				if !ok || !transcript.IsFile(s, sp) {
					continue
				}
				agent := strings.TrimPrefix(stem, "agent-")
				out = append(out, transcript.Source{Client: Client, Path: sp, SessionID: name, AgentID: transcript.FirstNonEmpty(agent, stem)})
			}
		}
	}
	return out
}

// NewParser returns a parser for one transcript, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	p, err := ccshape.New(&config, src, state, pricing.Source(a.Prices, a.CurrentPrices))
	if err != nil {
		return nil, fmt.Errorf("qoder parser state for %s: %w", src.Path, err)
	}
	return p, nil
}
