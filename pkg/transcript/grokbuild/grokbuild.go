// Package grokbuild reads the sessions of xAI's Grok Build (client "grok-build", command `grok`;
// not the unrelated npm @vibe-kit/grok-cli, which keeps no records) into observer events,
// following the transcript contract. Grok Build does not run here (it needs xAI's servers and
// sign-in), so the reader is tested on fixtures written here to the format of Grok Build's own
// published source (xai-org/grok-build, read in a public mirror, farchanjo/grok-build:
// crates/codegen/xai-grok-shell/src/session/storage/{mod.rs,jsonl/mod.rs},
// src/extensions/notification.rs, src/session/acp_session_impl/updates.rs, and the grok_home
// paths module) and cross-checked with the published readers of other tools (ccusage's
// rust/crates/ccusage/src/adapter/grok/*.rs, agentsview's internal/parser/grok.go). Facts only; no
// code of theirs.
//
// # Files
//
// Grok Build keeps everything under $GROK_HOME, else ~/.grok (the same on macOS). A session is a
// directory sessions/<encoded cwd>/<session id>/, where <encoded cwd> is the directory the session
// ran in, URL-encoded ("/" as %2F; a name longer than 255 bytes becomes "<slug>-<hash>" with the
// directory in a .cwd file beside the sessions), holding summary.json (title, model, times: not
// read), signals.json (context totals: not read, see below), chat_history.jsonl (a cache Grok Build
// rebuilds from the updates: not read) and updates.jsonl, the durable append-only record of the
// session and the Source this package reads. A subagent's session lives in
// <session>/subagents/<subagent id>/updates.jsonl and belongs to the parent session (AgentID the
// subagent id).
//
// Each updates.jsonl line is {timestamp (unix seconds), method ("session/update" for the Agent
// Client Protocol's session updates, "_x.ai/session/update" for xAI's), params: {sessionId,
// update: {sessionUpdate, ...}, _meta: {eventId, promptId, agentTimestampMs, ...}}}. Read:
// user_message_chunk, agent_message_chunk and agent_thought_chunk ({content: {type "text",
// text}}; the model in the user chunk's _meta.modelId), tool_call and tool_call_update
// ({toolCallId, title, kind, status pending|in_progress|completed|failed, rawInput, rawOutput,
// content, _meta: {"x.ai/tool": {name, kind, namespace, input}}}), turn_completed ({prompt_id,
// stop_reason, usage}), model_changed and model_auto_switched, auto_compact_completed. Others
// (plans, mode and command updates, hooks, retries, subagent progress) yield nothing.
//
// # Token accounting
//
// A turn's usage is turn_completed.usage, Grok Build's PromptUsage: totals {inputTokens,
// outputTokens, totalTokens, cachedReadTokens, reasoningTokens, modelCalls, apiDurationMs,
// costUsdTicks, costIsPartial} and the same per model in modelUsage {model: {...}}, with numTurns
// and usageIsIncomplete. The source states what includes what:
//
//	inputTokens       the whole prompt of every model call of the turn, cache reads INCLUDED
//	cachedReadTokens  the part of it read from the cache
//	outputTokens      the answer, reasoning INCLUDED (reasoningTokens is a subset of it)
//	totalTokens       inputTokens + outputTokens
//	costUsdTicks      xAI's own price, 1e10 ticks to the dollar; absent when partial or incomplete
//
// so Input = inputTokens - cachedReadTokens, CacheRead = cachedReadTokens, Output = outputTokens,
// Reasoning = reasoningTokens, CacheCreation = 0 (no cache write is reported). One token_usage
// event per turn and model (id event.ID(client, "usage", session, prompt_id, model); MessageID the
// prompt id), from modelUsage when it is there, else from the totals under the session's current
// model; it sums every model call of the turn, so it is one event per turn, not per request. A
// turn's usage already includes the subagents it ran (Grok Build folds a finished subagent's usage
// into the parent's turn), so a subagent's own file yields no token_usage. Priced from the pricing
// table at the turn's time, "approximate"; for a model the table does not price, xAI's own cost
// (ticks / 1e10) when it is there, else cost 0 and "unknown". signals.json's context totals
// (contextTokensUsed, which ccusage reports as a total) are a context size, not usage, and are not
// read. Grok Build talks to xAI's API with its own login: no base-URL setting for the proxy is
// published, so the proxy does not see it.
//
// # Actions and messages
//
// A tool_call is an action (id event.ID(client, "action", session, toolCallId)) and a tool_call
// message; the tool_call_update that completes it (status completed or failed) is the same action
// with its outcome: completed succeeded (a command whose rawOutput has a non-zero exit code
// failed), failed failed; the output is rawOutput's text (stdout and stderr, output, content,
// text), else the content blocks' text. The tool is x.ai/tool's name, else the call's ACP kind
// (execute, read, edit...), else "tool"; never the call's title, text for people that often holds
// the command itself. Mapping: read_file read_file (target_file, path); write write_file
// (file_path); search_replace, apply_patch, hashline_edit, edit edit_file (file_path,
// target_file, path); run_terminal_command, bash, run_command run_command (command); grep
// search_text (pattern " in " path); list_dir, glob search_files (target_directory, pattern);
// web_search web_search (query); web_fetch web_fetch (url); task spawn_subagent (description,
// prompt); todo_write todo_update; ask_user_question ask_user (question); an MCP tool (namespace
// mcp, or mcp__<server>__<tool>) mcp_call; other names by x.ai/tool's kind, else the ACP kind
// (read, write, edit, execute, search, list_dir, web_search, web_fetch, task, plan, ask_user),
// else unknown with the raw name in Tool. A user
// chunk is a user_prompt action and a user message (the text inside <user_query> when wrapped; a
// host-injected turn, _meta.hostTurn, is neither); agent and thought chunks are assistant and
// thinking messages, one a line (Grok Build merges the streamed deltas it writes, so a reply is a
// line or a few). A turn that ended with stop_reason "cancelled" is a turn_aborted action; a
// completed auto-compaction a context_compacted action.
//
// # Times, sessions and re-reads
//
// An event's time is its line's _meta.agentTimestampMs, else its timestamp (seconds). The session
// is the session directory's name (a subagent's file: its parent's, and it yields no session event,
// neither the start nor a model, which would make its file and model the session's; its actions and
// messages carry its model); its directory the decoded <encoded cwd>. Ids come from the session,
// the line's eventId (else its offset), the tool call and prompt ids, and for what a line says of
// its own file (a prompt, an aborted turn, a compaction, a message) the subagent whose file it is,
// so a re-read emits the same ids and a subagent's lines never take its parent's. State keeps the
// session, the directory, the models reported and the calls awaiting their outcome (at most 64: id,
// tool name, kind and namespace; no title, no input). A line that is not UTF-8 or not a JSON object
// is malformed (transcript.ErrMalformed); Grok Build heals a torn last line by starting the next
// record on a new line, so a torn record is one malformed line. Targets, errors, outputs and
// messages are cut to 500 characters, 2 KB, 8 KB and 64 KB.
package grokbuild

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.GrokBuild

// EnvHome moves Grok Build's home directory (Grok Build's own variable).
const EnvHome = "GROK_HOME"

// Adapter reads Grok Build's session updates.
type Adapter struct {
	// Roots are sessions directories ($GROK_HOME/sessions).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Grok Build's sessions directory: $GROK_HOME/sessions, else
// ~/.grok/sessions (the same on macOS).
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv(EnvHome)); d != "" {
		return []string{filepath.Join(transcript.ExpandHome(d), "sessions")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".grok", "sessions")}
}

// WatchDirs lists the sessions directories; the watcher adds the directories that appear below.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

const updatesFile = "updates.jsonl"

// Discover lists every <encoded cwd>/<session>/updates.jsonl and
// <encoded cwd>/<session>/subagents/<id>/updates.jsonl under the roots, by session directory, a
// session's own file before its subagents'. A missing
// root is not an error; a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(path, session, agent string) {
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || seen[path] {
			return
		}
		seen[path] = true
		out = append(out, transcript.Source{Client: Client, Path: path, SessionID: session, AgentID: agent})
	}
	dirs := func(dir string) []string {
		ents, _ := transcript.ReadDir(dir)
		var ds []string
		for _, e := range ents {
			if p := filepath.Join(dir, e.Name()); !strings.HasPrefix(e.Name(), ".") && transcript.IsDir(e, p) {
				ds = append(ds, p)
			}
		}
		return ds
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if _, err := transcript.ReadDir(abs); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, cwdDir := range dirs(abs) {
			for _, sess := range dirs(cwdDir) {
				id := filepath.Base(sess)
				add(filepath.Join(sess, updatesFile), id, "")
				for _, sub := range dirs(filepath.Join(sess, "subagents")) {
					add(filepath.Join(sub, updatesFile), id, filepath.Base(sub))
				}
			}
		}
	}
	// A session's own file first, then its subagents'.
	sort.Slice(out, func(i, j int) bool {
		if ki, kj := sessionKey(out[i]), sessionKey(out[j]); ki != kj {
			return ki < kj
		}
		return out[i].AgentID < out[j].AgentID
	})
	return out, errors.Join(errs...)
}

// sessionKey is the session directory a source lies in.
func sessionKey(s transcript.Source) string {
	dir := filepath.Dir(s.Path)
	if s.AgentID != "" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	return dir
}

// CwdOf is the directory an <encoded cwd> directory names: its URL-decoded name when that is an
// absolute path, else the .cwd file Grok Build writes in it for a long directory, else "".
func CwdOf(dir string) string {
	if d, err := url.PathUnescape(filepath.Base(dir)); err == nil && (strings.HasPrefix(d, "/") || len(d) > 2 && d[1] == ':') {
		return d
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".cwd")); err == nil && len(b) < 4096 {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// NewParser returns a parser for one updates.jsonl.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
