// Package kimi reads the session records of Moonshot AI's Kimi CLI (the Python `kimi` agent,
// github.com/MoonshotAI/kimi-cli; client "kimi-cli") into observer events, following the transcript
// contract. Kimi CLI does not run here (it needs a Moonshot or Kimi Code account): the reader is
// tested on fixtures written here to the format of kimi-cli's own source (src/kimi_cli/share.py,
// metadata.py, session.py, wire/file.py, wire/types.py, wire/__init__.py, soul/kimisoul.py,
// subagents/store.py and runner.py, llm.py, tools/*, and kosong's chat_provider TokenUsage and
// Kimi provider), cross-checked with the published readers of other tools (ccusage's apps/kimi,
// agentsview's internal/parser/kimi.go, tokscale's sessions/kimi.rs; facts only).
//
// # Files
//
// Kimi CLI keeps everything under its share directory: $KIMI_SHARE_DIR (a leading ~ expanded),
// else ~/.kimi, on Linux and macOS alike (Python's Path.home(); no XDG or Library path). Its
// kimi.json lists the work directories it ran in, {work_dirs: [{path, kaos, last_session_id}]};
// each has a sessions directory, sessions/<md5 of the path> (or <kaos>_<md5> for a non-local
// kaos), holding one directory per session, sessions/<hash>/<session uuid>/, with:
//
//	context.jsonl  the message history the model is sent (messages, _checkpoint and _usage
//	               marks; no times): not read
//	wire.jsonl     every message of the session's wire, appended one JSON line each: read
//	state.json     approval settings, a custom title, plan mode: not read
//	subagents/<agent id>/wire.jsonl  a subagent instance's own wire (with its meta.json,
//	               context.jsonl, prompt.txt): read, as a file of the parent session
//
// Discover lists every wire.jsonl, the session's (Source.AgentID empty) and its subagents'
// (Source.AgentID the agent id). Versions of Kimi CLI older than its wire recorder kept only
// context.jsonl (sessions/<hash>/<id>.jsonl before that): they have no times and are not read.
//
// # Records
//
// The first line of a wire file is {"type": "metadata", "protocol_version": "1.x"}; every other
// line is {"timestamp": <unix seconds, float>, "message": {"type": <wire message type>,
// "payload": {...}}}. The recorder writes merged messages: a ToolCall with its whole arguments
// (the ToolCallPart pieces folded in), consecutive text parts as one. Types read:
//
//	TurnBegin, SteerInput  {user_input: a string or content parts}: what the user typed
//	ContentPart            {type "text", text} or {type "think", think}: the reply and its thinking
//	ToolCall               {type "function", id, function {name, arguments (JSON text)}}
//	ToolResult             {tool_call_id, return_value {is_error, output (a string or content
//	                       parts), message, display, extras}}
//	StatusUpdate           {token_usage, message_id, context_usage, context_tokens, ...}: one per
//	                       step (one model call), after the step's reply
//	StepInterrupted        the step stopped (the user interrupted it, or an error)
//	CompactionBegin        the context is being compacted
//	SubagentEvent          {parent_tool_call_id (older: task_tool_call_id), agent_id,
//	                       subagent_type, event {type, payload}}: a subagent's message, relayed
//
// and TurnEnd, StepBegin, CompactionEnd, MCPLoadingBegin/End, HookTriggered/Resolved,
// Notification, PlanDisplay, ToolCallPart and the requests (ApprovalRequest, ApprovalResponse,
// ApprovalRequestResolved, QuestionRequest, QuestionResponse, ToolCallRequest) are known and yield
// nothing; a type this package does not know is counted in Stats.Unknown.
//
// # Token accounting
//
// A StatusUpdate's token_usage is kosong's TokenUsage of that step's one model response:
// {input_other, output, input_cache_read, input_cache_creation}. What includes what:
//
//	input_other           the prompt net of the cache (the Kimi provider computes it as
//	                      prompt_tokens minus the cached tokens; Anthropic's input_tokens)
//	input_cache_read      the prompt tokens read from the cache
//	input_cache_creation  the prompt tokens written to the cache (Anthropic only; else 0)
//	output                the completion, reasoning included (completion_tokens; no separate
//	                      reasoning count is kept)
//
// so Input = input_other, CacheRead = input_cache_read, CacheCreation = input_cache_creation,
// Output = output, Reasoning = 0: observer's buckets as they are. Each step writes one
// StatusUpdate, counted once: one token_usage event per step, id event.ID(client, "usage",
// session, message_id) (the provider's response id, chatcmpl-..., also its MessageID), or,
// without a message_id, event.ID(client, "usage", session, agent, "line", offset). A subagent's
// steps are relayed into the parent's wire (SubagentEvent) and written to its own wire too: both
// yield the same ids (from the message_id, and from the agent, its epoch and the tool-call ids),
// so a step is stored once, carrying the subagent's AgentID (a relayed step without a message_id
// would be counted twice; the Kimi, OpenAI and Anthropic APIs give every response an id). The
// wire names no model: the model is the one the share directory's config.toml (or the older
// config.json) names now, default_model's entry's "model" under [models] (e.g. kimi-for-coding,
// kimi-k2-turbo-preview), so a session run with --model or /model is priced as the configured
// default. Usage is priced from the pricing table
// at the step's time, "approximate"; a model the table does not price (kimi-for-coding, the
// Kimi Code plan's) is "unknown" at cost 0.
//
// # Actions and messages
//
// A ToolCall is an action, id event.ID(client, "action", session, agent, epoch, tool-call id)
// (the session's own calls before any compaction: event.ID(client, "action", session, tool-call
// id)): Kimi K2 numbers a conversation's calls functions.<name>:<n> from 0 (a subagent's
// conversation counts on its own) and may count from 0 again once the context is compacted, so
// the tool-call id names a call only within one agent's epoch. The epoch is the number of the agent's
// compactions before the call: the file's own CompactionBegin lines, and for a subagent relayed
// into the parent's wire its relayed CompactionBegin, which its own wire holds too. Its
// ToolResult is an event with the same id carrying Success (!is_error; Shell reports a non-zero
// exit, a timeout or a rejection by the user as an error), Error (the result's message, then its
// output), Output (the output's text; an image part is "[image]"), OutputSize and DurationMs (the
// result's time minus the call's). Mapping: Shell run_command (command); ReadFile and
// ReadMediaFile read_file (path); WriteFile write_file (path); StrReplaceFile edit_file (path);
// Glob search_files (pattern " in " directory); Grep search_text (pattern " in " path);
// SearchWeb web_search (query); FetchURL web_fetch (url); Task and Agent spawn_subagent
// (description, prompt); SetTodoList todo_update; AskUserQuestion ask_user (the first question);
// anything else unknown with the raw name in Tool. Kimi CLI names an MCP tool by the server's own
// tool name, without the server: a tool that is none of the built-ins and whose result is a list
// of content parts (what Kimi CLI makes of an MCP result; built-ins return text) is an mcp_call
// whose target is that name. A TurnBegin or SteerInput of the session's own wire is a
// user_prompt action and a user message (a subagent's, its task, only a user message of that
// agent); text parts assistant messages, think parts thinking messages, each ToolCall a
// tool_call message; a StepInterrupted a turn_aborted action; a CompactionBegin a
// context_compacted action and a session event of the next epoch. Relayed subagent messages
// yield their usage and actions only (the subagent's own wire gives its conversation). Message
// ids event.ID(client, "message", session, agent, offset, part), Seq the line's offset × 64 +
// part.
//
// # Sessions, times and re-reads
//
// The session is the session directory's name (a uuid); a subagent's file belongs to it, with
// the agent id. Its directory is the work directory kimi.json names for the hash directory, its
// project project.Root of that. The first record with a time yields a started session event, a
// new model a session event. Times are the records' timestamps (UTC); a record without one takes
// the last time seen. Files are appended, never rewritten: ids derive from the offset or the
// client's ids, the same on every read. A line that is not UTF-8 or JSON, or a known message whose
// payload does not decode, is transcript.ErrMalformed (counted, skipped). State keeps the session,
// the directory, the last time, the epoch, the relayed subagents' epochs (of the 64 most recently
// compacted), the models reported and the calls awaiting results (at most 128, each by agent,
// epoch and tool-call id; their targets as transcript.Memo). Events carry source observer-watch; targets,
// errors, outputs and messages are scrubbed and cut to 500 characters, 2 KB, 8 KB and 64 KB.
//
// Kimi Code (MoonshotAI/kimi-code, ~/.kimi-code or $KIMI_CODE_HOME, whose wire files hold
// turn.prompt, context.append_loop_event and usage.record lines) is another program with another
// format: this package does not read it.
package kimi

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
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
const Client = client.KimiCLI

// EnvShareDir moves Kimi CLI's share directory (the CLI's own variable).
const EnvShareDir = "KIMI_SHARE_DIR"

// wireFile is the name of a wire record.
const wireFile = "wire.jsonl"

// Adapter reads Kimi CLI's session records.
type Adapter struct {
	// Roots are sessions directories (<share dir>/sessions).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table

	mu     sync.Mutex
	shares map[string]*share // by share directory
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// ShareDir returns Kimi CLI's share directory: $KIMI_SHARE_DIR, else ~/.kimi (the same on macOS).
func ShareDir() string {
	if d := strings.TrimSpace(os.Getenv(EnvShareDir)); d != "" {
		return transcript.ExpandHome(d)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kimi")
}

// DefaultRoots returns the sessions directory of the share directory.
func DefaultRoots() []string { return []string{filepath.Join(ShareDir(), "sessions")} }

// WatchDirs lists the directories a watcher should watch for new records: the roots (the watcher
// watches the directories created below them).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists every session's wire.jsonl and its subagents' (sessions/<hash>/<session>/
// subagents/<agent>/wire.jsonl), sorted by session directory, a session before its subagents. A
// missing root is not an error; a root that cannot be read is reported after the others are
// listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(path, session, agent string) {
		if seen[path] {
			return
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return
		}
		seen[path] = true
		out = append(out, transcript.Source{Client: Client, Path: path, SessionID: session, AgentID: agent})
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		hashes, err := os.ReadDir(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, h := range hashes {
			hdir := filepath.Join(abs, h.Name())
			if !transcript.IsDir(h, hdir) {
				continue
			}
			sessions, _ := os.ReadDir(hdir)
			for _, s := range sessions {
				sdir := filepath.Join(hdir, s.Name())
				if !transcript.IsDir(s, sdir) {
					continue
				}
				add(filepath.Join(sdir, wireFile), s.Name(), "")
				agents, _ := os.ReadDir(filepath.Join(sdir, "subagents"))
				for _, ag := range agents {
					adir := filepath.Join(sdir, "subagents", ag.Name())
					if transcript.IsDir(ag, adir) {
						add(filepath.Join(adir, wireFile), s.Name(), ag.Name())
					}
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return sortKey(out[i]) < sortKey(out[j]) })
	return out, errors.Join(errs...)
}

// sortKey orders sources by session directory, a session's own wire before its subagents'.
func sortKey(s transcript.Source) string {
	dir := filepath.Dir(s.Path)
	if s.AgentID != "" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	return dir + "\x00" + s.AgentID
}

// NewParser returns a parser for one wire file, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	l := layoutOf(src)
	sh := a.share(l.share)
	return newParser(src, l, sh.cwd(l.hash), sh.model(), state, pricing.Source(a.Prices, a.CurrentPrices))
}

// layout is where a wire file sits: its share directory, work-directory hash, session and agent.
type layout struct {
	share, hash, session, agent string
}

// layoutOf reads a wire file's place: <share>/sessions/<hash>/<session>/wire.jsonl, or
// .../<session>/subagents/<agent>/wire.jsonl. The source's own session and agent win.
func layoutOf(src transcript.Source) layout {
	dir := filepath.Dir(src.Path)
	var l layout
	if filepath.Base(filepath.Dir(dir)) == "subagents" {
		l.agent = filepath.Base(dir)
		dir = filepath.Dir(filepath.Dir(dir))
	}
	l.session = filepath.Base(dir)
	hdir := filepath.Dir(dir)
	l.hash = filepath.Base(hdir)
	l.share = filepath.Dir(filepath.Dir(hdir))
	if src.SessionID != "" {
		l.session = src.SessionID
	}
	if src.AgentID != "" {
		l.agent = src.AgentID
	}
	return l
}

// share is what the parsers read from a share directory: kimi.json's work directories and the
// configured model, read again when the files change.
type share struct {
	dir       string
	mu        sync.Mutex
	metaStamp stamp
	cfgStamp  stamp
	workDirs  map[string]string // hash directory name -> work directory
	cfgModel  string
}

type stamp struct {
	size int64
	mod  time.Time
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{size: -1}
	}
	return stamp{fi.Size(), fi.ModTime()}
}

func (a *Adapter) share(dir string) *share {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shares == nil {
		a.shares = map[string]*share{}
	}
	s := a.shares[dir]
	if s == nil {
		s = &share{dir: dir, metaStamp: stamp{size: -2}, cfgStamp: stamp{size: -2}}
		a.shares[dir] = s
	}
	return s
}

// maxConfig bounds the size of kimi.json and config.toml read.
const maxConfig = 8 << 20

// cwd returns the work directory whose sessions directory is hash ("" when kimi.json does not
// name it).
func (s *share) cwd(hash string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, "kimi.json")
	if st := stampOf(path); st != s.metaStamp {
		s.metaStamp = st
		s.workDirs = readWorkDirs(path)
	}
	return s.workDirs[hash]
}

// WorkDirHash returns the name of the sessions directory Kimi CLI gives a work directory: the
// md5 of its path in hex, prefixed with "<kaos>_" for a kaos other than the local one.
func WorkDirHash(path, kaos string) string {
	sum := md5.Sum([]byte(path))
	h := hex.EncodeToString(sum[:])
	if kaos != "" && kaos != "local" {
		return kaos + "_" + h
	}
	return h
}

func readWorkDirs(path string) map[string]string {
	data, err := readSmall(path)
	if err != nil {
		return nil
	}
	var meta struct {
		WorkDirs []struct {
			Path string `json:"path"`
			Kaos string `json:"kaos"`
		} `json:"work_dirs"`
	}
	if json.Unmarshal(data, &meta) != nil {
		return nil
	}
	out := map[string]string{}
	for _, w := range meta.WorkDirs {
		if w.Path != "" {
			out[WorkDirHash(w.Path, w.Kaos)] = w.Path
		}
	}
	return out
}

// model returns the model the share directory's configuration names by default.
func (s *share) model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	toml, js := filepath.Join(s.dir, "config.toml"), filepath.Join(s.dir, "config.json")
	st := stampOf(toml)
	if st.size < 0 {
		st = stampOf(js)
	}
	if st != s.cfgStamp {
		s.cfgStamp = st
		s.cfgModel = readModel(toml, js)
	}
	return s.cfgModel
}

// config is the part of Kimi CLI's configuration that names the model.
type config struct {
	DefaultModel string `toml:"default_model" json:"default_model"`
	Models       map[string]struct {
		Model string `toml:"model" json:"model"`
	} `toml:"models" json:"models"`
}

// readModel reads config.toml (else config.json): the "model" of the default_model's entry, else
// the default_model itself.
func readModel(tomlPath, jsonPath string) string {
	var c config
	if data, err := readSmall(tomlPath); err == nil {
		if toml.Unmarshal(data, &c) != nil {
			return ""
		}
	} else if data, err := readSmall(jsonPath); err == nil {
		if json.Unmarshal(data, &c) != nil {
			return ""
		}
	} else {
		return ""
	}
	alias := strings.TrimSpace(c.DefaultModel)
	if m, ok := c.Models[alias]; ok && strings.TrimSpace(m.Model) != "" {
		return strings.TrimSpace(m.Model)
	}
	return alias
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxConfig {
		return nil, errors.New("too large")
	}
	return os.ReadFile(path)
}
