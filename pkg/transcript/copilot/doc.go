// Package copilot reads the transcripts of GitHub Copilot into observer events, following the
// transcript contract: the event logs of the Copilot CLI (client "copilot-cli", npm package
// @github/copilot, command `copilot`; Adapter, New(DefaultRoots())) and the chat sessions of
// Copilot Chat in VS Code (client "copilot-vscode"; VSCodeAdapter, NewVSCode(DefaultVSCodeUserDirs())).
//
// # Sources read
//
// Copilot CLI: the npm package @github/copilot 1.0.34 (the version that wrote the corpus's log)
// and 1.0.60: their schemas/session-events.schema.json (every event type, its data, and whether
// it is "ephemeral", never written to disk) and their minified app.js (where the state directory
// is; how the log is appended, truncated on a rewind and migrated from the legacy layout; how the
// shutdown's modelMetrics are summed and where the sums start). Later versions (1.0.92, 1.0.102)
// ship a native binary instead of JavaScript, which could not be read here. The real CLI needs a
// GitHub sign-in and did not run here. VS Code: microsoft/vscode's
// src/vs/workbench/contrib/chat/common/model/chatSessionStore.ts (file locations and the two file
// forms), objectMutationLog.ts and chatSessionOperationLog.ts (the .jsonl form),
// chatService/chatService.ts (tool invocations, confirmation and response states), and
// microsoft/vscode-copilot-chat's src/extension/tools/common/toolNames.ts (tool ids and names).
//
// # Copilot CLI: files
//
// The CLI keeps its state in $COPILOT_HOME, else ~/.copilot, on every OS (Node's os.homedir(): no
// XDG or Library path; a --config-dir flag, which this package cannot see, moves it too). A
// session's event log is <state>/session-state/<session id>/events.jsonl; versions before late
// 2025 wrote <state>/session-state/<session id>.jsonl, which 1.0.34 still reads when it exists and
// migrates by copying it to the new place and deleting it. At start the CLI moves a .copilot
// directory it finds under $XDG_STATE_HOME (where earlier versions kept their state) to ~/.copilot
// and leaves a symbolic link behind. DefaultRoots lists $COPILOT_HOME/session-state,
// ~/.copilot/session-state and $XDG_STATE_HOME/.copilot/session-state; Discover lists both layouts
// of each root, a root reached twice through a link once, and names the session by the uuid of
// the file or directory (the parser takes session.start's sessionId, which wins). A log is written
// only once the session has a user message.
//
// Each line is one event {type, data, id (uuid), timestamp (RFC 3339), parentId, agentId (a
// sub-agent's)}, appended as it happens. Ephemeral events (deltas, assistant.usage, session.idle,
// session.title_changed, permission, progress and many more) are never written. Rewinding a
// session rewrites the file without the events after the rewind point: the caller then reads it
// from its start, and the deterministic ids store nothing twice. What is read:
//
//	session.start            {sessionId, startTime, selectedModel, context {cwd, gitRoot, branch}}:
//	                         a started session event
//	session.resume           {selectedModel, context}: an active session event
//	session.model_change     {newModel}: a session event with the model, when it changed
//	user.message             {content}: a user_prompt; none for an empty content, for autopilot's
//	                         nudge (its text only in transformedContent; isAutopilotContinuation
//	                         from 1.0.60) and for a message a skill injected (source "skill-...")
//	assistant.message        {messageId, model (1.0.60), toolRequests [{toolCallId, name,
//	                         arguments, mcpServerName}], requestId, parentToolCallId}: one action
//	                         per tool request
//	tool.user_requested,     {toolCallId, toolName, arguments}: the call when no message announced
//	tool.execution_start     it (a tool the user ran), else the call's start
//	tool.execution_complete  {toolCallId, success, result {content}, error {message}, model}: the
//	                         call's outcome
//	session.error            an api_error ("<errorType>: <message>")
//	abort                    a turn_aborted (its reason)
//	session.compaction_complete  {success, preCompactionTokens}: a context_compacted action and
//	                         the session's next epoch
//	session.shutdown         the token usage (below)
//
// Known and read for nothing: system.message, session.info, session.warning, session.mode_changed,
// session.task_complete (the task_complete tool call is the action), assistant.turn_start and
// turn_end, assistant.reasoning, subagent.*, hook.*, skill.invoked and the other types of the
// 1.0.34 schema; a type this package does not know (1.0.60 added some) is counted in
// Stats.Unknown. There is no title: session.title_changed is ephemeral (the CLI's workspace.yaml
// beside events.jsonl holds a summary, not read). A line that is not UTF-8, not a JSON object, or
// a known type whose data does not decode (a line cut short when the CLI was killed) is malformed:
// counted, reported, skipped; a record that would yield events before any time is known, too.
//
// # Copilot CLI: token accounting
//
// From 1.0.102 the CLI also writes session.usage_record, one per API call: {usage: {model,
// inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens, apiCallId (the
// response id: chatcmpl-..., resp_..., msg_...), isByok, apiEndpoint, ...}}, in the shutdown's
// shape and meaning (below). Each is one token_usage event, id event.ID("copilot-cli", "usage",
// session id, "call", apiCallId), MessageID the apiCallId, so the proxy's turn of the same response
// replaces it (and takes its session: the CLI sends none). The run's shutdown sums repeat them:
// per model, what the run's records counted (State) is taken out of the shutdown's figures, and
// only what is left (calls without a record) is counted from it; a run without usage records
// counts its shutdown whole, as below. A start or resume begins new sums (a run killed before its
// shutdown leaves none behind).
//
// Before 1.0.102 the only token counts on disk are session.shutdown's modelMetrics {<model>: {requests {count,
// cost (a premium request multiplier)}, usage {inputTokens, outputTokens, cacheReadTokens,
// cacheWriteTokens, reasoningTokens}}}, written when the CLI process exits. The CLI sums them from
// its assistant.usage events (ephemeral), each one API response's usage in the OpenAI Chat
// Completions shape Copilot's API answers with:
//
//	inputTokens       prompt_tokens
//	cacheReadTokens   prompt_tokens_details.cached_tokens
//	cacheWriteTokens  prompt_tokens_details.cache_creation_tokens
//	outputTokens      completion_tokens
//	reasoningTokens   completion_tokens_details.reasoning_tokens
//
// inputTokens therefore INCLUDES the cache reads and writes. Evidence:
// the CLI's own converter for a BYOK Anthropic provider builds prompt_tokens as input_tokens +
// cache_read_input_tokens + cache_creation_input_tokens; and the corpus's session (6 requests, a
// context of 35322 tokens at shutdown) has inputTokens 186809, about 31k a request, with
// cacheReadTokens 151738 inside it (net of cache, the prompts would be 56k each, more than the
// whole context). Observer's buckets: Input = inputTokens - cacheReadTokens - cacheWriteTokens
// (not below 0), CacheRead = cacheReadTokens, CacheCreation = cacheWriteTokens, Output =
// outputTokens (reasoning inside, as in completion_tokens), Reasoning = reasoningTokens.
//
// The sums start at zero in each CLI process: a resumed session replays its log, which holds no
// assistant.usage, so each session.shutdown covers the requests since the process started (the
// session's start, or its resume). Each shutdown yields one token_usage event per model with
// usage, id event.ID("copilot-cli", "usage", session id, model, shutdown record id), and the
// session's total is the sum over its shutdowns (keying by session and model alone would keep
// only one run's figures). Usage is per session run and model only: no message or request ids,
// no per-request figures (assistant.message's outputTokens are the only per-request counts, and
// the shutdown holds them too), so the proxy's figures cannot replace these request by request. A
// session still running, or whose process was killed, has no shutdown and no usage yet.
// Sub-agents' requests are inside the sums; a compaction's LLM call is not (its
// compactionTokensUsed is not added to the usage by the CLI, and is sometimes an estimate: not
// counted). Copilot bills premium requests, not tokens: the cost is what the tokens cost at list
// price in observer's pricing table at the shutdown's time (CostAt; claude-sonnet-4.6 and the like
// resolve), Reliability "approximate", or 0 and "unknown" for a model the table does not price.
//
// # Copilot CLI: actions and sessions
//
// A tool request is an action with id event.ID("copilot-cli", "action", session id, tool call id),
// its normalized type, the raw name in Tool, a target, the message id, the request id (the
// x-github-request-id), the model (the message's, else the session's current one; a sub-agent's
// call leaves it to the outcome), an input hash, and for a sub-agent's call AgentID (the tool call
// id of the task running it) and Sidechain. Its outcome is an event with the same id carrying
// Success, Error (error.message, 2 KB), Output (result.content, 8 KB), OutputSize, the model and
// DurationMs (from tool.execution_start, else from the message). The parser keeps the calls
// waiting for their outcome (at most 128) in State; an outcome whose call it does not know keeps
// the type unknown (the writer keeps the call's). Mapping (case-insensitive): view, show_file
// read_file; create write_file; edit, str_replace, insert, apply_patch, git_apply_patch edit_file
// (str_replace_editor by its command); bash, powershell run_command; grep, rg, search_code
// search_text; glob search_files; web_fetch web_fetch; web_search web_search; task spawn_subagent;
// update_todo todo_update; ask_user ask_user; task_complete task_complete; any other tool with an
// mcpServerName mcp_call; anything else (report_intent, read_bash, write_bash, sql, skill, ...)
// unknown. Targets: the path (relative to the project when inside it); the command; the pattern,
// with " in <path>"; the URL; the query; "<agent_type>: <description>"; the question; the summary;
// report_intent's intent; a patch's first file. A prompt's id is event.ID("copilot-cli", "action",
// session id, "prompt", record id). Events carry the record's time, source observer-watch, client
// copilot-cli, the session id and the project: project.Root of the cwd, or session.start's gitRoot
// when the cwd is not a repository on this machine.
//
// # VS Code Copilot Chat: files
//
// VS Code's chat service (VS Code's own, fed by the GitHub Copilot Chat extension)
// keeps one file per session, named by the session id, in <User>/workspaceStorage/<workspace
// hash>/chatSessions/ for a window with a folder or workspace, in
// <User>/globalStorage/emptyWindowChatSessions/ for an empty window, and, in older versions, in
// <User>/workspaceStorage/no-workspace/chatSessions/. <User> is ~/.config/<editor>/User on Linux
// ($XDG_CONFIG_HOME when set), ~/Library/Application Support/<editor>/User on macOS and
// %APPDATA%\<editor>\User on Windows, for the editors Code, Code - Insiders and VSCodium;
// $OBSERVER_VSCODE_USER_DIRS, User directories separated by the OS path list separator, replaces
// those. The session index in the workspace's state.vscdb is not read; a session VS Code dropped
// from its index but left on disk is still read. The workspace's folder is read from
// workspace.json beside chatSessions ({"folder": URI}, or {"workspace": URI of a .code-workspace
// file}: its folder).
//
// Two forms. Before VS Code 1.109, <session id>.json is the whole session (ISerializableChatData,
// version 3), rewritten in place at each save. From 1.109 (setting chat.useLogSessionStorage, on
// by default) <session id>.jsonl is an append log of the same object: its first line {kind: 0, v:
// the object}, then {kind: 1, k: path, v: value} (set), {kind: 2, k: path, v: items, i: index}
// (truncate the array at i when given, then append), {kind: 3, k: path} (delete); after 1024
// entries VS Code rewrites it as one kind 0 line. VS Code reads the .jsonl when both exist, and
// Discover then lists only the .jsonl. Both are Document sources: the caller hands the whole file
// to Record at each change; the parser replays a log to its object. A document that does not
// parse, or a log whose last line is cut short, is malformed (caught mid-write: read again at the
// next change) and emits nothing; a file over the caller's line limit (64 MiB) is skipped as
// malformed.
//
// The object: {version, sessionId, creationDate, customTitle, requests [{requestId, timestamp
// (unix ms), modelId, message {text}, response [parts], responseId, result {timings,
// errorDetails, metadata {toolCallRounds [{toolCalls [{name, arguments, id}]}],
// toolCallResults, cacheKey}}, modelState {value: 0 pending, 1 complete, 2 cancelled, 3
// failed, 4 needs input} (1.109 on; isCanceled before)}]}. Response parts: markdown (no kind),
// toolInvocationSerialized {toolId, toolCallId, invocationMessage, pastTenseMessage,
// isConfirmed, isComplete, resultDetails, toolSpecificData (terminal: the command line, its
// output and exit code; input: the raw arguments; subagent: its name and task), source}, and
// inlineReference, textEditGroup, codeblockUri, progressTaskSerialized, thinking and others,
// which yield nothing.
//
// # VS Code Copilot Chat: what is read
//
// Per request, at its timestamp: the message text is a user_prompt (id
// event.ID("copilot-vscode", "action", session id, "prompt", request id)); a session event with
// the model when the request's modelId differs from the previous request's; each tool invocation
// an action with id event.ID("copilot-vscode", "action", session id, tool call id), the raw tool id
// in Tool, its normalized type, a target, the request id, the response id, the request's model and
// a hash of the tool id and target (the model's arguments are only written with the result, at the
// request's end); a cancelled request a turn_aborted, a failed one (modelState 3, or
// errorDetails before 1.109) an api_error with the error's message. The session: a started event
// at creationDate with the workspace folder as cwd; a title event for customTitle (VS Code names
// the session after its first request unless the user renames it, and the file does not say
// which: TitleByUser false), at the first request's time.
//
// An invocation's target comes from its toolSpecificData (a terminal's command line, the raw input
// of an MCP or extension tool, a sub-agent's name and task), else its invocationMessage (the first
// file link, else the first `quoted` text: the path read, the text or files searched for), else
// the model's arguments in result.metadata.toolCallRounds, paired with the request's invocations
// in order when both list as many calls of the same types. The invocation is preferred because it
// is on disk while the request runs, before the result is. Its outcome: failed when it was denied
// or skipped (isConfirmed false, or of type 0 or 5), reported an error (resultDetails.isError),
// exited with a non-zero code (a terminal), or never completed in a request that was cancelled or
// failed; else succeeded once isComplete; unknown while it runs. Output: the terminal's output,
// else resultDetails' text, else the text of the paired toolCallResults entry. Mapping, by tool
// id or the model's name (case, underscores and a "copilot_" or "vscode_" prefix ignored):
// readFile, readNotebookCellOutput read_file; findFiles, file_search, listDirectory, list_dir,
// findTestFiles search_files; findTextInFiles, grep_search, searchCodebase, semantic_search,
// searchWorkspaceSymbols, listCodeUsages, githubRepo, getSearchResults search_text; createFile,
// createNewJupyterNotebook write_file; insertEdit, replaceString, multiReplaceString, applyPatch,
// editNotebook, editFiles edit_file; run_in_terminal, runTests, run_task, createAndRunTask,
// runNotebookCell run_command; fetchWebPage web_fetch; manage_todo_list todo_update; runSubagent
// spawn_subagent; get_confirmation, askQuestions ask_user; an MCP tool (source type "mcp", or an
// id starting "mcp_") mcp_call; anything else (getErrors, runVscodeCommand, ...) unknown. The
// project: project.Root of the workspace folder, else of the folder the extension named
// (result.metadata.cacheKey, a markdown part's baseUri); none for an empty window before its
// first answer.
//
// No token counts: the session file holds none (the extension does not persist usage; peers
// that show tokens for these sessions estimate them with a tokenizer). This package emits no
// token_usage for copilot-vscode, neither counts nor estimates; its API calls are counted only
// where the proxy sees them.
//
// Re-reads: the parser's State keeps the number of leading requests that were finished
// (complete with their result, cancelled or failed) at the last read with a hash of their ids,
// the title emitted, and fingerprints of the last 256 events emitted for the other requests. A
// re-read skips the finished requests (while the hash matches) and emits only events that are new
// or changed (a running tool again once it completes, under the same id), so a session saved after
// every step costs its new steps. Without State (lost, or a new parser) a document is read whole
// again, with the same ids.
//
// # Messages
//
// The conversation is one event.Message per message. Copilot CLI: a user.message that is a
// prompt (the same as the user_prompt action: its content, not transformedContent with the CLI's
// inserts; not autopilot's nudge nor a skill's message) is a user message; an assistant.message's
// reasoningText a thinking message (none when only reasoningOpaque, encrypted, is there; the
// assistant.reasoning records are not read), its content an assistant message, and each tool
// request a tool_call message (Tool the tool's name, ToolUseID the tool call id, Text the
// action's target), as is a tool the user ran (tool.user_requested, or an execution_start no
// message announced); a sub-agent's (parentToolCallId, else agentId) carry AgentID and Sidechain
// as its actions do; a successful compaction's summaryContent is a summary message. system.message
// is not a message. MessageID is the assistant message's messageId, Model as for its actions. Id
// event.ID("copilot-cli", "message", session id, record id, block) with blocks 0 reasoning, 1
// content, 2+i the i-th tool request; Seq the line's byte offset × 64 + block (it grows along the
// file and stays the same at a re-read).
//
// VS Code Copilot Chat: a request's message text is a user message (id event.ID("copilot-vscode",
// "message", session id, request id, "prompt")), emitted at once; its response's messages once
// the request is finished (complete with its result, cancelled or failed: a running response's
// text still grows, and a stored message is not rewritten): each run of markdown parts (with the
// inlineReference parts inside it written as the file's name) an assistant message, each run of
// thinking parts (their values joined; empty or encrypted-only ones give nothing) a thinking
// message, each tool invocation a tool_call message with its action's tool, target and tool call
// id. Other parts (progress, MCP servers starting, edits, code block URIs, ...) are not messages
// and do not break a run. MessageID is the responseId (the prompt's, the requestId), Model the
// request's modelId; id event.ID("copilot-vscode", "message", session id, request id, the index
// of the run's first part), Seq the request's index × 65536 + 1 + that part index (the prompt 0).
// All the requests of a session are at their request's timestamp.
//
// Every message's text is scrubbed and cut to 64 KB.
//
// # Both clients
//
// Targets, errors and outputs go through scrub.String and are cut to 500 characters, 2 KB and 8
// KB.
package copilot
