// Package droid reads Factory's Droid CLI (client "droid", the `droid` command of the npm package
// @factory/cli) into observer events, following the transcript contract. It was learned from the
// files Droid 0.225.2 wrote here, run offline against observer's fake API (droid exec with a
// custom model, FACTORY_AIRGAP_ENABLED=1), and checked against the layout the published readers of
// other tools describe (ccusage's Droid loader reads the same log lines; agentsview and others
// read the sessions).
//
// # Files
//
// Droid keeps everything under its home, ~/.factory on Linux and macOS alike, or
// $FACTORY_HOME_OVERRIDE/.factory when that is set:
//
//	sessions/<cwd>/<session id>.jsonl        the conversation, appended line by line; <cwd> is the
//	                                         directory droid ran in with every "/" as "-"
//	sessions/<cwd>/<session id>.settings.json the session's settings and its token totals (read
//	                                         by no one here: see below)
//	logs/droid-log-single.log                Droid's own log, shared by every session, appended,
//	                                         rotated into further droid-log-*.log fragments
//	                                         ($FACTORY_LOG_FILE names another file)
//
// A session file's lines: {type: "session_start", id, title, cwd}, then {type: "message", id,
// parentId, timestamp, message: {role, content: [blocks], openaiMessageId?, modelId?}}, and
// {type: "agent_turn_outcome", turnId, reason}. Blocks are Anthropic's: text, thinking, tool_use
// {id, name, input} in assistant messages, tool_result {tool_use_id, is_error, content} in user
// messages. A user message whose id starts with "context-", or whose visibility is "llm_only", is
// Droid's own context (system reminders), not the user's prompt; nor is a text block that starts
// with "<system-reminder>".
//
// # Token accounting
//
// The session file holds no token figures, and its .settings.json only the session's running
// totals (tokenUsage) and the last call's: no turn can be told from them. Droid's log writes one
// line per model call, when its answer ends:
//
//	[2026-12-06T18:00:40.301Z] INFO: [Agent] Streaming result | Context: {"inputTokens":321,
//	  "cacheReadInputTokens":22,"totalInputTokens":343,"reasoningTokens":0,"outputTokens":9,
//	  "cachedTokensWritten":11,"reason":"stop","tags":{"sessionId":"...","modelId":"..."}}
//
// What includes what (seen through the fake API, Anthropic and OpenAI Chat Completions providers):
//
//	inputTokens           the prompt net of the cache: Anthropic's input_tokens; OpenAI's
//	                      prompt_tokens minus the cached ones (totalInputTokens is it plus
//	                      cacheReadInputTokens)
//	cacheReadInputTokens  the part read from the cache
//	cachedTokensWritten   the part written to the cache (not inside totalInputTokens)
//	outputTokens          the answer, reasoning included (reasoningTokens is a part of it)
//
// so Input = inputTokens, CacheRead = cacheReadInputTokens, CacheCreation = cachedTokensWritten,
// Output = outputTokens, Reasoning = reasoningTokens. One token_usage event per such line, id
// event.ID("droid", "usage", session, time, figures), which is also its MessageID (the line names
// no response): a fragment the log rotation renamed is read again under its new name and yields
// the same ids. The model: tags.modelId, which is
// "custom:<id>" for a model of the user's own (BYOK) settings; such a call's model is the one the
// "[LLM] sendMessage" line before it named for the session (the API's model name), else the
// "model" of that custom model in ~/.factory/settings.json. Priced from the pricing table at the
// line's time, "approximate" ("unknown" at cost 0 for a model the table does not price). The
// project: the cwd of the session's file.
//
// Through observer's proxy, Droid's requests carry its User-Agent (factory-cli/<version>) and no
// session: the proxy names the turns droid, and the writer joins each to its log line by model,
// time and figures (the join of session-less turns, pkg/store), so a turn is counted once, at the
// proxy's figures, under the session the log gives it.
//
// # Actions and messages
//
// A tool_use is an action (id event.ID("droid", "action", session, tool_use id)), emitted when it
// is read and again, with its outcome, when its tool_result is. Mapping: Read read_file
// (file_path); Create write_file; Edit, MultiEdit, ApplyPatch edit_file; Execute run_command
// (command); LS, Glob search_files; Grep search_text; FetchUrl web_fetch; WebSearch web_search;
// Task spawn_subagent; TodoWrite todo_update; AskUser ask_user; names with "___" or starting
// mcp__ mcp_call; anything else unknown with the raw name. The user's text is a user_prompt action
// and a user message; assistant text and thinking are messages; each tool_use a tool_call
// message.
package droid

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.Droid

// Adapter reads Droid's sessions and log.
type Adapter struct {
	// Homes are Droid home directories (~/.factory).
	Homes []string
	// Logs are further log files ($FACTORY_LOG_FILE).
	Logs []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given Droid homes.
func New(homes []string) *Adapter { return &Adapter{Homes: homes} }

// NewDefault returns an adapter on Droid's default locations (DefaultHomes, $FACTORY_LOG_FILE).
func NewDefault() *Adapter {
	a := New(DefaultHomes())
	if f := strings.TrimSpace(os.Getenv("FACTORY_LOG_FILE")); f != "" {
		a.Logs = []string{transcript.ExpandHome(f)}
	}
	return a
}

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultHomes returns Droid's home: $FACTORY_HOME_OVERRIDE/.factory, else ~/.factory (macOS too).
func DefaultHomes() []string {
	home := strings.TrimSpace(os.Getenv("FACTORY_HOME_OVERRIDE"))
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return []string{filepath.Join(home, ".factory")}
}

// WatchDirs lists the directories a watcher should watch: each home's sessions (one level of
// project directories below) and logs.
func (a *Adapter) WatchDirs() []string {
	var dirs []string
	for _, h := range a.Homes {
		dirs = append(dirs, filepath.Join(h, "sessions"), filepath.Join(h, "logs"))
		entries, _ := transcript.ReadDir(filepath.Join(h, "sessions"))
		for _, e := range entries {
			if p := filepath.Join(h, "sessions", e.Name()); transcript.IsDir(e, p) {
				dirs = append(dirs, p)
			}
		}
	}
	for _, l := range a.Logs {
		dirs = append(dirs, filepath.Dir(l))
	}
	return transcript.DedupePaths(dirs)
}

// Discover lists the session files (sessions/*/<id>.jsonl) and the log fragments
// (logs/droid-log*.log), sorted by path. A missing home is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	for _, h := range a.Homes {
		projects, err := transcript.ReadDir(filepath.Join(h, "sessions"))
		if err != nil {
			return nil, err
		}
		for _, pd := range projects {
			dir := filepath.Join(h, "sessions", pd.Name())
			if !transcript.IsDir(pd, dir) {
				continue
			}
			files, err := transcript.ReadDir(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				path := filepath.Join(dir, f.Name())
				if id, ok := strings.CutSuffix(f.Name(), ".jsonl"); ok && transcript.IsFile(f, path) {
					out = append(out, transcript.Source{Client: Client, Path: path, SessionID: id})
				}
			}
		}
		logs, err := transcript.ReadDir(filepath.Join(h, "logs"))
		if err != nil {
			return nil, err
		}
		for _, f := range logs {
			path := filepath.Join(h, "logs", f.Name())
			if isLog(f.Name()) && transcript.IsFile(f, path) {
				out = append(out, transcript.Source{Client: Client, Path: path})
			}
		}
	}
	for _, l := range a.Logs {
		if fi, err := os.Stat(l); err == nil && fi.Mode().IsRegular() {
			out = append(out, transcript.Source{Client: Client, Path: l})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return dedupeSources(out), nil
}

func isLog(name string) bool {
	return strings.HasPrefix(name, "droid-log") && strings.HasSuffix(name, ".log")
}

func dedupeSources(srcs []transcript.Source) []transcript.Source {
	out := srcs[:0]
	for i, s := range srcs {
		if i > 0 && s.Path == srcs[i-1].Path {
			continue
		}
		out = append(out, s)
	}
	return out
}

// NewParser returns a parser for one session file or one log file.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	if src.SessionID == "" && (strings.HasSuffix(src.Path, ".log") || slices.Contains(a.Logs, src.Path)) {
		return newLogParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
	}
	return newSessionParser(src, state)
}
