// Package cortex reads the local sessions of Snowflake's Cortex Code CLI (the `cortex` coding
// agent; client "cortex-code") into observer events, following the transcript contract. Cortex
// Code is closed source and talks only to Snowflake, so it does not run here: the reader is tested
// on fixtures written here to the format the published readers describe (agentsview's
// internal/parser/cortex.go and cortex_provider.go, a second converter of the same files, and
// Snowflake's Cortex Code CLI reference and settings pages; facts only).
//
// # Files
//
// Cortex Code keeps its state in $SNOWFLAKE_HOME/cortex (SNOWFLAKE_HOME overrides ~/.snowflake,
// the directory it shares with Snowflake's `snow` CLI; the same path on Linux and macOS), and its
// sessions in cortex/conversations: <session id>.json, the session document, rewritten whole,
// {session_id, title, working_directory, git_root, git_branch, connection_name, created_at,
// last_updated (RFC 3339), session_type, history: [...]}. When a session outgrows what Cortex
// writes in one document, the history moves to a companion <session id>.history.jsonl, one
// message per line, and the document keeps the metadata only. <session id>.back.<time>.json files
// are backups and are not read. Discover lists both the documents (Document sources) and the
// companions (line sources) of every root, flat and one directory deep (a user's record shows a
// conversations/<hash>/ level in a newer version), with the session id of the file name.
//
// A message is {role "user" or "assistant", id, user_sent_time (user messages only), content:
// [blocks]}; a block is {type "text", text, internalOnly (context Cortex injects), is_user_prompt},
// {type "thinking", thinking or text}, {type "tool_use", tool_use: {tool_use_id, name, input}} or
// {type "tool_result", tool_result: {tool_use_id, name, status ("success", or a failure),
// content: [text blocks]}} (tool results ride in user messages).
//
// # Token accounting
//
// None. Cortex Code keeps no token counts, model or cost in its session files (Snowflake bills
// its requests on the account, where ACCOUNT_USAGE views show them), so this reader emits no
// token_usage at all: no estimates. The proxy does not see its traffic (it goes to the Snowflake
// account's Cortex endpoints, which the CLI takes from connections.toml).
//
// # Actions and messages
//
// A tool_use block is an action (id event.ID(client, "action", session, tool_use_id)) with its
// result's outcome: status "success" (also "succeeded", "ok", "completed", "done") succeeded,
// "error", "errored", "failed", "failure", "denied", "rejected", "cancelled" or "canceled"
// failed, anything else no outcome (only "success" is seen in the published readers' samples);
// the output is the result's text blocks joined. Mapping (case-insensitive; Cortex's own names,
// then the names its permission patterns and hooks use): read, read_file, view read_file
// (file_path, path); write, write_file, create_file write_file; edit, multi_edit, multiedit,
// edit_file, str_replace edit_file; bash, shell, run_command, execute_command run_command
// (command); grep, search search_text (pattern " in " path); glob, ls, list_directory
// search_files (pattern " in " path); web_fetch, fetch web_fetch (url); web_search web_search
// (query); task, agent, subagent spawn_subagent (description, prompt); todo_write, todowrite,
// todo todo_update; ask_user, ask_user_question ask_user (question); mcp__<server>__<tool>
// mcp_call ("<server>/<tool>"); anything else, Snowflake's own snowflake_sql_execute and
// execute_sql included, unknown with the raw name in Tool (the first line of the query as the
// target of those two). In the document a call is paired with its result there; in a companion
// file the result, on a later line, is an event with the call's id carrying the outcome (the
// writer merges the two).
//
// A user message's text blocks (not internalOnly, not <system-reminder> text) are a user_prompt
// action (id event.ID(client, "action", session, "prompt", message key)) and a user message; an
// assistant's text an assistant message, its thinking a thinking message, each tool_use a
// tool_call message (Text the action's target). The message key is the message's id, else its
// index in the history; message ids event.ID(client, "message", session, key, block index), Seq
// the message's index × 64 + block index, the same in the document and in its companion.
//
// # Times, sessions and re-reads
//
// A user message's time is its user_sent_time; any other message takes the time before it, else
// the session's created_at, else its last_updated (a companion reads them from its document once,
// else it uses the file's modification time). The session is the file name's id (else the
// document's session_id); its directory working_directory (else git_root); the title the
// document's title unless it is Cortex's placeholder ("Chat for session: ..."). A document is read
// whole each time and emits only what is new or changed (transcript.Emitted); a companion is read
// line by line, its State keeping the message count and the last time. A document that does not
// parse, a line that is not a JSON object or not UTF-8, is ErrMalformed and loses nothing else.
// Targets, errors, outputs and messages are scrubbed and cut to 500 characters, 2 KB, 8 KB and
// 64 KB.
package cortex

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.CortexCode

// EnvHome is the variable Cortex Code (like Snowflake's CLI) reads for its ~/.snowflake directory.
const EnvHome = "SNOWFLAKE_HOME"

// Adapter reads Cortex Code's conversations.
type Adapter struct {
	// Roots are conversations directories.
	Roots []string
	// Prices is kept for the shared shape of adapters: Cortex Code logs no usage to price.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices.
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given conversations directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Cortex Code's conversations directory: $SNOWFLAKE_HOME/cortex/conversations,
// else ~/.snowflake/cortex/conversations (the same on macOS).
func DefaultRoots() []string {
	home := transcript.ExpandHome(strings.TrimSpace(os.Getenv(EnvHome)))
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			h = "."
		}
		home = filepath.Join(h, ".snowflake")
	}
	return []string{filepath.Join(home, "cortex", "conversations")}
}

// WatchDirs lists the directories a watcher should watch: the roots (a newer layout's
// per-project subdirectories appear below them).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// historySuffix ends a companion file's name.
const historySuffix = ".history.jsonl"

// sessionOf returns the session a file name holds and whether it is a companion: <id>.json or
// <id>.history.jsonl, not a backup (<id>.back.<time>.json) nor a hidden or temporary file.
func sessionOf(name string) (id string, companion, ok bool) {
	if strings.HasPrefix(name, ".") {
		return "", false, false
	}
	if stem, found := strings.CutSuffix(name, historySuffix); found {
		return stem, true, validID(stem)
	}
	if stem, found := strings.CutSuffix(name, ".json"); found {
		return stem, false, validID(stem)
	}
	return "", false, false
}

func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Discover lists the session documents and their companions of every root, flat and one
// directory deep, sorted by path. Each directory is listed once. A missing root is not an error;
// a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seenRoot := map[string]bool{}
	add := func(dir string, ents []fs.DirEntry, deeper bool) {
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if id, companion, ok := sessionOf(e.Name()); ok && transcript.IsFile(e, p) {
				out = append(out, transcript.Source{Client: Client, Path: p, SessionID: id, Document: !companion})
				continue
			}
			if deeper && !strings.HasPrefix(e.Name(), ".") && transcript.IsDir(e, p) {
				sub, _ := transcript.ReadDir(p)
				for _, s := range sub {
					sp := filepath.Join(p, s.Name())
					if id, companion, ok := sessionOf(s.Name()); ok && transcript.IsFile(s, sp) {
						out = append(out, transcript.Source{Client: Client, Path: sp, SessionID: id, Document: !companion})
					}
				}
			}
		}
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if seenRoot[real] {
				continue
			}
			seenRoot[real] = true
		}
		ents, err := os.ReadDir(abs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		add(abs, ents, true)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one document or companion file.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state)
}
