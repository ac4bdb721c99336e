// Package fakeapi is a scripted, offline fake of the Anthropic Messages API and the OpenAI
// Responses and Chat Completions APIs. Tests use it as the upstream of the proxy and as the model
// behind the real Claude Code and Codex CLIs; observer-fakeapi serves it for anyone who wants to
// try the suite without a network or a key. It uses the standard library only.
//
// # Endpoints
//
//	HEAD /, GET /                    200 (Claude Code probes HEAD / before its first request)
//	POST /v1/messages[?beta=true]    Anthropic message, streaming (SSE) or not
//	POST /v1/messages/count_tokens   {"input_tokens": Input+CacheRead+CacheWrite5m+CacheWrite1h}
//	POST /v1/responses               OpenAI Responses, streaming (SSE) or not
//	GET  /v1/responses + Upgrade     426: no WebSocket; Codex falls back to HTTP
//	POST /v1/chat/completions        OpenAI Chat Completions, streaming or not
//	GET  /v1/models                  a short list, in the Anthropic shape when the request carries
//	                                 anthropic-version or x-api-key, else the OpenAI shape
//
// Anything else is a 404, and a body that is not a JSON object a 400, each in the provider's error
// shape: {"type":"error","error":{"type":...,"message":...}} for Anthropic,
// {"error":{"message":...,"type":"invalid_request_error"}} for OpenAI.
//
// # Script
//
// The answer is decided from the request alone; the server keeps no conversation state. If the
// request offers a tool and its conversation holds no tool result yet, the answer is one tool call:
//
//   - Anthropic: Bash with {"command":"ls"} when offered, else the first client tool with {}
//     (server tools such as web_search_20250305 are never called). The message is a short text
//     block followed by the tool_use block, as real models answer; stop_reason is tool_use.
//   - OpenAI (both APIs): exec_command with its required string parameter, read from the tool's
//     JSON schema (Codex calls it cmd), set to "ls"; else shell with {"command":["ls"]} ("ls"
//     when the schema says command is a string); else the first function tool with {}.
//
// Otherwise the answer is final text: TextAfterTool once the conversation holds a tool result
// (Anthropic tool_result block; Responses *_call_output item; Chat message of role tool), else
// TextNoTools. A request that asks for JSON output (Anthropic output_config.format, Responses
// text.format, Chat response_format, of type json_schema) gets a small value of its schema
// instead: Claude Code's session-title request asks for {"title": ...}.
//
// Every response names the request's model, or Config.Model when set. Ids are unique within a
// Server: msg_fake_N, toolu_fake_N, resp_fake_N, fc_fake_N, call_fake_N, chatcmpl-fake-N, and the
// request-id / x-request-id header req_fake_N.
//
// # Usage
//
// Every model response carries Config.Usage, translated into each provider's accounting:
//
//	Anthropic  input_tokens = Input, cache_read_input_tokens = CacheRead,
//	           cache_creation_input_tokens = CacheWrite5m + CacheWrite1h,
//	           cache_creation = {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens},
//	           output_tokens = Output. Streaming: message_start carries the input buckets and
//	           output_tokens 1; message_delta the final output_tokens and again the input buckets
//	           (without the breakdown), as the real API does.
//	Responses  input_tokens = Input + CacheRead (OpenAI input includes cached tokens),
//	           input_tokens_details.cached_tokens = CacheRead, output_tokens = Output (includes
//	           reasoning), output_tokens_details.reasoning_tokens = Reasoning, total_tokens.
//	           Streaming: only response.completed carries usage.
//	Chat       prompt_tokens = Input + CacheRead, prompt_tokens_details.cached_tokens,
//	           completion_tokens = Output, completion_tokens_details.reasoning_tokens, total_tokens.
//	           Streaming: usage only when the request sets stream_options.include_usage, in a last
//	           chunk with empty choices (the other chunks then carry "usage": null).
//
// The cache-write buckets exist only for Anthropic; OpenAI responses do not count them.
//
// # Request log
//
// Server.Requests and Config.LogPath (one JSON line per request, file mode 0600) record each
// request: method, path, the client's identifying headers, the session id, provider, model,
// stream, whether the conversation held a tool result, the id returned, the usage numbers exactly
// as put in the response JSON, the status, and the action (tool_call, final_text, error, info).
// They never hold a credential: for x-api-key and Authorization only their presence is recorded,
// and key-like query parameters are redacted.
//
// # Running the real clients against it (verified with Claude Code 2.1.197 and Codex 0.171.0)
//
// Both were installed with npm install -g @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0
// on Linux x86_64 with Node 20, and run as root in a container. npm warns that Claude Code's
// postinstall script was not allowed to run; the claude binary works anyway. TestRealClients runs
// both (OBSERVER_CLAUDE_BIN and OBSERVER_CODEX_BIN override PATH; it skips when they are missing
// unless OBSERVER_REQUIRE_CLIENTS=1); each takes about a second.
//
//	go run ./cmd/observer-fakeapi --addr 127.0.0.1:9999 --log /tmp/fake.jsonl
//
// Claude Code, in a git repository (a fresh HOME works; no login or onboarding is needed):
//
//	ANTHROPIC_BASE_URL=http://127.0.0.1:9999 ANTHROPIC_API_KEY=sk-test \
//	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 HOME=$TMPHOME \
//	claude -p "list the files" --allowedTools "Bash(ls:*)"
//
// It prints "Done: the tool ran." and exits 0. What it sends:
//
//   - HEAD / first, with User-Agent Bun/1.4.0 and no credentials (so its record has no provider).
//   - POST /v1/messages?beta=true, always streaming, with x-api-key, anthropic-version 2023-06-01,
//     anthropic-beta (claude-code-20250219, context-1m-2025-08-07, interleaved-thinking, ...),
//     X-Claude-Code-Session-Id, X-App: cli, User-Agent "claude-cli/2.1.197 (external, sdk-cli)"
//     and x-stainless-* headers. The body has model claude-opus-4-8 (the default), max_tokens
//     64000, thinking {"type":"adaptive"}, context_management, output_config {"effort":"high"},
//     about two dozen tools including Bash, a system array whose first block is the text
//     "x-anthropic-billing-header: cc_version=...; cc_entrypoint=sdk-cli;", and metadata.user_id,
//     a JSON string {"device_id":...,"account_uuid":"","session_id":...} whose session_id equals
//     the header. messages holds role "system" entries between user turns, also after the
//     tool_result. The second request appends the assistant tool_use and a user tool_result block.
//   - Without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, one more request comes first: the session
//     title, with tools [], thinking disabled and output_config.format a json_schema
//     {"title": string}. The fake's JSON answer becomes an {"type":"ai-title"} transcript record.
//     That turn costs tokens (it is in --output-format json's modelUsage) but has no assistant
//     record in the transcript: a proxy sees three turns where the transcript shows two.
//   - As root, --dangerously-skip-permissions is refused unless IS_SANDBOX=1; --allowedTools
//     "Bash(ls:*)" is enough for the round trip.
//
// Its transcript, $HOME/.claude/projects/<cwd with / as ->/<session id>.jsonl, has one assistant
// line per content block, each with the same message.id, requestId (the request-id response
// header) and usage: the fake's tool-call message gives two lines. The usage is the
// message_start usage overwritten by message_delta's input_tokens and
// cache_creation_input_tokens (a cache_read_input_tokens of 0 in message_delta did not overwrite
// the start value); output_tokens is the final one. The cache_creation 5m/1h breakdown comes only
// from message_start: without it Claude Code writes zeros there. Against the fake, which streams
// everything at once, every line carried the final output_tokens.
//
// Codex ignores OPENAI_BASE_URL; it needs a custom provider:
//
//	HOME=$TMPHOME OPENAI_API_KEY=sk-test codex exec -m gpt-5.2-codex -c model_provider=x \
//	  -c 'model_providers.x={name="X",base_url="http://127.0.0.1:9999/v1",env_key="OPENAI_API_KEY",wire_api="responses"}' \
//	  -c analytics.enabled=false --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
//	  --json "list the files" </dev/null
//
// It runs "/bin/bash -lc ls", prints an agent_message "Done: the tool ran." and exits 0. Notes:
//
//   - Without -m it may pick a model whose shell tool is a custom exec tool, not exec_command.
//   - The key is sent as Authorization: Bearer. Every request has session-id, thread-id and
//     x-client-request-id (all the thread id), originator codex_exec, x-codex-window-id
//     "<thread>:0", x-codex-beta-features, x-codex-turn-metadata (JSON: installation_id,
//     session_id, turn_id, sandbox, sandbox_mode, workspaces, model, ...), User-Agent
//     "codex_exec/0.171.0 (...)", Accept text/event-stream and Accept-Encoding zstd,gzip.
//   - POST /v1/responses, always streaming. The body has input (developer messages, the
//     environment context, the prompt; then function_call and function_call_output items),
//     tools (function exec_command with required string cmd, write_stdin, request_user_input,
//     view_image, get_goal, create_goal, update_goal; a namespace multi_agent_v1; web_search),
//     tool_choice auto, parallel_tool_calls true, reasoning {"summary":"auto"}, store false,
//     include ["reasoning.encrypted_content"], prompt_cache_key (the thread id) and
//     client_metadata (session_id, thread_id, turn_id, ...).
//   - A custom provider tries the WebSocket only with supports_websockets=true in its table: then
//     GET /v1/responses with Upgrade: websocket comes first, the 426 makes Codex log "failed to
//     connect to Responses WebSocket" on stderr and fall back to HTTP, and it still exits 0.
//     Without that key it goes straight to HTTP. It never asked for /v1/models; --json instead
//     reports an item of type error, "Model metadata for `gpt-5.2-codex` not found", harmlessly.
//   - wire_api="chat" is rejected ("no longer supported"), so no agent CLI here exercises
//     /v1/chat/completions; that shape was checked with the openai npm SDK (v4), and the
//     non-streaming Anthropic shape and count_tokens with @anthropic-ai/sdk.
//   - In this container ls also ran with the default sandbox, with -s danger-full-access, and
//     without --skip-git-repo-check in a non-git directory; the flags above are kept for
//     robustness. With stdin not a terminal Codex prints "Reading additional input from
//     stdin...": give it </dev/null, an open pipe would keep it waiting. A HOME under /tmp gives
//     a harmless warning about PATH aliases.
//
// Its session file, $HOME/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl, has an
// event_msg of type token_count after each response, with info.last_token_usage and the running
// info.total_token_usage: input_tokens (cached included), cached_input_tokens,
// cache_write_input_tokens, output_tokens, reasoning_output_tokens (inside output), total_tokens.
// cache_write_input_tokens is read from usage.input_tokens_details.cache_write_tokens (a field
// name found in the 0.171 binary, not sent by this fake, so 0 here). The --json turn.completed
// event carries the turn's summed usage.
package fakeapi
