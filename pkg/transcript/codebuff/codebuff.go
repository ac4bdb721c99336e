// Package codebuff reads the local chats of Codebuff (client "codebuff", npm `codebuff`, formerly
// Manicode; its free build Freebuff writes the same files) into observer events, following the
// transcript contract. Codebuff does not run here (it needs Codebuff's servers), so the reader is
// tested on fixtures written here to the format Codebuff's own source describes
// (CodebuffAI/codebuff: cli/src/utils/config-dir.ts, cli/src/utils/run-state-storage.ts,
// cli/src/project-files.ts, cli/src/types/chat.ts, common/src/tools/constants.ts,
// common/src/types/session-state.ts) and published readers of other tools read it (ccusage's
// apps/codebuff, agentsview's internal/parser/codebuff.go, tokscale's sessions/codebuff.rs and
// freebuff.rs); facts only.
//
// # Files
//
// Codebuff keeps its data in ~/.config/manicode (os.homedir() joined with .config: it does not
// follow XDG_CONFIG_HOME, and the path is the same on macOS); a build of another environment
// (NEXT_PUBLIC_CB_ENVIRONMENT other than "prod") uses ~/.config/manicode-<environment>
// (manicode-dev, manicode-staging). Each chat is a directory
// <root>/projects/<project directory's base name>/chats/<chat id>/, the chat id being the chat's
// start as an ISO time with ':' made '-' ("2026-02-03T09-15-00.000Z"); in it chat-messages.json,
// the chat as the CLI shows it, and run-state.json, the SDK's RunState, both rewritten whole
// (JSON.stringify, indented) after each turn. DefaultRoots lists the three channel directories
// (and manicode-<environment> when NEXT_PUBLIC_CB_ENVIRONMENT names one); CODEBUFF_DATA_DIR, the
// override ccusage reads (Codebuff itself does not), replaces them with one root. Discover lists
// every chat-messages.json as a Document source whose session is the chat id.
//
// chat-messages.json is an array of ChatMessage: {id, variant ("user", "ai", "agent" or "error"),
// content, blocks, timestamp, credits, metadata {runState, bashCwd}, ...}. An AI message's blocks
// are text {content, textType "reasoning" or "text"}, tool {toolCallId, toolName, input, output
// (text), outputRaw}, agent {agentId, agentType, agentName, status ("running", "complete",
// "failed", "cancelled"), initialPrompt, content, blocks (the subagent's own blocks)}, ask-user
// {toolCallId, questions}, plan {content}, and display-only blocks (mode-divider, image, html,
// agent-list, gate-state) that are not read. metadata.runState, stored on the message that ended a
// turn, holds sessionState.fileContext.cwd (the chat's directory) and
// sessionState.mainAgentState.agentType (the root agent: base2, base2-lite, ..., base2-free* in
// Freebuff); the parser takes the directory from there, else from run-state.json beside the chat,
// read once.
//
// # Token accounting
//
// Codebuff keeps no token counts on disk: a ChatMessage has no usage field (the model is picked on
// Codebuff's servers per agent template and is not recorded either), and run-state.json keeps only
// the root agent's creditsUsed and contextTokenCount (the context's size, not usage). What it keeps
// is credits: an AI message's credits are what Codebuff charged for that response (one credit is
// one US cent, as agentsview reads it; 0 in Freebuff). Credits are no token figures and are not
// emitted. Published readers (ccusage, tokscale) also look for a usage object at metadata.usage or
// metadata.codebuff.usage with metadata.model, in camelCase (inputTokens, outputTokens,
// cacheCreationInputTokens, cacheReadInputTokens) or OpenAI's snake case (prompt_tokens,
// completion_tokens, prompt_tokens_details.cached_tokens); where a message has one it is read as
// an Anthropic-style usage when it has cacheCreationInputTokens or cacheReadInputTokens (input net
// of the cache) and as an OpenAI-style one otherwise (prompt_tokens include the cached tokens,
// which are taken out of Input): Input, Output, CacheRead, CacheCreation; reasoning is inside
// output. One token_usage event per such message (id event.ID(client, "usage", chat, message id)),
// priced from the pricing table at the message's time, else at the message's credits ($0.01
// each), "approximate"; "unknown" at cost 0 otherwise. A chat whose messages carry no usage (every
// chat Codebuff's own source writes) yields no token_usage at all: no estimate is made. Codebuff's
// traffic goes to Codebuff's servers: the proxy does not see it.
//
// # Actions and messages
//
// A tool block is an action (id event.ID(client, "action", chat, toolCallId)). Its outcome is read
// from outputRaw, else output when it is JSON (the tool's result, or Codebuff's [{type "json",
// value}] list of them): an errorMessage or error, or a non-zero exitCode, failed; any other
// output succeeded; no output yet, no outcome. Mapping: run_terminal_command run_command (command),
// git_status run_command; read_files read_file (the first of paths), read_outline, read_slices and
// read_image read_file (path); write_file and propose_write_file write_file (path); str_replace,
// propose_str_replace, apply_patch, apply_smart_patch, replace_range, rewrite_symbol,
// edit_transaction and propose_edit_transaction edit_file (path); code_search,
// find_files_matching_content and query_index search_text (pattern, query); find_files, glob,
// list_directory and read_subtree search_files (prompt, pattern, path, paths); web_search
// web_search (query); read_docs web_fetch (libraryTitle and topic); spawn_agents and
// spawn_agent_inline spawn_subagent (the first agent's type and prompt); write_todos, create_plan,
// add_subgoal, update_subgoal and update_plan_status todo_update; ask_user ask_user; end_turn and
// task_completed task_complete; anything else unknown with the raw name in Tool (Codebuff's
// records name no MCP tool, so no mcp_call is read). An agent block is a spawn_subagent action (id
// event.ID(client, "action", chat, agentId), Tool its agentType, target its prompt), succeeded when
// complete, failed when failed or cancelled; a spawn_agents tool block that agent blocks name as
// their spawnToolCallId is not counted a second time. The blocks of an agent block are the
// subagent's: its actions and messages carry AgentID (the agentId) and Sidechain. An ask-user
// block is an ask_user action. A user message's content is a user_prompt action and a user
// message; an error message an api_error action. An AI message's (variant "ai", or "agent") text
// blocks are assistant messages (reasoning ones thinking messages), its tool and agent blocks
// tool_call messages, a plan block an assistant message; an AI message without blocks has its
// content as an assistant message. Message ids event.ID(client, "message", chat, message id,
// block index), blocks numbered depth first; Seq message index × 64 + block index (at most 63).
//
// # Times, sessions and re-reads
//
// A message's timestamp is an ISO time in newer builds and the local time of day ("3:04 PM") in
// others: the latter is placed on the chat's day (the chat id's date, in the machine's time zone),
// moving to the next day when the hour goes back. A message without a readable time takes the one
// before it, else the chat id's time. The session is the chat id; its directory the runState's
// cwd; its project that directory's project root. The first read yields a started session event at
// the chat id's time; Codebuff names no chat (the store titles it with its first prompt).
//
// The document is read whole at each change, and only new or changed events are emitted, under
// the same ids on every read. The State keeps marks (at most 8): after a read, the number of
// leading messages whose events were all reported (every message but the last two, which the
// CLI may still be writing) and a hash of those messages as the document held them. A read
// derives events only from the messages after the newest mark the document still begins with
// (the earlier ones only move the clock), and keeps the fingerprints of the events of the
// messages after its own new mark: those are emitted again only when they changed. So a long
// chat costs each save the decoding of the document and the events of its last messages, and
// the State stays small whatever the chat's length. A chat rewritten before its newest mark (a
// message changed or removed) is read from the newest mark that still holds, else from its
// start: the events between are emitted again under their ids (the writer keeps one of each).
// A document that does not parse (caught mid-write: Codebuff writes it in place) is ErrMalformed
// and keeps the State.
package codebuff

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.Codebuff

// EnvDataDir is the variable ccusage reads for one Codebuff data directory (the equivalent of
// ~/.config/manicode); Codebuff itself does not read it.
const EnvDataDir = "CODEBUFF_DATA_DIR"

// EnvEnvironment is the variable a Codebuff build reads for its environment: any value but
// "prod" makes its data directory ~/.config/manicode-<value>.
const EnvEnvironment = "NEXT_PUBLIC_CB_ENVIRONMENT"

// File names in a chat directory.
const (
	MessagesFile = "chat-messages.json"
	RunStateFile = "run-state.json"
)

// Adapter reads Codebuff's chats.
type Adapter struct {
	// Roots are channel directories (~/.config/manicode): they hold projects/<project>/chats/.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given channel directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Codebuff's data directories (see the package doc): $CODEBUFF_DATA_DIR
// alone when set, else ~/.config/manicode, manicode-dev and manicode-staging, and
// manicode-<environment> when NEXT_PUBLIC_CB_ENVIRONMENT names another one. The paths are the
// same on Linux and macOS.
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv(EnvDataDir)); d != "" {
		return []string{transcript.ExpandHome(d)}
	}
	home, _ := os.UserHomeDir()
	config := filepath.Join(home, ".config")
	roots := []string{filepath.Join(config, "manicode"), filepath.Join(config, "manicode-dev"), filepath.Join(config, "manicode-staging")}
	if env := strings.TrimSpace(os.Getenv(EnvEnvironment)); env != "" && env != "prod" && !strings.ContainsAny(env, `/\`) {
		roots = append(roots, filepath.Join(config, "manicode-"+env))
	}
	return transcript.DedupePaths(roots)
}

// WatchDirs lists the directories a watcher should watch: the roots, their projects directories
// and each project's chats directory (a new chat is a new directory there).
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, root := range a.Roots {
		projects := filepath.Join(root, "projects")
		out = append(out, root, projects)
		ents, _ := transcript.ReadDir(projects)
		for _, e := range ents {
			p := filepath.Join(projects, e.Name())
			if transcript.IsDir(e, p) {
				out = append(out, filepath.Join(p, "chats"))
			}
		}
	}
	return out
}

// Discover lists every chat's chat-messages.json, sorted by path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		projects := filepath.Join(abs, "projects")
		pents, err := transcript.ReadDir(projects)
		if err != nil {
			errs = append(errs, err)
		}
		for _, pe := range pents {
			pdir := filepath.Join(projects, pe.Name())
			if !transcript.IsDir(pe, pdir) {
				continue
			}
			chats := filepath.Join(pdir, "chats")
			cents, err := transcript.ReadDir(chats)
			if err != nil {
				errs = append(errs, err)
			}
			for _, ce := range cents {
				cdir := filepath.Join(chats, ce.Name())
				if !transcript.IsDir(ce, cdir) {
					continue
				}
				path := filepath.Join(cdir, MessagesFile)
				fi, err := os.Stat(path)
				if err != nil || !fi.Mode().IsRegular() || seen[path] {
					continue
				}
				seen[path] = true
				out = append(out, transcript.Source{Client: Client, Path: path, SessionID: ce.Name(), Document: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one chat's chat-messages.json.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
