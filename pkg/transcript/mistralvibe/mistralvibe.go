// Package mistralvibe reads the session logs of Mistral Vibe (Mistral AI's terminal coding agent,
// the Python CLI `vibe`, github.com/mistralai/mistral-vibe; client "mistral-vibe") into observer
// events, following the transcript contract. Vibe does not run here (it needs a Mistral account):
// the reader is tested on fixtures written here to the format of Vibe's own source
// (vibe/core/session/session_logger.py and session_loader.py, the older interaction_logger.py,
// vibe/core/types.py, config, paths, agent_loop and tool_executor, tools/builtins/*,
// tools/mcp/tools.py), cross-checked with the published readers of other tools (agentsview's
// internal/parser/vibe.go, tokscale's sessions/vibe.rs; facts only).
//
// # Files
//
// Vibe keeps its state in $VIBE_HOME (a leading ~ expanded), else ~/.vibe, on Linux and macOS
// alike (Python's Path.home(); no XDG or Library path). Its session logs go to the save_dir of
// the [session_logging] table of $VIBE_HOME/config.toml, by default $VIBE_HOME/logs/session.
// Since Vibe 2, a session is a directory <session_prefix>_<YYYYMMDD_HHMMSS>_<first 8 characters
// of the session id>/ (session_prefix "session" by default) holding:
//
//	messages.jsonl  the conversation, appended one message per line (LLMMessage dumps, the system
//	                prompt left out): {role, content, injected, reasoning_content,
//	                reasoning_message_id, tool_calls [{id, index, function {name, arguments}}],
//	                name and tool_call_id (a tool result), message_id}; no times
//	meta.json       the session's metadata, rewritten whole (through a temporary file) after
//	                each save, once the new messages are appended: {session_id,
//	                parent_session_id, start_time, end_time, git_commit, git_branch,
//	                environment {working_directory}, username, title, title_source, stats,
//	                total_messages, tools_available, config (the whole configuration: active_model,
//	                models, mcp_servers, ...), agent_profile, system_prompt}
//
// Vibe 1 wrote one JSON document per session instead, <prefix>_<YYYYMMDD_HHMMSS>_<id[:8]>.json in
// the same directory: {metadata: {the same fields, agent_config for config, times local and without
// a zone}, messages: [... with the system prompt]}. Both are read: a session is a Document source,
// its meta.json (which changes after every save) or its Vibe 1 file; the parser of a meta.json
// reads the messages.jsonl beside it (which Vibe only appends to) from where it stopped, up to
// total_messages (lines appended after the meta.json was written are read at its next change).
// Discover lists every subdirectory of a root holding a meta.json and every *.json file directly in
// a root. Newer versions' "unified" session store (unified/<session>/CURRENT and generations/) is
// not read.
//
// # Token accounting
//
// Vibe keeps no usage per message: meta.json's stats hold the session's running totals,
// {steps, session_prompt_tokens, session_completion_tokens, session_cached_tokens (newer
// versions), last_turn_*, context_tokens, input_price_per_million, output_price_per_million,
// session_cost, ...}, summed over every model call of the session (the compaction summaries
// included). What includes what:
//
//	session_prompt_tokens      every prompt whole, cached tokens included (the API's
//	                           prompt_tokens, OpenAI-compatible)
//	session_cached_tokens      the part of them read from the cache (absent before Vibe kept it:
//	                           then 0, and the cached part is counted as input)
//	session_completion_tokens  the completions, reasoning included
//
// so Input = session_prompt_tokens - session_cached_tokens, CacheRead = session_cached_tokens,
// Output = session_completion_tokens, CacheCreation = Reasoning = 0. They make one token_usage
// event per session, id event.ID(client, "usage", session), at the session's start, whose figures
// grow as the session goes on: the writer keeps the final ones (the same id, more output). It is
// "approximate" and priced from the pricing table for the model the session's configuration names
// (config.active_model, an alias, resolved through config.models to the model's name, e.g.
// devstral-small-latest; the alias itself when the table prices that and not the name); for a model
// the table does not price (Mistral's mistral-vibe-cli-latest), Vibe's own prices in the stats or
// the model's entry (input, cached input and output per million tokens) are used, still
// "approximate", else cost 0 and "unknown". A model switched mid-session is not seen: the session
// is priced as the model configured last. Sessions that continue another: Vibe 2 versions that
// started a new session at each compaction (parent_session_id set, stats carried over) count the
// parent's figures again, so such a session's figures are its own minus the parent's final ones
// (the parent's meta.json found beside it by the id's first eight characters); a fork
// (parent_session_id set too, fresh stats, its messages copies of the parent's first ones, same
// message ids) is counted whole. Which it is is decided by its first message: until the session has
// one, it yields no usage at all (figures that may still hold the parent's, under an id whose
// figures the writer would then keep). A Vibe 1 session continued after a compaction names no
// parent and counts the earlier figures again: that over-count is not corrected.
//
// # Actions and messages
//
// Each tool call of an assistant message is an action (id event.ID(client, "action", message key,
// tool-call id), the message key as below: a provider's call ids may be counters, such as
// functions.bash:0, that repeat in every session) with the tool message answering
// it (tool_call_id): a content wrapped in <tool_error> (a ToolError: bash's non-zero exit, a
// failed edit, an MCP error) or <user_cancellation>, or a denial ("Tool '...' blocked by
// denylist", "... is permanently disabled", "Tool execution not permitted."), failed; anything
// else succeeded (feedback the user typed when rejecting a call reads as success). Output and
// error are the content (the tags removed). Mapping: bash run_command (command); read_file
// read_file (path); write_file write_file (path); search_replace and edit edit_file (file_path,
// path); grep search_text (pattern " in " path); glob and ls search_files (pattern, path);
// web_search web_search (query); web_fetch web_fetch (url); task spawn_subagent (task); todo
// todo_update; ask_user_question ask_user (the first question); a tool named
// "<server>_<tool>" for an MCP server of config.mcp_servers, or whose result is an MCP result
// ("ok:", "server:", "tool:" lines), mcp_call ("<server>/<tool>"); anything else unknown with the
// raw name in Tool. A user message is a user_prompt action and a user message, unless injected
// (context Vibe adds): an injected one with context_boundary "compaction" is a summary message
// and a context_compacted action, other injected ones nothing. An assistant's reasoning_content
// is a thinking message, its content an assistant message, each tool call a tool_call message.
// Messages and prompts are keyed by the message's message_id (Vibe 2; kept by a fork's copies,
// which are then stored once) or by the session and the message's index (Vibe 1): ids
// event.ID(client, "message", key, part), Seq index × 64 + part.
//
// # Times, sessions and re-reads
//
// Messages have no time. The parser places them between the times it reads: the session's
// start_time for the first message, and each meta.json's end_time (the time of the save that
// wrote it) for the last message it covers, the messages between spread evenly. The anchors are
// kept in State, so a message keeps its time on every read; read after the fact, a session's
// messages are spread over its whole length. The session is meta.json's session_id (else the
// directory's or file's name); its directory environment.working_directory, its project
// project.Root of that; the first read yields a started session event (the parent session and
// the git branch with it), each model a session event, a title the user gave (title_source
// "manual") a session event with the title.
//
// Re-reads: only new or changed events are emitted, under the same ids on every read. Vibe
// writes a message once, whole, and a message's events change only while a tool call of it waits
// for its result. So the State keeps Done, the number of first messages whose events were all
// reported (all but the last assistant message when a call of it has no result and the turn went
// no further), with, for a meta.json, the bytes of messages.jsonl they take and the hash of the
// last one's line (for a Vibe 1 document, rewritten whole, a hash of those messages): a read
// yields events only for the messages after them, reading messages.jsonl from that byte on
// (when the file still holds that line there; else from its start), and keeps the fingerprints
// of those events and of the usage, emitted again only when they changed. A save thus costs
// the new messages, not the session, and the State stays small. A document that does not parse
// is ErrMalformed and keeps the State, and a messages.jsonl line that does not parse is passed
// over (counted in Stats.Unknown). Vibe 1's times without a zone are read in
// the local zone. Events carry source observer-watch; targets, errors, outputs and messages are
// scrubbed and cut to 500 characters, 2 KB, 8 KB and 64 KB.
package mistralvibe

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (pkg/client will hold it).
const Client = client.MistralVibe

// EnvHome moves Vibe's home directory (the CLI's own variable).
const EnvHome = "VIBE_HOME"

// File names in a Vibe 2 session directory.
const (
	metaFile     = "meta.json"
	messagesFile = "messages.jsonl"
)

// Adapter reads Vibe's session logs.
type Adapter struct {
	// Roots are session log directories ($VIBE_HOME/logs/session).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table

	dirs dirIndex // the log directories' entries, for finding a continued session's parent
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given session log directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// Home returns Vibe's home directory: $VIBE_HOME, else ~/.vibe (the same on macOS).
func Home() string {
	if d := strings.TrimSpace(os.Getenv(EnvHome)); d != "" {
		d = transcript.ExpandHome(d)
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".vibe")
}

// DefaultRoots returns the session log directories: the save_dir of [session_logging] in
// $VIBE_HOME/config.toml when it names one, and $VIBE_HOME/logs/session.
func DefaultRoots() []string {
	home := Home()
	var roots []string
	if d := configSaveDir(filepath.Join(home, "config.toml")); d != "" {
		roots = append(roots, d)
	}
	return transcript.DedupePaths(append(roots, filepath.Join(home, "logs", "session")))
}

// configSaveDir reads [session_logging] save_dir of Vibe's config.toml: "" when there is none or
// it is relative (Vibe would resolve it against the directory it runs in, unknown here).
func configSaveDir(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 4<<20 {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var c struct {
		SessionLogging struct {
			SaveDir string `toml:"save_dir"`
		} `toml:"session_logging"`
	}
	if toml.Unmarshal(data, &c) != nil {
		return ""
	}
	d := transcript.ExpandHome(strings.TrimSpace(c.SessionLogging.SaveDir))
	if !filepath.IsAbs(d) {
		return ""
	}
	return filepath.Clean(d)
}

// WatchDirs lists the directories a watcher should watch for new sessions: the roots (the watcher
// watches the session directories created below them).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the sessions under every root, sorted by path (Vibe's names start with the
// session's start time, so a session comes before those continuing or forking it): the meta.json
// of every subdirectory holding one, and every Vibe 1 *.json file. Both are Document sources;
// their session id is read by the parser. A missing root is not an error; a root that cannot be
// read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		ents, err := os.ReadDir(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range ents {
			p := filepath.Join(abs, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case transcript.IsDir(e, p):
				m := filepath.Join(p, metaFile)
				if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && !seen[m] {
					seen[m] = true
					out = append(out, transcript.Source{Client: Client, Path: m, Document: true})
				}
			case strings.HasSuffix(e.Name(), ".json") && transcript.IsFile(e, p) && !seen[p]:
				seen[p] = true
				out = append(out, transcript.Source{Client: Client, Path: p, Document: true})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one session (its meta.json or its Vibe 1 file).
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	p, err := newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
	if p != nil {
		p.dirs = &a.dirs
	}
	return p, err
}

// dirIndex lists each log directory once, and again only when it changed (its modification
// time): the sessions' directories by the suffix of their names, so that finding a continued
// session's parent does not list the whole directory for every session (a cold read of a large
// history).
type dirIndex struct {
	mu   sync.Mutex
	dirs map[string]*dirList
}

type dirList struct {
	mod    time.Time
	suffix map[string][]string // "_<8 characters>" → directory names, sorted
}

// candidates returns the directories of dir whose names end in "_"+short, sorted.
func (x *dirIndex) candidates(dir, short string) []string {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	l := x.dirs[dir]
	if l == nil || !l.mod.Equal(fi.ModTime()) {
		names, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		l = &dirList{mod: fi.ModTime(), suffix: map[string][]string{}}
		for _, e := range names {
			n := e.Name()
			if i := strings.LastIndexByte(n, '_'); i >= 0 {
				l.suffix[n[i+1:]] = append(l.suffix[n[i+1:]], filepath.Join(dir, n))
			}
		}
		if x.dirs == nil {
			x.dirs = map[string]*dirList{}
		}
		x.dirs[dir] = l
	}
	return l.suffix[short]
}
