// Package pi reads the session files of Pi, the coding agent of the npm package
// @mariozechner/pi-coding-agent (its command is `pi`), into observer events, following the
// transcript contract.
//
// # Files
//
// Pi keeps its state in its agent directory, ~/.pi/agent on Linux and macOS alike (Node's
// os.homedir(), no XDG or Library path), or $PI_CODING_AGENT_DIR (a leading ~ expanded) when that
// is set. Sessions live in <agent dir>/sessions/--<cwd>--/<time>_<session id>.jsonl, where <cwd> is
// the directory pi ran in without its leading "/" (or "\") and with every "/", "\" and ":" turned
// into "-" (so /home/ann/my-app is --home-ann-my-app--; the encoding loses the difference between
// "-" and "/", so the project is read from the file's header, never from the directory name), and
// <time> is the creation time in ISO 8601 with ":" and "." as "-" (2026-01-02T10-00-00-000Z). A
// session directory named by `--session-dir`, $PI_CODING_AGENT_SESSION_DIR or the "sessionDir" of
// <agent dir>/settings.json holds the files flat, without the --<cwd>-- level. DefaultRoots lists
// $PI_CODING_AGENT_SESSION_DIR, the settings' sessionDir and <agent dir>/sessions; Discover reads
// every root flat and one directory deep.
//
// A file is JSON lines, appended with one write per line. Its first line is the header {type:
// "session", version, id, timestamp, cwd, parentSession}; pi writes nothing until the first
// assistant message, then the entries so far at once. Versions: 1 (no version field, entries
// without id or parentId; the header may also name provider, modelId and thinkingLevel, and a
// branched copy's source in branchedFrom; compactions point at their first kept entry by index), 2
// (every entry gets an 8-hex-digit id and a parentId: the file is a tree), and 3 (the message role
// hookMessage became custom). Opening an older file with a newer pi rewrites it in place as version
// 3 (same inode, every line longer: ids and parentIds added, the header's version set); the reader
// then finds its cursor inside a line, reports that line malformed, and reads the rewritten lines
// after it again, which yield the same event ids (below). Entry types: message (an AgentMessage of
// role user, assistant, toolResult, bashExecution, custom, hookMessage, branchSummary or
// compactionSummary), model_change, thinking_level_change, compaction, branch_summary, custom (an
// extension's state), custom_message (an extension's message to the model), label and session_info.
//
// # Branches
//
// A session file is a tree: /tree moves the leaf back to an earlier entry and the next entries grow
// a new branch beside the old one, in the same file. This reader counts every entry once, in file
// order, whichever branch it lies on, and does not follow the path to the last entry. Why: observer
// measures what was spent and done, and an abandoned branch was billed turn by turn, ran its
// commands and left its edits on disk (moving the leaf undoes none of it); pi's own footer totals
// the usage of every assistant entry of the file the same way. The path to the leaf is also not
// known while the file grows (the user can go back to any entry later), so counting only the
// current branch would mean taking back stored events. Copies are the other half: /fork and /clone
// write the path to an entry into a new file (a header naming the source in parentSession, then the
// entries verbatim), `pi --fork` copies a whole session into another project, and version 1 did the
// same with branchedFrom. Event ids are derived from what the copies keep unchanged (message
// timestamps, response and tool-call ids, never the file, the line or the entry id, which a version
// 1 file only gets, at random, when it is migrated), so a copied entry yields its source's ids and
// is stored once, under the session of whichever file was stored first (Discover lists older files
// first).
//
// # Token accounting
//
// Pi (its pi-ai library; read in pi-ai 0.73.1) writes each assistant message's usage {input,
// output, cacheRead, cacheWrite, totalTokens, cost {input, output, cacheRead, cacheWrite, total}}
// normalized across providers, and that normalization is what the figures mean:
//
//	input       prompt tokens neither read from nor written to the cache: Anthropic's
//	            input_tokens; OpenAI's input_tokens (Responses) or prompt_tokens (Chat) minus the
//	            cached ones (and minus the cache writes some Chat-compatible providers report);
//	            Gemini's promptTokenCount minus cachedContentTokenCount
//	output      generated tokens, reasoning and thinking INCLUDED: OpenAI's output/completion
//	            tokens already hold the reasoning tokens, Anthropic's output_tokens the thinking,
//	            and pi-ai adds Gemini's thoughtsTokenCount to candidatesTokenCount
//	cacheRead   prompt tokens read from the cache
//	cacheWrite  prompt tokens written to the cache (Anthropic's 5-minute and 1-hour writes
//	            together; pi asks for 1-hour writes only with PI_CACHE_RETENTION=long)
//	totalTokens input + output + cacheRead + cacheWrite (the provider's own total where it gives
//	            one; absent before late 2025)
//	cost        dollars from pi's own model catalog, per bucket (0 for a custom model without
//	            prices)
//
// These are observer's buckets already: Input = input, Output = output, CacheRead = cacheRead,
// CacheCreation = cacheWrite, CacheCreation1h = 0 and Reasoning = 0 (pi logs no split of either; the
// cacheWrite1h and reasoningTokens that OpenClaw's fork of pi-ai adds are taken where present). A
// 1-hour cache write is therefore priced as a 5-minute one. One token_usage event per assistant
// message whose usage is not all zero (an aborted request before any usage has none), id
// event.ID("pi", "usage", provider, model, message timestamp, responseId), MessageID the response
// id (Anthropic's msg_..., OpenAI's resp_... or chatcmpl-...), so the proxy's figures for the same
// turn replace these. A message is written once, final: there are no streaming placeholders, and
// Reliability is "approximate" (the API's figures as the client copied them; an aborted stream
// keeps the output counted up to the abort). The cost comes from observer's pricing table at the
// message's time, for the model named (else the responseModel the API answered with); only for a
// model the table does not price, pi's own cost.total is taken; with neither, cost is 0 and
// Reliability "unknown". The LLM calls pi makes to summarize a compaction or an abandoned branch
// write no usage, and a subagent run through the example subagent extension (pi --no-session)
// writes no file: neither is counted.
//
// # Actions
//
// A toolCall block of an assistant message is an action with id event.ID("pi", "action", tool-call
// id, message timestamp), its normalized type, the raw tool name in Tool, a target, the response
// id, the model and an input hash; the toolResult message (paired by toolCallId; the parser keeps
// the calls still waiting, bounded, in State) is an event with the same id carrying Success
// (!isError; pi's bash reports a non-zero exit as an error), Error (the text on failure, 2 KB),
// Output (the text, 8 KB; an image is "[image]"), OutputSize and DurationMs (the result's time
// minus the time the call's message was written). A result whose call is unknown gets the id
// event.ID("pi", "action", tool-call id) and the type of its toolName. Mapping (case-insensitive;
// pi's built-ins first, then names extensions use): read read_file; write write_file; edit,
// multiedit edit_file; bash run_command; grep search_text; find, glob, ls search_files; subagent,
// task, agent spawn_subagent; todo, todo_write, todowrite todo_update; question, questionnaire,
// ask_user, askuserquestion ask_user; web_search web_search; web_fetch, fetch web_fetch; mcp,
// mcp_*, mcp__* mcp_call; anything else unknown. Targets: the path (a leading "@" removed, relative
// to the project when inside it, a relative path taken from the session's cwd); the command; the
// pattern, with " in <path>" when a path is given; the directory of ls ("." when none); "<agent>:
// <task>" of subagent; the question; the query; the URL; for other tools the first of path,
// file_path, command, pattern, url and query.
//
// Other actions: a user message is a user_prompt (its text, "[image]" for an image; id from its
// timestamp and text); a bashExecution message (a command the user ran with "!" or "!!") is a
// run_command whose Tool is "bashExecution", with its exit code as success (a cancelled command
// failed); an assistant message that stopped with "error" is an api_error (errorMessage), one that
// stopped with "aborted" a turn_aborted; a compaction entry is a context_compacted action (target
// "tokens before: N") with a session event of the next epoch. Extension messages (custom,
// hookMessage, custom_message), summaries, labels, model and thinking-level changes, and text or
// thinking blocks yield no action (see Conversation for the messages); an entry type or message role this package does not
// know is counted in Stats.Unknown and yields nothing. A line that is not UTF-8, not a JSON object,
// or a known entry that does not decode (a line half-written when pi stopped, then continued by the
// next append) is malformed (transcript.ErrMalformed): counted, reported, skipped.
//
// # Conversation
//
// The conversation is read into message events, Seq the record's place (Reader.Place: a line's
// byte offset, a database row's seq) × 64 plus the block's index in the message, text scrubbed
// and kept to 64 KB, ids keyed like the actions' (by what a copy keeps: the message's timestamp,
// the response id, the tool-call id, a hash of the text), so a fork's copies are the same
// messages: a user message is a user message (its text blocks joined, "[image]" for an image);
// an assistant message's text blocks are assistant messages, its thinking blocks with text
// thinking (a block of a signature alone, encrypted, is none), each with the response id and the
// model; a toolCall block is a tool_call (Tool, ToolUseID and Text its action's tool, id and
// target; the result is the action's output, no message); a bashExecution message (a command
// the user ran with "!") a tool_call of Tool "bashExecution"; a compaction entry's summary a
// summary. Extension messages (custom, hookMessage, custom_message), tool results, branch
// summaries and the other entries are no message. A message of a subagent's session (OpenClaw's
// database) carries its AgentID and Sidechain.
//
// # Sessions
//
// The session id is the uuid at the end of the file name, else the header's id. The header yields a
// started session event (cwd, start time, transcript path, parent session: the uuid of the file
// parentSession or branchedFrom names), and an assistant message whose model is not the previous
// message's a session event carrying it (a model_change entry only names the model of the next
// request, which the user may switch away from before sending any). Events carry the entry's time
// (UTC; the message's own time, else the last time seen, when an entry has none), source
// observer-watch, client pi, and the project: project.Root of the header's cwd. Targets, errors and
// outputs go through scrub.String and are cut to 500 characters, 2 KB and 8 KB.
//
// A session_info entry {type, id, parentId, timestamp, name} is the session's name, the title pi's
// session list shows instead of the first message: the user gives it with /name, a rename in the
// session selector, the RPC set_session_name, or an extension's pi.setSessionName (checked with the
// real pi 0.73.1: set_session_name appends the entry at once); pi generates none. It yields a
// session event with State "" and Title (event.CleanTitle of the name), TitleByUser, at the entry's
// time, id event.ID("pi", "session", session id, "title", entry timestamp, title): a copy made by
// /fork or /clone keeps the entry, and its session gets the name under its own id. The latest entry
// is the name; an empty name clears it in pi, which a title cannot undo here: it yields nothing.
//
// # Cursors and state
//
// The caller keeps the byte offset; the parser's State (small JSON, usually under a few kilobytes)
// keeps the session id, the cwd, the format version, the model of the last assistant message, the
// epoch, the keys of the last 16 compactions (a compaction read again after a rewrite is not a new
// epoch), and the tool calls still waiting for their results (at most 128) with the last 16
// answered ones (a result read again after a rewrite keeps its call's id).
//
// # Entries kept elsewhere
//
// A Reader turns entries into events one Session at a time, whatever holds them; the Parser is a
// Reader over one file. OpenClaw's reader (package openclaw), whose records are pi's entries, uses
// this API for its session files and database rows: a Reader with its own client name (in events
// and ids), Tools (its tool names, targets and Tool Search's tool_call), parent references and
// nested-tool messages (Custom, with Args, HashInput, MessageTime, Duration and Outcome), and a
// Session per session that may belong to a root session (Root) or follow another (Parent).
package pi

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Pi events carry.
const Client = client.Pi

// Environment variables pi reads for its directories.
const (
	EnvAgentDir   = "PI_CODING_AGENT_DIR"         // the agent directory, default ~/.pi/agent
	EnvSessionDir = "PI_CODING_AGENT_SESSION_DIR" // a flat session directory
)

// Adapter finds and reads the session files under Pi's session directories.
type Adapter struct {
	// Roots are session directories: <agent dir>/sessions (one directory per cwd below it) or a
	// flat custom session directory.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a usage
	// line is priced, so a long-lived parser follows price changes (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given session directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// Client returns "pi".
func (a *Adapter) Client() string { return Client }

// AgentDir returns pi's agent directory: $PI_CODING_AGENT_DIR, else ~/.pi/agent.
func AgentDir() string {
	if d := strings.TrimSpace(os.Getenv(EnvAgentDir)); d != "" {
		return transcript.ExpandHome(d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".pi", "agent")
	}
	return filepath.Join(".pi", "agent")
}

// DefaultRoots returns the session directories pi writes to: $PI_CODING_AGENT_SESSION_DIR when
// set, the sessionDir of the agent directory's settings.json when it names an absolute (or ~)
// path, and <agent dir>/sessions.
func DefaultRoots() []string {
	var roots []string
	if d := strings.TrimSpace(os.Getenv(EnvSessionDir)); d != "" {
		roots = append(roots, transcript.ExpandHome(d))
	}
	agent := AgentDir()
	if d := settingsSessionDir(filepath.Join(agent, "settings.json")); d != "" {
		roots = append(roots, d)
	}
	return transcript.DedupePaths(append(roots, filepath.Join(agent, "sessions")))
}

// settingsSessionDir reads the sessionDir of pi's global settings.json; "" when there is none or
// it is relative (pi would resolve it against the directory it runs in, unknown here).
func settingsSessionDir(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return ""
	}
	var s struct {
		SessionDir string `json:"sessionDir"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	d := transcript.ExpandHome(strings.TrimSpace(s.SessionDir))
	if !filepath.IsAbs(d) {
		return ""
	}
	return d
}

// SessionDirName returns the directory name pi gives the sessions of a working directory under
// <agent dir>/sessions: "--" + cwd without its leading separator, with "/", "\" and ":" as "-",
// + "--".
func SessionDirName(cwd string) string {
	if cwd != "" && (cwd[0] == '/' || cwd[0] == '\\') {
		cwd = cwd[1:]
	}
	return "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(cwd) + "--"
}

// WatchDirs lists the directories a watcher should watch for new sessions: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// sessionFile is pi's file name: <ISO time with - for : and .>_<session uuid>.jsonl.
var sessionFile = regexp.MustCompile(`_([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

// SessionIDFromPath returns the uuid at the end of a session file name, or "".
func SessionIDFromPath(path string) string {
	m := sessionFile.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// Discover lists the .jsonl files of every root, flat and one directory deep, oldest first by
// file name (pi's names start with the creation time), so a fork's source comes before the fork.
// A missing root is not an error; a root that cannot be read is reported after the others are
// listed, and a directory below a root that cannot be read is skipped.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seenRoot := map[string]bool{}
	seenFile := map[string]bool{}
	add := func(path string) {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if seenFile[abs] {
			return
		}
		seenFile[abs] = true
		id := SessionIDFromPath(abs)
		if id == "" {
			id = HeaderSessionID(abs)
		}
		out = append(out, transcript.Source{Client: Client, Path: abs, SessionID: id})
	}
	for _, root := range a.Roots {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			if seenRoot[real] {
				continue
			}
			seenRoot[real] = true
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			path := filepath.Join(root, e.Name())
			switch {
			case isSessionName(e.Name()) && transcript.IsFile(e, path):
				add(path)
			case transcript.IsDir(e, path):
				files, _ := os.ReadDir(path)
				for _, f := range files {
					fp := filepath.Join(path, f.Name())
					if isSessionName(f.Name()) && transcript.IsFile(f, fp) {
						add(fp)
					}
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		bi, bj := filepath.Base(out[i].Path), filepath.Base(out[j].Path)
		if bi != bj {
			return bi < bj
		}
		return out[i].Path < out[j].Path
	})
	return out, errors.Join(errs...)
}

func isSessionName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}

// maxHeaderLine bounds the header line read from a file that is not named after its session.
const maxHeaderLine = 64 << 10

// HeaderSessionID reads the id of a session file's header, "" when its first line is not one.
func HeaderSessionID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxHeaderLine)).ReadBytes('\n')
	if err != nil {
		return ""
	}
	var typ, id string
	if jsonscan.Members(line, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, "type"):
			typ = jsonscan.Str(v)
		case jsonscan.Key(k, "id"):
			id = jsonscan.Str(v)
		}
		return true
	}) != nil || typ != "session" {
		return ""
	}
	return id
}

// NewParser returns a parser for one session file, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}
