// Package vscopilot reads the traces GitHub Copilot in Visual Studio (the Windows IDE, not VS
// Code; client "copilot-vs") writes on disk into observer events, following the transcript
// contract. Visual Studio runs on Windows only, so the reader is tested on fixtures written here
// to the format the published readers describe (agentsview's internal/parser visual-studio
// Copilot reader and its tests, and a second reader's VS Copilot adapter, whose notes record
// Visual Studio 18.10's files read on a real machine; facts only).
//
// # Files
//
// Visual Studio 18 (2026) writes its Copilot telemetry as OpenTelemetry spans in the OTLP/JSON
// encoding to <temp>/VSGitHubCopilotLogs/traces/<time>_<hex>_VSGitHubCopilot_traces.jsonl, one
// file per Visual Studio instance, appended one export batch per line, where <temp> is the user's
// temporary directory (.NET's Path.GetTempPath: %TMP%, else %TEMP%, else %USERPROFILE%; usually
// %LOCALAPPDATA%\Temp). Visual Studio 2022's Copilot has no such exporter. Spans of one
// conversation may be spread over several files (and a span flushed to two), and one file holds
// many conversations. Agentsview also reads a Visual Studio 2026 per-solution layout,
// <solution>/.vs/<name>/copilot-chat/<x>/sessions/<conversation id>, one conversation per file in
// the same line format: a root naming such a sessions directory is read too. Visual Studio
// honours no variable for these directories, so observer's OBSERVER_COPILOT_VS_DIRS (a list
// separated by the OS path list separator) replaces the defaults; each entry is a traces
// directory, its VSGitHubCopilotLogs parent, a temporary directory holding that, or a sessions
// directory. The defaults are Windows ones (%TMP%, %TEMP% and %LOCALAPPDATA%\Temp, each with
// VSGitHubCopilotLogs\traces); on Linux and macOS there is none (observer may still read traces
// copied there through the variable). The files are temporary: Windows' cleanup may delete them.
//
// A line is {resourceSpans: [{resource: {attributes}, scopeSpans: [{scope, spans: [...]}]}]}
// (resource service.name "vs-copilot"); a span is {traceId, spanId, name, kind,
// startTimeUnixNano, endTimeUnixNano (decimal strings), attributes: [{key, value: {stringValue |
// intValue (a decimal string) | doubleValue | boolValue}}], status: {code, message}}. Spans read:
// "chat <model>" (gen_ai.operation.name chat: one request to the model) with
// gen_ai.conversation.id, gen_ai.request.model, gen_ai.response.model, gen_ai.response.id,
// gen_ai.usage.*, gen_ai.input.messages and gen_ai.output.messages (JSON text: [{role, parts:
// [{type "text", content} | {type "tool_call", id, name, arguments} | {type "reasoning",
// content}]}]) and copilot_chat.root_request_id (the user's turn); "execute_tool <tool>" with
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.call.arguments (JSON text) and
// gen_ai.tool.call.result. "invoke_agent" spans summarize a whole turn without usage and are not
// read (reading them would count the turn twice); a span without a conversation id is skipped.
//
// # Token accounting
//
// A chat span's usage follows OpenTelemetry's GenAI conventions, which GitHub's OpenAI-style API
// fills from its usage: gen_ai.usage.input_tokens is the whole prompt, the cached part included;
// gen_ai.usage.cache_read.input_tokens the part read from the cache;
// gen_ai.usage.cache_creation.input_tokens (not seen in Visual Studio's files so far) the part
// written to it; gen_ai.usage.output_tokens the answer, reasoning included
// (gen_ai.usage.reasoning.output_tokens, where present, is part of it). So Input = input_tokens
// minus both cache figures (never below 0), CacheRead, CacheCreation and Output as named,
// Reasoning the reasoning figure. Visual Studio's documentation does not state the inclusion;
// the reading above is OTel's and the API's convention. One token_usage event per chat span with
// usage, id event.ID(client, "usage", conversation, traceId, spanId): a span flushed to two files
// is one message, the copy with the larger output kept by the writer. Priced from the pricing
// table at the span's end for the response model (else the request model), "approximate";
// "unknown" at cost 0 for a model the table does not price. Copilot bills premium requests, not
// tokens: the cost is the list price of the tokens. The proxy does not see the traffic (it goes
// to api.githubcopilot.com).
//
// # Actions and messages
//
// The last user message of a chat span's input is the turn's prompt: a user_prompt action and a
// user message, keyed by copilot_chat.root_request_id (else a hash of the text), so the chat spans
// of one turn (each repeats it) make one prompt. The output's text parts are assistant messages,
// its reasoning parts thinking messages, each tool_call part an action (id event.ID(client,
// "action", conversation, call id)) and a tool_call message (id event.ID(client, "message",
// conversation, "tool_call", call id)). An execute_tool span is the same call's action and
// message (the same ids: the writer merges them) with its result: status code 2 (error) or an
// error.type attribute failed, else a result succeeded, else no outcome; Output the result's text
// (a JSON result's Content, Text, Output, Result or Value), DurationMs the span's length. Mapping:
// get_file, read_file read_file (filename, file, path, filePath); create_file write_file;
// apply_patch, edit_file, replace_string_in_file, insert_edit_into_file edit_file (the path, else
// a patch's first file); file_search, list_dir search_files (query, queries, path);
// text_search, code_search, grep_search, semantic_search search_text (query); get_web_pages,
// fetch_webpage web_fetch (the first URL); run_command_in_terminal, run_command, runInTerminal,
// run_in_terminal run_command (command), run_build run_command ("build"); mcp_* and mcp__*
// mcp_call (the rest of the name, "<server>/<tool>" where "__" parts them: Visual Studio's naming
// of MCP tools in these spans is not published); anything else unknown with the raw name in Tool.
//
// # Times, sessions and re-reads
//
// The session is the conversation id; its start (a session event at the first span seen of it)
// and each new model (a session event) are emitted once per parser, the conversations and models
// seen kept in State (bounded: a conversation forgotten emits its start again, under the same
// id). Visual Studio records no working directory here, so events carry no project. Prompts are
// at their span's start, usage, replies and calls at its end. A line that is not UTF-8, not a JSON
// object or does not decode is ErrMalformed and loses nothing else; ids depend only on the span,
// so a re-read or a copy stores nothing twice. Targets, errors, outputs and messages are scrubbed
// and cut to 500 characters, 2 KB, 8 KB and 64 KB.
package vscopilot

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.CopilotVS

// EnvDirs is observer's variable for the trace directories (Visual Studio honours none).
const EnvDirs = "OBSERVER_COPILOT_VS_DIRS"

// Names of Visual Studio's directories and files.
const (
	logsDir     = "VSGitHubCopilotLogs"
	tracesDir   = "traces"
	traceMark   = "_VSGitHubCopilot_traces"
	sessionsDir = "sessions"
)

// Adapter reads Visual Studio Copilot's trace files.
type Adapter struct {
	// Roots are traces directories (or their VSGitHubCopilotLogs parent, a temporary directory
	// holding that, or a VS 2026 sessions directory).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the directories of $OBSERVER_COPILOT_VS_DIRS when it is set, else, on
// Windows, VSGitHubCopilotLogs\traces in %TMP%, %TEMP% and %LOCALAPPDATA%\Temp; else none.
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	var out []string
	if goos != "windows" {
		return nil
	}
	var temps []string
	for _, k := range []string{"TMP", "TEMP"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			temps = append(temps, v)
		}
	}
	if len(temps) == 0 {
		if v := strings.TrimSpace(os.Getenv("USERPROFILE")); v != "" {
			temps = append(temps, v)
		}
	}
	if v := strings.TrimSpace(os.Getenv("LOCALAPPDATA")); v != "" {
		temps = append(temps, filepath.Join(v, "Temp"))
	}
	for _, t := range temps {
		out = append(out, filepath.Join(t, logsDir, tracesDir))
	}
	return transcript.DedupePaths(out)
}

// traceDir resolves a root to the directory its files are in: <root>/VSGitHubCopilotLogs/traces,
// else <root>/traces, else the root.
func traceDir(root string) string {
	for _, d := range []string{filepath.Join(root, logsDir, tracesDir), filepath.Join(root, tracesDir)} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return root
}

// WatchDirs lists the directories a watcher should watch: each root's trace directory.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, traceDir(r))
	}
	return transcript.DedupePaths(out)
}

// isTrace reports a trace file's name: *_VSGitHubCopilot_traces*.jsonl.
func isTrace(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && strings.Contains(name, traceMark) && !strings.HasPrefix(name, ".")
}

// isConversationID reports a VS 2026 session file's name: a conversation uuid.
func isConversationID(name string) bool {
	if len(name) != 36 {
		return false
	}
	for i, c := range name {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// Discover lists the trace files of every root (and the conversation files of a sessions
// directory), sorted by path; each directory is listed once. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		dir, err := filepath.Abs(traceDir(root))
		if err != nil {
			dir = traceDir(root)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		sessions := strings.EqualFold(filepath.Base(dir), sessionsDir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case isTrace(e.Name()) && transcript.IsFile(e, p):
				out = append(out, transcript.Source{Client: Client, Path: p})
			case sessions && isConversationID(e.Name()) && transcript.IsFile(e, p):
				out = append(out, transcript.Source{Client: Client, Path: p, SessionID: strings.ToLower(e.Name())})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one trace file.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
