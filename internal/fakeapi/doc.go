// Package fakeapi is a scripted, offline fake of the Anthropic Messages API, the OpenAI Responses
// and Chat Completions APIs and the Gemini API. Tests use it as the upstream of the proxy and as
// the model behind the real Claude Code, Codex and Gemini CLIs (and OpenCode, Kilo, Cline, Qwen
// Code, Pi); observer-fakeapi serves it for anyone who wants to try the suite without a network or
// a key. It uses the standard library only.
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
//	                                 anthropic-version or x-api-key, the Gemini shape with
//	                                 x-goog-api-key, else the OpenAI shape
//	POST /v1beta/models/{model}:generateContent         Gemini, one JSON response (also /v1/...)
//	POST /v1beta/models/{model}:streamGenerateContent   Gemini stream: SSE with ?alt=sse (events
//	                                 end in CRLF pairs, as the real API's do), else one JSON array
//	                                 written element by element
//	POST /v1beta/models/{model}:countTokens             {"totalTokens": Input+CacheRead}
//	GET  /v1beta/models              a short list in the Gemini shape
//
// Anything else is a 404, and a body that is not a JSON object a 400, each in the provider's error
// shape: {"type":"error","error":{"type":...,"message":...}} for Anthropic,
// {"error":{"message":...,"type":"invalid_request_error"}} for OpenAI, {"error":{"code":404,
// "message":...,"status":"NOT_FOUND"}} for Gemini (a /v1beta path or an x-goog-api-key header).
//
// # Script
//
// The answer is decided from the request alone; the server keeps no conversation state. If the
// request offers a tool and its conversation holds no tool result yet, the answer is one tool call:
//
//   - Anthropic: Bash with {"command":"ls"} (ls, or the line --command gives, everywhere below) when offered, else the first client tool with {}
//     (server tools such as web_search_20250305 are never called). The message is a short text
//     block followed by the tool_use block, as real models answer; stop_reason is tool_use.
//   - OpenAI (both APIs) and Gemini (functionDeclarations): exec_command with its required string
//     parameter, read from the tool's JSON schema (Codex calls it cmd), set to "ls"; else shell
//     with {"command":["ls"]} ("ls" when the schema says command is a string); else a shell tool
//     that takes the command line as a string or a list, the first of pkg/client's registry that
//     is offered (run_shell_command: Gemini CLI, Qwen Code; bash: Pi, OpenCode, Kilo;
//     run_commands: Cline; exec: OpenClaw), with "ls", every other required parameter a value of
//     its schema; else the first function tool with {}. Gemini's
//     answer is a text part followed by the functionCall part.
//
// Otherwise the answer is final text: TextAfterTool once the conversation holds a tool result
// (Anthropic tool_result block; Responses *_call_output item; Chat message of role tool; Gemini
// functionResponse part), else TextNoTools. A request that asks for JSON output (Anthropic
// output_config.format, Responses text.format, Chat response_format, of type json_schema; Gemini
// generationConfig.responseMimeType application/json with responseJsonSchema or responseSchema,
// whose types are in capitals) gets a small value of its schema instead: Claude Code's
// session-title request asks for {"title": ...}, Gemini CLI's model router for a complexity score
// (numbers are 1, or the schema's minimum: the router rejects 0).
//
// Every response names the request's model, or Config.Model when set. Ids are unique within a
// Server: msg_fake_N, toolu_fake_N, resp_fake_N, fc_fake_N, call_fake_N, chatcmpl-fake-N,
// gemresp_fake_N (Gemini's responseId), and the request-id / x-request-id header req_fake_N.
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
//	Gemini     usageMetadata: promptTokenCount = Input + CacheRead (it includes the cached tokens),
//	           cachedContentTokenCount = CacheRead, candidatesTokenCount = Output - Reasoning,
//	           thoughtsTokenCount = Reasoning, totalTokenCount. Streaming: every chunk carries
//	           usageMetadata, the prompt count alone until the last chunk (with finishReason STOP),
//	           which carries it whole. toolUsePromptTokenCount is never sent.
//
// The cache-write buckets exist only for Anthropic; OpenAI and Gemini responses do not count them.
//
// # Plan limits
//
// With Config.Limits (or observer-fakeapi --limit-5h and --limit-7d, percent, resets
// --limit-5h-reset and --limit-7d-reset after its start), model responses carry the plan usage
// headers a subscription's answers carry; Server.SetLimits changes them while the server runs.
// Anthropic Messages: anthropic-ratelimit-unified-5h-utilization (a fraction, "0.42"), -5h-reset
// (Unix seconds), -5h-status (allowed, allowed_warning from 80%, rejected at 100%), the same for
// 7d, and anthropic-ratelimit-unified-status, the worst of the windows. OpenAI Responses and Chat:
// x-codex-primary-used-percent (0..100), -window-minutes (300), -reset-at (Unix seconds), and
// x-codex-secondary-* (10080 minutes), the names codex-rs's parse_rate_limit_snapshot reads. A
// window at 100% refuses the request with a 429 (rate_limit_error; usage_limit_reached), headers
// included. Codex 0.171 against a custom provider copies these headers into its rollout: every
// token_count then has rate_limits {primary, secondary: {used_percent, window_minutes,
// resets_at}, plan_type: null}.
//
// # Request log
//
// Server.Requests and Config.LogPath (one JSON line per request, file mode 0600) record each
// request: method, path, the client's identifying headers, the session id, provider, model,
// stream, whether the conversation held a tool result, the id returned, the usage numbers exactly
// as put in the response JSON, the status, and the action (tool_call, final_text, error, info).
// They never hold a credential: for x-api-key, x-goog-api-key and Authorization only their
// presence is recorded, and key-like query parameters (Gemini's ?key=) are redacted.
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
//   - wire_api="chat" is rejected ("no longer supported"); the clients below exercise
//     /v1/chat/completions. The non-streaming Anthropic shape and count_tokens were checked with
//     @anthropic-ai/sdk.
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
//
// # The other terminal agents (verified 2026-12-01, Linux x86_64, Node 20, as root)
//
// Each was installed with npm install -g and run in a git repository with a fresh HOME, under
// timeout 60 (some retry for ever when an answer displeases them). Each ran ls through its shell
// tool and printed "Done: the tool ran.".
//
// Gemini CLI (@google/gemini-cli@0.61.0), with $HOME/.gemini/settings.json holding
// {"security":{"auth":{"selectedType":"gemini-api-key"}}}:
//
//	GEMINI_API_KEY=test GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9999 GEMINI_CLI_TRUST_WORKSPACE=true \
//	  gemini -p "list the files" --yolo </dev/null
//
// It sends three requests, all to /v1beta with the key in x-goog-api-key (Authorization: Bearer
// instead with GEMINI_API_KEY_AUTH_MECHANISM=bearer): generateContent for its model router
// (gemini-3.5-flash-lite, a JSON answer {"complexity_reasoning", "complexity_score" >= 1}), then
// streamGenerateContent?alt=sse for gemini-3.1-pro-preview, twice (the tool call, the final text).
// User-Agent GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal) (GeminiCLI[-<client
// name>]/<version>/<model> (<platform>; <arch>; <surface>)), x-goog-api-client google-genai-sdk/1.30.0
// gl-node/v20.20.2, x-gemini-api-privileged-user-id (an installation id, not a session), and no
// session id at all. Node's fetch adds sec-fetch-mode: cors, never Origin or Sec-Fetch-Site.
//
// OpenCode (opencode-ai@1.18.33) with $HOME/.config/opencode/opencode.json defining a provider
// "fake" {"npm":"@ai-sdk/openai-compatible","options":{"baseURL":"http://127.0.0.1:9999/v1",
// "apiKey":"sk-test"},"models":{"gpt-5.2":{"tool_call":true}}}:
// OPENCODE_DISABLE_MODELS_FETCH=true opencode run "list the files" -m fake/gpt-5.2. Streaming chat
// with stream_options.include_usage; a title request first, then the tool call and the final text;
// User-Agent opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14, X-Session-Id and
// x-session-affinity ses_....
//
// Kilo (@kilocode/cli@7.7.7), the same file as $HOME/.config/kilo/kilo.json:
// kilo run --auto "list the files" -m fake/gpt-5.2 (without --auto it waits on a question). About
// 50 s on a loaded 2-core machine, most of it start-up; User-Agent Kilo-Code/7.7.7
// ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14, X-Title Kilo Code, HTTP-Referer
// https://kilocode.ai, X-Session-Id ses_... (title-ses_... on its session-title request).
//
// Cline (cline@3.0.65): cline auth -p openai -k sk-test -m gpt-5.2 -b http://127.0.0.1:9999/v1, then
// cline -c DIR "list the files" (auto-approve is the default). Its tool is run_commands
// {"commands": [...]}; User-Agent ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30
// runtime/bun/1.3.13, no session header.
//
// Qwen Code (@qwen-code/qwen-code@0.24.4, which asks for Node 22 but ran on 20):
// OPENAI_API_KEY=sk-test OPENAI_BASE_URL=http://127.0.0.1:9999/v1 OPENAI_MODEL=gpt-5.2
// qwen -p "list the files" --yolo --auth-type openai. User-Agent QwenCode/0.24.4 (linux; x64) and
// the OpenAI SDK's x-stainless-* headers, no session header.
//
// Pi (@mariozechner/pi-coding-agent@0.73.1) with $HOME/.pi/agent/models.json {"providers":{"fake":
// {"baseUrl":"http://127.0.0.1:9999/v1","api":"openai-completions","apiKey":"sk-test",
// "models":[{"id":"gpt-5.2"}]}}}: pi -p --provider fake --model gpt-5.2 "list the files". It sends
// only the OpenAI SDK's marks (User-Agent OpenAI/JS 6.26.0), no session.
//
// Crush (@charmland/crush) could not be tried: its install script downloads the binary from
// GitHub, which this machine cannot reach.
package fakeapi
