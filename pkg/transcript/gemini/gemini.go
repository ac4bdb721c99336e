// Package gemini reads the chat recordings of Gemini CLI and of Qwen Code (a Gemini CLI fork) into
// observer events, following the transcript contract. One reader serves both: their model
// messages share Gemini's Content parts and usage metadata, and Qwen Code installs older than its
// own session format wrote Gemini CLI's.
//
// # Files
//
// Gemini CLI (client gemini-cli) keeps its runtime directory at ~/.gemini on Linux and macOS
// ($GEMINI_CLI_HOME/.gemini when that variable is set, which is the override; under macOS's
// sandbox-exec sandbox it is ~/.cache/.gemini, also read by default). Under it, tmp/<project>/chats
// holds, per session:
//
//   - session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.json: the format up to early 2026,
//     one pretty-printed JSON document {sessionId, projectHash, startTime, lastUpdated, kind,
//     messages: [...]} that Gemini CLI rewrites in place (fs.writeFileSync, no rename) after each
//     change. It is a transcript.Source Document: read whole, again at each change.
//   - session-<...>.jsonl: the current format, JSON lines appended. The first line is the header
//     {sessionId, projectHash, startTime, lastUpdated, kind, directories}; then message records
//     (an "id"), {"$set": {...}} patches of the header (lastUpdated, summary, directories,
//     memoryScratchpad, or messages: the whole list, replacing it), and {"$rewindTo": id}, which
//     drops that message and those after it. A message is rewritten by appending it again under
//     the same id: the last record of an id wins (a model message is first written without its
//     tool calls, then again with them). When Gemini CLI resumes a .json session it converts it
//     into a .jsonl beside it (same name plus "l", same session and message ids); when it cannot
//     read a .jsonl it rewrites it through a temporary file and a rename.
//   - <parent session id>/<session id>.jsonl: a subagent's recording (header kind "subagent").
//     It belongs to the parent session: Source.SessionID is the directory name, Source.AgentID the
//     file's own session id.
//
// <project> is a short name (the project directory's base name, made unique) whose .project_root
// file holds the project's path, or, before late 2025, the sha256 of that path (the header's
// projectHash). The project root is found, in order: in .project_root; in the runtime directory's
// projects.json ({"projects": {path: short name}}); as a path named in the file (an absolute path
// in a tool call, a result, the <session_context> message or the header's directories, or one of
// their parent directories) whose sha256 is the projectHash; else as the first workspace
// directory the <session_context> message or the header names, unverified. The event project is
// project.Root of it; file targets are relative to the project when inside it. Only the oldest
// layout (hash directories, before projects.json) needs the file's paths: there, events read
// before any path verified the hash (a .json read while its session had only its first prompt)
// carry no project, and keep none once stored.
//
// Qwen Code (client qwen-code) keeps its runtime directory at ~/.qwen ($QWEN_HOME, and
// $QWEN_RUNTIME_DIR for the runtime output when set; the same on Linux and macOS). Its own format,
// projects/<cwd with every non-alphanumeric character as ->/chats/<session id>.jsonl (and
// chats/archive/), is append-only JSON lines shaped like Claude Code's: every record has uuid,
// parentUuid, sessionId, timestamp, type (user, assistant, tool_result, system), cwd, version and
// gitBranch; user and tool_result records carry message {role, parts} and assistant records
// message, model and usageMetadata (Gemini's field names). Subagents write
// projects/<cwd>/subagents/<session id>/agent-<agent id>.jsonl. Qwen Code up to 0.1.x (late 2025)
// wrote Gemini CLI's whole-file format instead, ~/.qwen/tmp/<sha256 of the project>/chats/
// session-*.json rewritten in place, with its model messages of type "qwen" where Gemini CLI writes
// "gemini": it is read as Gemini CLI's.
//
// # Where Qwen Code differs from Gemini CLI
//
//   - Up to 0.1.x: the same session-*.json as Gemini CLI, model messages typed "qwen".
//   - Since: a record per event, never rewritten: no header, no $set, no rewrite under the same id; a
//     tool call is a functionCall part of an assistant record and its result a separate
//     tool_result record (functionResponse part, toolCallResult {callId, status, resultDisplay,
//     error}), paired by call id as Claude Code's tool_use and tool_result are. Gemini CLI keeps the
//     call and its result together in the model message's toolCalls.
//   - The project comes from each record's cwd, as for Claude Code.
//   - usageMetadata is Gemini's, but Qwen Code converts other providers' usage into it: through
//     OpenAI-compatible APIs (its default) candidatesTokenCount is completion_tokens, which
//     already holds the reasoning tokens that thoughtsTokenCount repeats; through Anthropic,
//     promptTokenCount adds cache reads and cache writes to input_tokens. See Token accounting.
//   - Tool names: edit (Gemini CLI: replace), grep_search, todo_write (write_todos), agent
//     (invoke_agent), ask_user_question (ask_user), task_create/update/list, notebook_edit, exec;
//     MCP tools are mcp__<server>__<tool> (Gemini CLI: mcp_<server>_<tool>).
//   - Qwen Code records API errors as system ui_telemetry records (qwen-code.api_error) and
//     compactions as system chat_compression records; Gemini CLI writes an error message
//     (type "error") and no compaction record.
//
// # Token accounting
//
// Gemini CLI copies each API response's usageMetadata into its model message (type "gemini") as
// tokens {input, output, cached, thoughts, tool, total}. What includes what:
//
//	input    promptTokenCount: the whole prompt, cached tokens included
//	cached   cachedContentTokenCount: the part of input read from the context cache
//	output   candidatesTokenCount: the answer, thoughts NOT included
//	thoughts thoughtsTokenCount: thinking, billed as output, beside output
//	tool     toolUsePromptTokenCount: the results of the API's built-in tools fed back, billed as
//	         input, beside input
//	total    totalTokenCount = input + output + thoughts + tool
//
// Observer's buckets (Input net of cache, reasoning inside Output):
//
//	Input     = input − cached + tool
//	CacheRead = cached
//	Output    = output + thoughts
//	Reasoning = thoughts
//	CacheCreation = 0 (Gemini bills implicit caching with no write charge; explicit caches are
//	          billed for storage by time, which no transcript records)
//
// so that Input + CacheRead + Output = total. Qwen Code's usageMetadata {promptTokenCount,
// candidatesTokenCount, cachedContentTokenCount, thoughtsTokenCount, totalTokenCount} reads the
// same way, with one test for the providers whose output already holds the thoughts: when
// thoughts > 0 and totalTokenCount is less than prompt + candidates + thoughts + tool, the thoughts
// are inside candidates and Output = candidates (Reasoning = thoughts, at most Output). Without a
// total, Gemini CLI's thoughts are beside output (the Gemini API's rule) and Qwen Code's inside when
// candidates ≥ thoughts (its OpenAI-compatible default). A usage with only a total counts it as
// Input − cached. cached above input is read as input. Qwen Code through Anthropic folds cache
// writes into promptTokenCount, so they count as Input here (priced as input, below Anthropic's
// write price).
//
// One token_usage event per model message with tokens, id event.ID(client, "usage", session,
// message id) where session is the file's own session id (a subagent's own): the same in a .json
// and the .jsonl converted from it, and on every rewrite of the message. Gemini CLI sets a
// message's tokens once (a later rewrite adds tool calls, not tokens), so the writer's rule (per
// id, the figures with the largest output) keeps the last write. A message written without
// tokens yields no usage until a rewrite adds them. Qwen Code: one per assistant record with
// usageMetadata, keyed by the record's uuid. The cost comes from the pricing table at the
// message's time; Reliability is "approximate" (the API's final figures as the client logged
// them), or "unknown" with cost 0 for a model the table does not price. Spent tokens stay
// counted when a rewind ($rewindTo, a $set that replaces the messages) drops their message.
//
// # Cursors and re-reads
//
// A .jsonl is read by line like any transcript: each line once, the cursor after it. A .json is
// a Document: the caller reads it whole whenever its size or modification time changed and hands
// it to Record. The parser remembers, in State, a fingerprint of each event it emitted lately (the
// last 128: an event is emitted again only when something in it changed, so rewriting a message
// with its tool calls emits the calls and not the usage again) and, for a document, the number of
// leading messages it already read with a hash of their bytes: a re-read that finds the same
// leading messages skips them and reads only the last few and the new ones, so a session
// rewritten after every message costs its new messages, not its length, in events. A document
// whose leading messages changed (a rewind) is read again from its first message; the ids make
// that harmless. A document that does not parse (caught half-written: writeFileSync truncates
// before it writes) is malformed, emits nothing and keeps the State; the next change reads it
// again.
//
// # Actions
//
// A tool call (Gemini CLI: an entry of a model message's toolCalls with its result; Qwen Code: a
// functionCall part, then its tool_result) is an action with id event.ID(client, "action",
// session, call id). Mapping: read_file, read_many_files read_file; write_file write_file;
// replace, edit, notebook_edit edit_file; run_shell_command, exec run_command; grep_search,
// search_file_content, grep search_text; glob, list_directory, ls search_files;
// google_web_search, web_search web_search; web_fetch web_fetch; write_todos, todo_write,
// tracker_*, task_create, task_update, task_list todo_update; invoke_agent, delegate_to_agent,
// codebase_investigator, agent, create_sub_session spawn_subagent; ask_user, ask_user_question
// ask_user; complete_task task_complete; mcp_<server>_<tool>, mcp__<server>__<tool>,
// <server>__<tool>, read_mcp_resource, list_mcp_resources mcp_call; anything else (update_topic,
// save_memory, activate_skill, enter_plan_mode, ...) unknown, the raw name kept in Tool. Targets:
// the file (file_path, absolute_path, path) relative to the project; the command; the pattern,
// with " in <dir>" when one is given; the directory listed; the query; the URL of web_fetch (its
// url, else the first URL in its prompt); "<agent>: <objective>" of a subagent; the first path of
// read_many_files. Success: Gemini CLI's status "success" (but a run_shell_command whose output
// reports a non-zero "Exit Code" failed), "error" and "cancelled" failed, anything else unknown;
// Qwen Code's toolCallResult status the same way. Error and Output come from the function
// response (its output or error), else the resultDisplay text. DurationMs is the call's recorded
// time minus its model message's (Gemini CLI; approval waits included), or the tool_result's time
// minus the call's (Qwen Code).
//
// User messages: typed text is a user_prompt (id event.ID(client, "action", session, message
// id); the target is what the user typed, Gemini CLI's displayContent when the sent content was
// expanded); function responses sent back to the model, the <session_context> and <hook_context>
// messages, and Qwen Code's notification and cron records are not prompts. Gemini CLI "error"
// messages and Qwen Code's api_error telemetry are api_error actions, Qwen Code's chat_compression
// a context_compacted action with a session epoch event. Info and warning messages and the other
// bookkeeping records yield nothing (thoughts are messages, below); a type this package does not know is counted
// in Stats.Unknown. A line that is not UTF-8 or not a JSON object, or a known record that does
// not decode, is malformed (transcript.ErrMalformed).
//
// # Messages
//
// The conversation is one event.Message per message block:
//
//   - user: each prompt, exactly where a user_prompt action is (so not the function responses,
//     the <session_context> and <hook_context> messages, the "Please continue." turns Gemini CLI
//     sends itself, nor Qwen Code's notification and cron records), its text what the action
//     targets, uncut (Gemini CLI's displayContent when the sent content was expanded; "[image]" for
//     an image alone).
//   - thinking: a model message's thoughts, as one message: Gemini CLI's thoughts [{subject,
//     description}], each as the model wrote it ("**subject**", a blank line, the description),
//     and the thought parts of its content (Qwen Code's).
//   - assistant: a model message's text parts (not thoughts).
//   - tool_call: each tool call (Gemini CLI's toolCalls, Qwen Code's functionCall parts), keyed,
//     named and targeted as its action; its result stays with the action.
//   - error, info and warning messages, and Qwen Code's chat_compression (which records no summary
//     text), are no messages; Gemini CLI records no compaction.
//
// Ids: event.ID(client, "message", session, message id) for a prompt, with "thinking" or "text"
// for a model message's blocks, and the action's key (the call id) for a tool call, session being
// the file's own as for usage: the same message has the same ids in a .json, the .jsonl converted
// from it, and every rewrite. Seq is the message's index in the conversation times 64 plus the
// block's place (thinking 0, text 1, the calls from 2): a document's list index, a $set list's, or
// for .jsonl lines a count kept in State (a message rewritten right after keeps its index).
// Messages are remembered like the other events (a re-read emits a message again only when it
// changed; its Seq alone does not count). Text is trimmed, scrubbed and cut to 64 KB; a block
// without text is passed over. A subagent's file gives its messages the subagent's AgentID (its
// session is the parent's). Model is the model message's.
//
// # Sessions
//
// The session is the header's sessionId (Qwen Code: the file name, else the records'). A main
// session's header (or first record) yields a started session event (cwd = the project root Gemini
// CLI ran in, or the record's cwd; start time; git branch for Qwen Code; transcript path), and each
// new model a session event carrying it. Subagent files yield none: their parent's file does.
// Events carry the time of their message (the last time seen when a record has none), source
// observer-watch, and the client. Targets, errors and outputs go through scrub.String and are cut
// to 500 characters, 2 KB and 8 KB.
//
// The session's title, where the client writes one, is a session event with State "" and Title, id
// event.ID(client, "session", session, "title", source (user, client), time, title), reported when
// it differs from the one last reported (the state keeps it: a title written again is not reported
// again), at the record's time, else the last time seen, else held until the file gives a time.
// Gemini CLI: the summary member (of the header, a $set, a .json document), a one-line summary of
// the user's intent that it generates with a small model for the previous session when the next
// interactive session starts or `gemini --list-sessions` lists them (checked with the real 0.61.0
// through observer-fakeapi: a $set appended after the last message); its session list shows it,
// else the first prompt. It is the client's title (TitleByUser false): Gemini CLI has no rename. A
// subagent file's summary is the subagent's result, not a title. (Its update_topic tool's title is
// the model's running topic, not the session's.) Qwen Code: a system record of subtype
// custom_title, systemPayload {customTitle, titleSource}: titleSource "auto" is one it generated
// (/rename --auto, a branch named after its parent), "manual" or none (records before the field)
// one the user gave with /rename, TitleByUser; Qwen Code writes the current title again at every
// lifecycle event and every 32 KB of records.
package gemini

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client names the clients these events carry.
const (
	Client     = client.GeminiCLI
	QwenClient = client.QwenCode
)

// Adapter finds and reads one client's recordings under its runtime directories.
type Adapter struct {
	client string
	// Roots are runtime directories: ~/.gemini for Gemini CLI, ~/.qwen for Qwen Code.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a usage
	// record is priced, so a long-lived parser follows price changes.
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns a Gemini CLI adapter reading the given runtime directories (~/.gemini).
func New(roots []string) *Adapter { return &Adapter{client: Client, Roots: roots} }

// NewQwen returns a Qwen Code adapter reading the given runtime directories (~/.qwen).
func NewQwen(roots []string) *Adapter { return &Adapter{client: QwenClient, Roots: roots} }

// Client returns "gemini-cli" or "qwen-code".
func (a *Adapter) Client() string {
	if a.client == "" {
		return Client
	}
	return a.client
}

// DefaultRoots returns Gemini CLI's runtime directories: $GEMINI_CLI_HOME/.gemini when that is
// set, else ~/.gemini and ~/.cache/.gemini (macOS's sandbox-exec runs keep their state there).
func DefaultRoots() []string {
	if h := strings.TrimSpace(os.Getenv("GEMINI_CLI_HOME")); h != "" {
		return []string{filepath.Join(transcript.ExpandHome(h), ".gemini")}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return []string{".gemini"}
	}
	return []string{filepath.Join(home, ".gemini"), filepath.Join(home, ".cache", ".gemini")}
}

// DefaultQwenRoots returns Qwen Code's runtime directories: $QWEN_RUNTIME_DIR when set, and
// $QWEN_HOME or ~/.qwen.
func DefaultQwenRoots() []string {
	var roots []string
	if d := strings.TrimSpace(os.Getenv("QWEN_RUNTIME_DIR")); d != "" {
		roots = append(roots, transcript.ExpandHome(d))
	}
	if d := strings.TrimSpace(os.Getenv("QWEN_HOME")); d != "" {
		roots = append(roots, transcript.ExpandHome(d))
	} else if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, ".qwen"))
	} else {
		roots = append(roots, ".qwen")
	}
	return transcript.DedupePaths(roots)
}

// WatchDirs lists the directories under roots that a watcher should watch for new sessions.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, filepath.Join(r, "tmp"))
		if a.Client() == QwenClient {
			out = append(out, filepath.Join(r, "projects"))
		}
	}
	return out
}

var (
	// qwenSession is Qwen Code's session file name (its own SESSION_FILE_PATTERN).
	qwenSession = regexp.MustCompile(`^[0-9a-fA-F-]{32,36}\.jsonl$`)
	// geminiSession is Gemini CLI's main session file name.
	geminiSession = regexp.MustCompile(`^session-.+\.jsonl?$`)
)

// Discover lists the client's recordings under every root, sorted by path. A missing root is not
// an error; a root that cannot be read is reported after the others are listed, and a project
// directory that cannot be read is skipped.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		srcs, err := a.discoverTmp(filepath.Join(abs, "tmp"))
		out = append(out, srcs...)
		if err != nil {
			errs = append(errs, err)
		}
		if a.Client() == QwenClient {
			srcs, err := a.discoverQwen(filepath.Join(abs, "projects"))
			out = append(out, srcs...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// discoverTmp lists Gemini CLI's tmp/<project>/chats: session files and subagent directories.
func (a *Adapter) discoverTmp(tmp string) ([]transcript.Source, error) {
	projects, err := transcript.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var out []transcript.Source
	for _, pd := range projects {
		chats := filepath.Join(tmp, pd.Name(), "chats")
		if !transcript.IsDir(pd, filepath.Join(tmp, pd.Name())) {
			continue
		}
		entries, _ := transcript.ReadDir(chats)
		for _, e := range entries {
			name, path := e.Name(), filepath.Join(chats, e.Name())
			switch {
			case geminiSession.MatchString(name) && transcript.IsFile(e, path):
				out = append(out, transcript.Source{Client: a.Client(), Path: path,
					Document: strings.HasSuffix(name, ".json")})
			case transcript.IsDir(e, path):
				subs, _ := transcript.ReadDir(path)
				for _, s := range subs {
					sp := filepath.Join(path, s.Name())
					if strings.HasSuffix(s.Name(), ".jsonl") && transcript.IsFile(s, sp) {
						out = append(out, transcript.Source{Client: a.Client(), Path: sp, SessionID: name,
							AgentID: strings.TrimSuffix(s.Name(), ".jsonl")})
					}
				}
			}
		}
	}
	return out, nil
}

// discoverQwen lists Qwen Code's projects/<cwd>/chats (and chats/archive) sessions and
// projects/<cwd>/subagents/<session>/agent-<id>.jsonl.
func (a *Adapter) discoverQwen(projectsDir string) ([]transcript.Source, error) {
	projects, err := transcript.ReadDir(projectsDir)
	if err != nil {
		return nil, err
	}
	var out []transcript.Source
	for _, pd := range projects {
		dir := filepath.Join(projectsDir, pd.Name())
		if !transcript.IsDir(pd, dir) {
			continue
		}
		for _, chats := range []string{filepath.Join(dir, "chats"), filepath.Join(dir, "chats", "archive")} {
			entries, _ := transcript.ReadDir(chats)
			for _, e := range entries {
				name, path := e.Name(), filepath.Join(chats, e.Name())
				if qwenSession.MatchString(name) && transcript.IsFile(e, path) {
					out = append(out, transcript.Source{Client: a.Client(), Path: path,
						SessionID: strings.TrimSuffix(name, ".jsonl")})
				}
			}
		}
		sessions, _ := transcript.ReadDir(filepath.Join(dir, "subagents"))
		for _, sd := range sessions {
			sdir := filepath.Join(dir, "subagents", sd.Name())
			if !transcript.IsDir(sd, sdir) {
				continue
			}
			files, _ := transcript.ReadDir(sdir)
			for _, f := range files {
				name, path := f.Name(), filepath.Join(sdir, f.Name())
				agent, ok := strings.CutPrefix(strings.TrimSuffix(name, ".jsonl"), "agent-")
				if ok && strings.HasSuffix(name, ".jsonl") && transcript.IsFile(f, path) {
					out = append(out, transcript.Source{Client: a.Client(), Path: path, SessionID: sd.Name(), AgentID: agent})
				}
			}
		}
	}
	return out, nil
}

// NewParser returns a parser for one recording, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}
