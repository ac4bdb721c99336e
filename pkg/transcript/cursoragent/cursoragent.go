// Package cursoragent reads the agent transcripts that Cursor's agent writes under ~/.cursor/projects
// (client "cursor-agent") into observer events, following the transcript contract. Both the
// editor's Agent pane and the cursor-agent CLI (also installed as `agent`) write them; package
// cursor reads the editor's chats from its state.vscdb instead, and see "Editor and CLI" below
// for why this reader, by default, reads only the CLI's.
//
// Sources consulted: Cursor is closed source and documents neither file, so this reader follows
// what public readers of the files found and agree on, and stores only what they show (facts
// only, no code): agentsview (kenn-io/agentsview internal/parser/cursor.go,
// cursor_provider.go, the cursor path resolver and cursor_test.go: layouts, the JSONL form and
// the older text form, subagents), dino's Cursor Agent support (its "as Cursor Agent 2026.10.01
// writes its transcript" test lines, turn_ended statuses, CallMcpTool and CallDynamicTool,
// CURSOR_DATA_DIR and CURSOR_CONFIG_DIR), an analytics layer's "Harness Coverage" notes (no
// tool ids, no tool results, the <timestamp> tag, CallMcpTool's server and toolName), the jin
// project's "Cursor Data Examples" (real lines, the editor's ids being its composer ids,
// subagents/ beside subagentComposerIds), "How Cursor Stores Chat Data" (February 2026:
// transcripts named by composerId), the agentOS Cursor skill (jcontini/agentos-community
// skills/cursor: JSONL since about February 2026, Cursor's tool names, ids shared with
// state.vscdb) and Cursor's CLI configuration docs (CURSOR_CONFIG_DIR, XDG_CONFIG_HOME).
// No real transcript was available here: the tests run on fixtures written to that format.
//
// # Files
//
// Transcripts live in ~/.cursor/projects on Linux and macOS alike (Node's home directory, no XDG
// or Library path; %USERPROFILE%\.cursor on Windows), and the CLI writes them under
// $CURSOR_DATA_DIR/projects when that is set (DefaultRoots lists both). Below it,
// <slug>/agent-transcripts/ holds one conversation per file: <id>/<id>.jsonl (current releases),
// <id>.jsonl (flat, earlier), and a subagent's <parent id>/subagents/<child id>.jsonl (one level
// deep). <slug> is the workspace folder's absolute path without its leading separator, every run
// of characters other than letters and digits written "-" (/home/ann/my_app.v2 is
// home-ann-my-app-v2): the encoding loses information, so the folder is found as "Sessions and
// projects" says. <id> is the conversation's id: in the editor its composer id (the key of
// composerData:<id> in state.vscdb, and a subagent's id one of its parent's subagentComposerIds),
// in the CLI its chat id, the name of its chat directory <chats>/<md5 of the folder>/<id>/ (a
// store.db of protobuf-linked blobs, and in recent releases a meta.json {title, cwd,
// createdAtMs, updatedAtMs, hasConversation, isSubagent}), where <chats> is $CURSOR_CONFIG_DIR/chats,
// else $XDG_CONFIG_HOME/cursor/chats (Linux), else ~/.cursor/chats (DefaultChatsDirs). Transcripts
// written before about February 2026 are plain text, <id>.txt ("user:" and "assistant:" lines,
// "[Tool call]" and "[Tool result]" blocks): they are not read, as the public readers disagree on
// that format's details; a conversation with a .txt file only is not listed.
//
// # Records
//
// A .jsonl file is appended a line at a time as the conversation goes, each line one of:
//
//	{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Friday, Aug 14, 2026, 1:23 PM (UTC-5)</timestamp>\n<user_query>\n...\n</user_query>"}]}}
//	{"role":"assistant","message":{"content":[{"type":"text","text":"..."},{"type":"tool_use","name":"Shell","input":{"command":"ls","working_directory":"/home/ann/app"}}]}}
//	{"type":"turn_ended","status":"success"}   (also "error", with an "error" text, and "aborted")
//
// content may also be a plain string; a block may be thinking {thinking}; "metadata" lines are
// Cursor's bookkeeping and yield nothing. There are no message ids, no model, no token counts,
// no tool results (Cursor leaves them out: no output, no success or failure per call), mostly no
// tool-call ids, and no time but the <timestamp> tag of a user message (absent from the earliest
// JSONL). A line that is not UTF-8, not a JSON object or whose fields do not decode (a user or
// assistant line without a message, a content neither string nor blocks) is malformed
// (transcript.ErrMalformed): counted, reported, skipped. A
// line of another role or type is counted in Stats.Unknown and yields nothing.
//
// # Token accounting
//
// None. The transcripts hold no token figures of any kind, and neither do the CLI's meta.json nor,
// as far as agentsview's decoder of it reads, its store.db: Cursor's models run on Cursor's
// servers, which keep the usage (its web dashboard's usage export is what other tools read,
// online). This reader emits no token_usage event at all, no estimate: had it figures, they
// would be Reliability "unknown". Prices (Adapter.Prices, UsePrices) are accepted for the
// registry's sake and unused. The proxy cannot see this traffic either: cursor-agent talks to
// Cursor's own API, with no OpenAI or Anthropic base URL to point elsewhere.
//
// # Actions and messages
//
// A tool_use block is an action, id event.ID("cursor-agent", "action", session, agent, line
// offset, block index), with its normalized type, the raw name in Tool, a target, an input hash,
// the block's id in ToolUseID when it has one, and no outcome (Success nil: the record has none;
// a turn that ended in error is an api_error action of its own). Mapping (case-insensitive, "_"
// and "-" ignored): Read, ReadFile read_file (path); Write, CreateFile write_file (path);
// StrReplace, Edit, EditFile, MultiEdit, SearchReplace, ApplyPatch, EditNotebook, Delete,
// DeleteFile edit_file (path, target_notebook, else the first file a patch names); Shell, Bash,
// RunTerminalCmd run_command (command); Grep, GrepSearch, Ripgrep search_text (pattern " in "
// path); SemanticSearch, CodebaseSearch search_text (query); Glob, GlobFileSearch, FileSearch,
// LS, ListDir search_files (glob_pattern " in " target_directory); WebSearch web_search
// (search_term, query); WebFetch, Fetch web_fetch (url); Task, Subagent, Agent spawn_subagent
// (description, prompt); TodoWrite todo_update; AskQuestion, AskUserQuestion ask_user;
// CallMcpTool mcp_call ("<server>/<toolName>"), CallDynamicTool mcp_call
// ("<namespace>/<toolName>"), FetchMcpResource mcp_call ("<server>/<uri>"), mcp_* and mcp__*
// mcp_call; anything else (ReadLints, SwitchMode, GenerateImage, ...) unknown with the raw name.
// Paths are made relative to the project when inside it.
//
// A user line's text (its text blocks joined; the <timestamp> tag removed; the <user_query>
// wrapper's content when there is one) is a user_prompt action and a user message; in a
// subagent's file it is the task its parent gave, a user message of the subagent only (no
// prompt). An assistant's text blocks are assistant messages, its thinking blocks thinking
// messages, each tool_use a tool_call message (Tool, ToolUseID and Text as its action's). A
// turn_ended line with status "error" is a failed api_error action (Error: its error text), one with
// "aborted" (or "cancelled") a turn_aborted action; "success" yields nothing. Message ids are
// event.ID("cursor-agent", "message", session, agent, line offset, block index), Seq the line's
// byte offset × 64 + the block's index. A subagent's actions and messages carry its id in AgentID
// and Sidechain. Targets, errors and texts are scrubbed and cut to 500 characters, 2 KB and 64
// KB.
//
// # Times
//
// A line's time is that of the last <timestamp> tag read up to it (minutes, in the offset the tag
// names; kept in State so a later pass goes on from it), else the file's modification time when
// its parser was made: a watcher reading a growing file sees its new lines moments after they were
// written, while a first scan of an old file dates every line before the first tag at the file's
// last write. A line with neither (the file gone) yields nothing, counted in Stats.Unknown.
//
// # Sessions and projects
//
// The session is the conversation id (the file's, or for a subagent's file its parent's, the
// subagent's own id going to AgentID), so a subagent's work counts toward the session that
// spawned it. The first line of a conversation's own file yields a started session event (at the
// CLI's createdAtMs when its meta.json gives one, else at the line's time) with the cwd and the
// transcript path; a CLI chat's meta.json title (not Cursor's placeholder "New Agent") a title
// session event whenever it changes. The cwd is the CLI's meta.json cwd, else the directory the
// slug names, found by walking the file system from / through the entries whose names encode to
// the slug's next parts (none when two directories match, or none does: a deleted project), else
// the nearest directory at or above an absolute path in a tool's input (working_directory, cwd,
// target_directory, path, file_path, target_file) whose own encoding is the slug, from that line
// on (the events before it carry no project); the project is project.Root of the cwd.
//
// # Editor and CLI
//
// The editor's transcripts are the same conversations, under the same ids, as the composers
// package cursor reads from state.vscdb, which also holds their times, token counts (where
// Cursor records them), models and tool results; reading both would count each of the editor's
// prompts and tool calls twice under different ids (no token would be, there being none here).
// The CLI's conversations are in no state.vscdb, and this reader is the only one that sees them.
// So Discover lists, by default, only the conversations that have a CLI chat directory (their
// subagents' files with them), and lists every one with Adapter.IDE set (for a machine where
// package cursor does not run). A conversation whose chat directory is not there yet (Cursor
// creates it first) is listed by a later Discover. The chats directories are listed into an
// index kept on the Adapter (chat id → directory), which Discover and NewParser share: it is
// listed again only when a directory it listed changed its modification time, checked at each
// Discover and, when a parser's conversation is not in it, at most every two seconds; so a cold
// read of many conversations lists the chats directories once, not once per transcript.
//
// # Re-reads
//
// Ids depend on the session, the line's byte offset and the block, never on the parse: reading a
// file again yields the same ids, and a parser resumed from State reads on from the next line.
// Cursor appends to its transcripts; a file it rewrote is read again from its start by the caller
// (its fingerprints change), and its unchanged lines keep their ids. State is small JSON: the
// session, agent, cwd and project, whether the start was reported, the hash of the last title
// reported and the time of the last <timestamp> tag.
package cursoragent

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names. Package cursor owns "cursor" (the editor's state.vscdb).
const Client = client.CursorAgent

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Environment variables Cursor's CLI reads for its directories.
const (
	EnvDataDir   = "CURSOR_DATA_DIR"   // holds projects/ (transcripts); default ~/.cursor
	EnvConfigDir = "CURSOR_CONFIG_DIR" // holds chats/ and cli-config.json; default ~/.cursor
)

// Adapter reads Cursor's agent transcripts.
type Adapter struct {
	// Roots are Cursor projects directories (~/.cursor/projects).
	Roots []string
	// ChatsDirs are the CLI's chat directories (~/.cursor/chats): a conversation with a directory
	// there is the CLI's. nil means the "chats" directory beside each root.
	ChatsDirs []string
	// IDE lists the editor's conversations too (see the package doc: package cursor reads them).
	IDE bool
	// Prices is accepted for the registry's sake and unused: there is no token usage to price.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (unused likewise).
	CurrentPrices func() *pricing.Table

	chats chatCache // the CLI's chat directories, by chat id
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given projects directories, the CLI's chats beside them.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// Default returns an adapter on DefaultRoots and DefaultChatsDirs.
func Default() *Adapter { return &Adapter{Roots: DefaultRoots(), ChatsDirs: DefaultChatsDirs()} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the projects directories Cursor writes transcripts to: $CURSOR_DATA_DIR/projects
// when that is set (the CLI's), and ~/.cursor/projects (the editor's, and the CLI's by default),
// the same on Linux and macOS.
func DefaultRoots() []string {
	var roots []string
	if d := strings.TrimSpace(os.Getenv(EnvDataDir)); d != "" {
		roots = append(roots, filepath.Join(transcript.ExpandHome(d), "projects"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, ".cursor", "projects"))
	}
	return transcript.DedupePaths(roots)
}

// DefaultChatsDirs returns the directories the CLI may keep its chats in: $CURSOR_CONFIG_DIR/chats,
// $XDG_CONFIG_HOME/cursor/chats (Linux and BSD, where Cursor's docs say the CLI's configuration
// follows XDG_CONFIG_HOME), $CURSOR_DATA_DIR/chats and ~/.cursor/chats. Those that do not exist
// cost nothing.
func DefaultChatsDirs() []string {
	var dirs []string
	if d := strings.TrimSpace(os.Getenv(EnvConfigDir)); d != "" {
		dirs = append(dirs, filepath.Join(transcript.ExpandHome(d), "chats"))
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		if d := strings.TrimSpace(os.Getenv("XDG_CONFIG_HOME")); d != "" {
			dirs = append(dirs, filepath.Join(d, "cursor", "chats"))
		}
	}
	if d := strings.TrimSpace(os.Getenv(EnvDataDir)); d != "" {
		dirs = append(dirs, filepath.Join(transcript.ExpandHome(d), "chats"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cursor", "chats"))
	}
	return transcript.DedupePaths(dirs)
}

// WatchDirs lists the directories a watcher should watch: the roots and every project's
// agent-transcripts directory, where a new conversation's directory appears (the watcher also
// watches each directory a transcript is found in, and each new directory below a watched one).
func (a *Adapter) WatchDirs() []string {
	out := append([]string(nil), a.Roots...)
	for _, root := range a.Roots {
		projects, _ := transcript.ReadDir(root)
		for _, p := range projects {
			dir := filepath.Join(root, p.Name(), "agent-transcripts")
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				out = append(out, dir)
			}
		}
	}
	return out
}

// chatsDirs returns ChatsDirs, else the "chats" directory beside each root.
func (a *Adapter) chatsDirs() []string {
	if a.ChatsDirs != nil {
		return a.ChatsDirs
	}
	dirs := make([]string, 0, len(a.Roots))
	for _, r := range a.Roots {
		dirs = append(dirs, filepath.Join(filepath.Dir(filepath.Clean(r)), "chats"))
	}
	return transcript.DedupePaths(dirs)
}

// chatIndex maps every CLI chat id to its directory, the chats directories checked for changes
// first (the map is not to be changed).
func (a *Adapter) chatIndex() map[string]string {
	return a.chats.index(a.chatsDirs(), true)
}

// chatDir returns the CLI chat directory of conversation id, "" when it has none. The index is
// checked for changes when it lacks id, at most once per chatCheckEvery: a cold read of many
// conversations lists the chats directories once, not once per transcript.
func (a *Adapter) chatDir(id string) string {
	if !validID(id) {
		return ""
	}
	dirs := a.chatsDirs()
	if dir, ok := a.chats.index(dirs, false)[id]; ok {
		return dir
	}
	return a.chats.index(dirs, a.chats.due())[id]
}

// readDir lists a directory of the CLI's chats (a variable for the tests).
var readDir = transcript.ReadDir

// chatCheckEvery is how often, at most, a chat id missing from the index has the chats
// directories checked for changes (a variable for the tests).
var chatCheckEvery = 2 * time.Second

// chatCache is an index of the CLI's chat directories, <chats>/<md5 of the folder>/<chat id>/: it
// is listed again only when one of the directories it listed changed (its modification time).
type chatCache struct {
	mu      sync.Mutex
	key     string               // the chats directories it lists, joined
	ids     map[string]string    // chat id → its directory
	mods    map[string]time.Time // each directory listed → its modification time then (zero: absent)
	checked time.Time            // when the directories were last checked
}

// due reports whether the directories were last checked chatCheckEvery ago or more.
func (c *chatCache) due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.checked) >= chatCheckEvery
}

// index returns the index of dirs: built when there is none (or for other directories), and,
// when check is set, checked for changes (a stat of each directory it listed) and built again
// if any changed.
func (c *chatCache) index(dirs []string, check bool) map[string]string {
	key := strings.Join(dirs, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids != nil && c.key == key && (!check || !c.changed()) {
		if check {
			c.checked = time.Now()
		}
		return c.ids
	}
	c.key, c.ids, c.mods, c.checked = key, map[string]string{}, map[string]time.Time{}, time.Now()
	for _, chats := range dirs {
		c.mods[chats] = modTime(chats)
		hashes, _ := readDir(chats)
		for _, h := range hashes {
			hdir := filepath.Join(chats, h.Name())
			if !transcript.IsDir(h, hdir) {
				continue
			}
			c.mods[hdir] = modTime(hdir)
			ids, _ := readDir(hdir)
			for _, id := range ids {
				if dir := filepath.Join(hdir, id.Name()); transcript.IsDir(id, dir) {
					if _, ok := c.ids[id.Name()]; !ok {
						c.ids[id.Name()] = dir
					}
				}
			}
		}
	}
	return c.ids
}

// changed reports whether a directory the index listed changed since.
func (c *chatCache) changed() bool {
	for dir, mod := range c.mods {
		if !modTime(dir).Equal(mod) {
			return true
		}
	}
	return false
}

// modTime is a directory's modification time, zero when it cannot be read.
func modTime(dir string) time.Time {
	fi, err := os.Stat(dir)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// validID reports whether id can name a conversation: no separator, not "." or "..".
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`) && len(id) <= 200
}

// Discover lists the conversations' .jsonl transcripts (and their subagents'), sorted by path: by
// default only the CLI's (see the package doc), every one with IDE set. A missing root is not an
// error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var chats map[string]string
	if !a.IDE {
		chats = a.chatIndex()
	}
	wanted := func(id string) bool {
		if !validID(id) {
			return false
		}
		if a.IDE {
			return true
		}
		_, ok := chats[id]
		return ok
	}
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(path, session, agent string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, transcript.Source{Client: Client, Path: path, SessionID: session, AgentID: agent})
		}
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		projects, err := transcript.ReadDir(abs)
		if err != nil {
			errs = append(errs, err)
		}
		for _, p := range projects {
			tdir := filepath.Join(abs, p.Name(), "agent-transcripts")
			if !transcript.IsDir(p, filepath.Join(abs, p.Name())) {
				continue
			}
			ents, err := transcript.ReadDir(tdir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				continue // not a directory, or unreadable: nothing of Cursor's
			}
			for _, e := range ents {
				path := filepath.Join(tdir, e.Name())
				if transcript.IsDir(e, path) {
					id := e.Name()
					if !wanted(id) {
						continue
					}
					if main := filepath.Join(path, id+".jsonl"); isFile(main) {
						add(main, id, "")
					}
					subs, _ := transcript.ReadDir(filepath.Join(path, "subagents"))
					for _, s := range subs {
						child, ok := strings.CutSuffix(s.Name(), ".jsonl")
						if sp := filepath.Join(path, "subagents", s.Name()); ok && validID(child) && child != id && transcript.IsFile(s, sp) {
							add(sp, id, child)
						}
					}
					continue
				}
				if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && wanted(id) && transcript.IsFile(e, path) {
					add(path, id, "")
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// NewParser returns a parser for one transcript. It reads the file's modification time (the time
// of lines before any <timestamp> tag), the CLI chat's meta.json, and finds the cwd when State
// does not hold it yet.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	p, err := newParser(src, state)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(src.Path); err == nil {
		p.fileTime = fi.ModTime().UTC()
	}
	if dir := a.chatDir(p.st.Session); dir != "" {
		p.meta = readMeta(filepath.Join(dir, "meta.json"))
	}
	if p.st.Cwd == "" {
		if filepath.IsAbs(p.meta.Cwd) {
			p.setCwd(p.meta.Cwd)
		} else if dir := resolveSlug(p.slug); dir != "" {
			p.setCwd(dir)
		}
	}
	return p, nil
}
