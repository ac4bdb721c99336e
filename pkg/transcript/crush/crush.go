// Package crush reads the SQLite databases of Crush, Charm's coding agent (github.com/charmbracelet/crush,
// npm @charmland/crush, command `crush`), into observer events, following the transcript contract
// for Database sources (see package transcript, and package opencode, which reads OpenCode's the
// same way).
//
// The format below was learned from Crush's public source (its goose migrations, its sqlc queries,
// and the way its message service serializes parts), not from a running Crush: Crush cannot be
// installed on this project's machines (its npm package downloads its binary from GitHub, and the
// Go module proxy refuses its module). The tests build databases with the schema those migrations
// create (testdata/*.sql, written from them) and rows shaped as Crush writes them.
//
// # Files
//
// Crush keeps one database per project: <data directory>/crush.db, where the data directory is
// the nearest .crush directory from the working directory up to the git worktree's root, else
// <working directory>/.crush (options.data_directory in crush.json or --data-dir set another). Its
// global data directory is $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else ~/.local/share/crush
// on Linux and macOS alike (no ~/Library path), %LOCALAPPDATA%\crush on Windows; it holds
// crush.json (the settings Crush writes itself) and projects.json, {"projects": [{"path",
// "data_dir", "last_accessed"}]}, every project Crush ran in with its data directory. Discover
// reads projects.json in each global data directory and lists every data_dir's crush.db, plus a
// crush.db directly in the directory or in its .crush (the workspace of `crush server`).
// OBSERVER_CRUSH_DIRS, a list of directories separated by the OS path list separator, replaces the
// default global data directory; each may be a global data directory (projects.json) or a data
// directory (crush.db), so a project whose data directory is not registered can be named
// directly. A project's directory is its projects.json path, else the parent of a data directory
// named .crush.
//
// Crush writes in WAL mode (journal_mode WAL, one connection). Tables read: sessions (id,
// parent_session_id, title, created_at, and summary_message_id where the column exists) and
// messages (id, session_id, role, parts, model, created_at, updated_at, and provider and
// is_summary_message where they exist). Times are Unix seconds, set by SQLite (strftime('%s',
// 'now')), and a trigger sets updated_at again on every UPDATE. A message is updated in place
// while it streams (parts rewritten whole, finished_at set at the end).
//
// parts is a JSON array of {"type", "data"}: "text" {text, hidden}, "reasoning" {thinking, ...},
// "image_url" {url, detail}, "binary" {Path, MIMEType, Data}, "tool_call" {id, name, input (the
// arguments as a JSON string), type or provider_executed, finished}, "tool_result" {tool_call_id,
// name, content, data, mime_type, metadata (the tool's JSON metadata as a string), is_error} and
// "finish" {reason, time, message, details}. Some builds store the array zstd-compressed (a BLOB
// starting with the zstd magic number); it is decompressed. Roles: user (text, attachments, a
// finish "stop"), assistant (reasoning, text, tool calls, a finish), tool (the tool results of the
// assistant message before it) and system.
//
// # Reading while the client writes
//
// As for OpenCode (package opencode; package sqliteread does it for both): a pass opens the
// database read-only, with mode=ro and a busy timeout when a -wal file exists, else immutable=1
// with a check that the file did not change meanwhile; all its reads are one read transaction; a
// failed pass returns its error and leaves the watermark, and the next pass reads the same rows
// again. Columns added by later migrations are read only when PRAGMA table_info lists them, so a
// database of any version is read.
//
// # Watermark
//
// The parser's State is the watermark: for messages the largest updated_at read and, for the rows
// read at exactly that second, their ids with a hash of what was read (role, model and parts);
// for sessions the largest created_at and the ids read at it. A pass reads the messages with
// updated_at >= the watermark and passes over those whose hash is the one already read, so a
// message updated again within the same second (common: Crush rewrites a message many times a
// second while it streams) is read again, and yields the same event ids with the final content,
// which the writer merges. A clock that goes backwards hides the rows written meanwhile.
//
// # Token accounting
//
// What Crush records, and what it does not:
//
//	sessions.cost               cumulative dollars, priced by Crush from its catalog (catwalk) or
//	                            the provider's own figure (OpenRouter); a parent also receives its
//	                            sub-agents' cost, and title generation is added too
//	sessions.prompt_tokens      NOT a total: Crush overwrites it after every request with that
//	sessions.completion_tokens  request's prompt size (input + cache reads, in some versions + cache
//	                            writes) and output, the context window gauge of its UI (title
//	                            generation adds its own figures to them)
//	messages                    no usage at all in the released format
//
// So a Crush database says how many dollars a session cost, but not how many tokens any request,
// turn or session used, nor of which model: the per-request figures are overwritten. This reader
// emits no token usage from them (summing the snapshots would invent numbers, and a cost without
// tokens cannot be matched to, or deduplicated against, the proxy's turns). Route Crush through
// observer-proxy to meter it: its turns are exact there.
//
// Some builds of Crush's source record each request's usage on the assistant message's finish
// part (prompt_tokens = input + cache writes + cache reads, completion_tokens, cost: the field
// names are read as the session columns name them; no such database was seen). When a finish part
// carries them, the message yields one token_usage event, id event.ID("crush", "usage", message
// id): Input = prompt_tokens (Crush keeps no split of the cache, so cache reads and writes stay
// inside Input, which is then not net as observer's buckets mean it), Output = completion_tokens
// (reasoning inside, not split), Model the message's model, MessageID Crush's message id (no API
// response id is kept). The cost is Crush's own (it priced the cache apart), else observer's price
// of those figures (an upper bound when the provider cached), else 0 with Reliability "unknown";
// Reliability is "approximate". Crush sends no session id, so the store links the proxy's turn of
// the same request to this record only where the figures agree (no cache read or written); where
// they do not, both count the request.
//
// # Actions and sessions
//
// A tool_call part is an action, id event.ID("crush", "action", session id, tool call id), once
// the call is finished (or its message is), with the normalized type of its tool, the raw name in
// Tool, the target from its input, the tool call id, the message id and model and an input hash.
// The tool_result part with that tool_call_id (in the next, tool message) is an event with the same
// id carrying Success (!is_error, and a non-zero exit_code of the bash metadata is a failure),
// Error (2 KB) or Output (8 KB), OutputSize, and for bash the duration and start time from its
// metadata (start_time, end_time in Unix ms). Mapping (tools.go): view read_file; write
// write_file; edit, multiedit edit_file; bash run_command; grep search_text; glob, ls
// search_files; fetch, agentic_fetch, download web_fetch; sourcegraph, web_search web_search;
// agent spawn_subagent; todos todo_update; mcp_<server>_<tool> mcp_call; anything else
// (diagnostics, lsp_*, job_output, job_kill, ...) unknown.
//
// A user message's first text part that is not hidden is a user_prompt (id event.ID("crush",
// "prompt", message id)); an assistant message whose finish reason is "error" or "content_filter"
// an api_error, "canceled" or "permission_denied" a turn_aborted (id event.ID("crush", "finish",
// message id)); a summary message (is_summary_message, or the session's summary_message_id) a
// context_compacted action (id event.ID("crush", "compaction", message id)). Reasoning, assistant
// text, attachments and the other finish reasons yield no action (see Conversation); a part type or role this package
// does not know is counted in Stats.Unknown. A root session yields a started session event (the
// project's directory as cwd, the database as transcript path). A sub-agent's session (the agent
// or agentic_fetch tool: its id is the tool call's id, parent_session_id its parent; the title
// session "title-<parent>") belongs to its root session: its events carry the root's session id
// and the sub-session's id as AgentID. A title session's prompts are not the user's and yield
// nothing. The project is project.Root of the project's directory. Targets, errors and outputs are
// scrubbed.
//
// # Conversation
//
// A message row's parts are messages of the conversation, at the row's time, Seq its rowid (Crush
// inserts a conversation's messages in order, and ties their seconds) × 64 plus the part's index,
// MessageID the row's id, AgentID and Sidechain for a sub-agent's session, text scrubbed and kept
// to 64 KB: a user message's prompt (its first text part that is not hidden) is a user message
// (id event.ID("crush", "message", message id, part index)); once an assistant message is
// finished (its finish part), each text part is an assistant message (a summary in a summary
// message) and each reasoning part with thinking a thinking message, with the message's model;
// a tool_call part is a tool_call (id event.ID("crush", "message", session id, tool call id);
// Tool, ToolUseID and Text its action's) once it is finished or its message is. A message is
// stored once, as first read, so nothing is taken while it streams. Tool results (the action's
// output), hidden text, attachments, system messages and a title session's messages are none.
//
// Malformed data (parts that are not a JSON array, or a part that does not decode) is counted in
// Stats.Malformed and passed over: the watermark moves past it, and the ingest reports it.
//
// Reliability: actions as recorded by the client; no token figures in the released format
// (observer-proxy's turns are the usage of record); the finish-part usage above, where present,
// "approximate" with its cache inside Input.
package crush

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Crush events carry.
const Client = client.Crush

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvDirs overrides the directories Discover reads (see the package doc).
const EnvDirs = "OBSERVER_CRUSH_DIRS"

// Names of Crush's files.
const (
	dbName       = "crush.db"
	projectsName = "projects.json"
	dataDirName  = ".crush"
)

// Adapter finds and reads Crush's databases.
type Adapter struct {
	// Dirs are Crush's global data directories (holding projects.json) or data directories
	// (holding crush.db).
	Dirs []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table

	mu       sync.Mutex
	projects map[string]string // project directory by database path, from projects.json
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given directories.
func New(dirs []string) *Adapter { return &Adapter{Dirs: dirs} }

// Client returns "crush".
func (a *Adapter) Client() string { return Client }

// GlobalDataDir returns Crush's global data directory, decided as Crush decides it:
// $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else %LOCALAPPDATA%\crush on Windows and
// ~/.local/share/crush elsewhere.
func GlobalDataDir() string {
	if d := strings.TrimSpace(os.Getenv("CRUSH_GLOBAL_DATA")); d != "" {
		return d
	}
	if d := strings.TrimSpace(os.Getenv("XDG_DATA_HOME")); d != "" {
		return filepath.Join(d, "crush")
	}
	if runtime.GOOS == "windows" {
		local := os.Getenv("LOCALAPPDATA")
		if local == "" {
			local = filepath.Join(os.Getenv("USERPROFILE"), "AppData", "Local")
		}
		return filepath.Join(local, "crush")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".local", "share", "crush")
	}
	return filepath.Join(home, ".local", "share", "crush")
}

// DefaultDirs returns the directories in $OBSERVER_CRUSH_DIRS when set, else Crush's global data
// directory.
func DefaultDirs() []string {
	if v := strings.TrimSpace(os.Getenv(EnvDirs)); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, transcript.ExpandHome(d))
			}
		}
		return out
	}
	return []string{GlobalDataDir()}
}

// project is one entry of projects.json.
type projectEntry struct {
	Path    string `json:"path"`
	DataDir string `json:"data_dir"`
}

// readProjects reads dir/projects.json; a missing or damaged file is an empty list.
func readProjects(dir string) []projectEntry {
	data, err := os.ReadFile(filepath.Join(dir, projectsName))
	if err != nil || len(data) > 16<<20 {
		return nil
	}
	var list struct {
		Projects []projectEntry `json:"projects"`
	}
	if json.Unmarshal(data, &list) != nil {
		return nil
	}
	var out []projectEntry
	for _, p := range list.Projects {
		p.Path, p.DataDir = strings.TrimSpace(p.Path), strings.TrimSpace(p.DataDir)
		if p.DataDir == "" {
			continue
		}
		if !filepath.IsAbs(p.DataDir) {
			if !filepath.IsAbs(p.Path) {
				continue
			}
			p.DataDir = filepath.Join(p.Path, p.DataDir)
		}
		p.DataDir = filepath.Clean(p.DataDir)
		out = append(out, p)
	}
	return out
}

// dataDirs lists the data directories of the adapter's directories, with their project
// directories ("" when not known): each directory itself and its .crush, and every data_dir of
// its projects.json.
func (a *Adapter) dataDirs() (dirs []string, projects map[string]string) {
	projects = map[string]string{}
	seen := map[string]bool{}
	add := func(dir, proj string) {
		dir = filepath.Clean(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if proj == "" && filepath.Base(dir) == dataDirName {
			proj = filepath.Dir(dir)
		}
		if proj != "" && projects[dir] == "" {
			projects[dir] = filepath.Clean(proj)
		}
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	for _, d := range a.Dirs {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		for _, p := range readProjects(d) {
			add(p.DataDir, p.Path)
		}
		add(d, "")
		add(filepath.Join(d, dataDirName), "")
	}
	return dirs, projects
}

// WatchDirs lists the directories to watch: the adapter's directories and every data directory
// their projects.json names (read anew at each call, so a new project is watched at the next
// pass).
func (a *Adapter) WatchDirs() []string {
	out := append([]string(nil), a.Dirs...)
	for _, d := range a.Dirs {
		for _, p := range readProjects(d) {
			out = append(out, p.DataDir)
		}
	}
	return transcript.DedupePaths(out)
}

// Discover lists the crush.db of every data directory (see the package doc). A missing directory
// is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	dirs, projects := a.dataDirs()
	var out []transcript.Source
	var errs []error
	byDB := map[string]string{}
	for _, dir := range dirs {
		path := filepath.Join(dir, dbName)
		fi, err := os.Stat(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				errs = append(errs, err)
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if p := projects[dir]; p != "" {
			byDB[path] = p
		}
		out = append(out, transcript.Source{Client: Client, Path: path, Database: true})
	}
	a.mu.Lock()
	if a.projects == nil {
		a.projects = map[string]string{}
	}
	for k, v := range byDB {
		a.projects[k] = v
	}
	a.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// projectDir returns the directory of the project a database belongs to: its projects.json path,
// else the parent of a data directory named .crush, else "".
func (a *Adapter) projectDir(dbPath string) string {
	dbPath = filepath.Clean(dbPath)
	a.mu.Lock()
	p, ok := a.projects[dbPath]
	a.mu.Unlock()
	if ok {
		return p
	}
	_, projects := a.dataDirs()
	if p := projects[filepath.Dir(dbPath)]; p != "" {
		return p
	}
	if dir := filepath.Dir(dbPath); filepath.Base(dir) == dataDirName {
		return filepath.Dir(dir)
	}
	return ""
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// NewParser returns the parser of one database, resumed from its watermark when state is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
