// Package mcpwrap is `observer-mcp wrap -- CMD [ARGS...]`: a transparent proxy between an MCP
// client (on this process's stdin and stdout) and a stdio MCP server it runs as a child.
//
// # Transparency
//
// Traffic is relayed line by line (the stdio transport is newline-delimited JSON-RPC), byte for byte
// unchanged, in both directions, except for what the proxy owns:
//   - the tools/list answer, from which hidden and capped tools are removed and to which the trace
//     tools are appended (on the last page when the server paginates);
//   - the initialize answer, only when the server declares no tools capability: the proxy adds one
//     so that the client lists the trace tools, and then answers tools/list itself;
//   - tools/call of a trace tool, answered by the proxy and never forwarded;
//   - tools/call of a hidden or capped tool: a JSON-RPC error (-32602), never forwarded;
//   - the errors it makes itself (below).
//
// The relay is hand-written rather than built on the go-sdk's mcp.Client and mcp.Server: those decode
// and re-encode every message into typed values, which would change the bytes (field order, number
// formatting, fields the SDK does not know) and serialize request handling. The proxy decodes each
// line once with the go-sdk's jsonrpc.DecodeMessage to learn its kind and id, uses jsonrpc.ID as the
// key of the pending map, and encodes the messages it makes with jsonrpc.EncodeMessage.
//
// # Concurrency
//
// Requests are not serialized: the client reader forwards each request as soon as it is read, the
// server reader answers each one as its response arrives, matched by id through a map guarded only
// while an entry is added or taken. A slow tools/call does not delay any other request. Writes to
// either side hold that side's mutex for the one line they write.
//
// # Errors the client gets instead of a hang
//
//   - The server exits, crashes or closes its output: every pending request is answered at once with
//     -32000 (naming the exit status and the server's last stderr line), and so is every later
//     request; notifications are dropped. The proxy keeps running until the client closes its input,
//     so the client sees errors rather than a vanished transport mid-request.
//   - The server does not answer a request within CallTimeout ([mcp] call_timeout): -32001, and the
//     server is sent notifications/cancelled for it. A progress notification for the request restarts
//     its timer. A late answer is dropped (the client already has one).
//   - A line from the client that is not JSON: -32700 with a null id. JSON that is not a JSON-RPC 2.0
//     message (a batch array, a missing or wrong "jsonrpc" tag, an id that is neither a string nor a
//     number) or a request reusing the id of one still pending: -32600. A line longer than
//     MaxClientLine: -32700. Such lines are not forwarded,
//     because the proxy could not answer for them if the server then failed to. Blank lines are
//     skipped. Lines from the server that do not decode are relayed unchanged: they are the server's.
//
// # Recording
//
// Every tools/call the server answers (or fails to answer) becomes an event.MCPCall: the tool, the
// client's request id, the sizes and SHA-256 hashes of the raw argument and result bytes exactly as
// they crossed the wire, the duration, the error text (JSON-RPC error message, or the text of a
// result with isError) and a token estimate (result bytes / 4). Events are handed to a queue and
// published by one goroutine, so the relay never waits on the bus; with the bus down, package bus
// spools them to disk and publishes them when it is back. A full queue drops events with a warning
// rather than block traffic.
//
// The envelope's session is the client's: CLAUDE_CODE_SESSION_ID, which Claude Code sets for the
// stdio servers it spawns, else CODEX_SESSION_ID or CODEX_THREAD_ID when present (Codex 0.171 is
// not known to pass its session to MCP servers), else empty. The project is the git root of
// CLAUDE_PROJECT_DIR (also set by Claude Code), else of the working directory. The client name
// comes from the initialize request's clientInfo.name, mapped to observer's client names
// (claude-code, codex, cursor) where known.
//
// # Redaction
//
// Whatever the proxy keeps or publishes beyond sizes and hashes (error texts; arguments and results
// when raw payloads are on) goes through scrub.String and then the configured patterns ([mcp]
// redact), each match replaced by [REDACTED]. Hashes are always of the raw, unredacted bytes, so a
// replay can be compared with the original.
//
// # Trace tools
//
// observer_trace_history, observer_trace_stats, observer_trace_search and observer_trace_replay see
// only this process's calls (the current wrap session), kept in memory, the last History of them.
// They return metadata unless RawPayloads is on. The arguments of each call (up to MaxReplayBytes)
// are kept in memory regardless, only so that replay can re-send the call; replay runs the tool
// again, side effects included, and reports whether the result's hash equals the original's; that
// second call is recorded like any other (its request id starts with "observer-wrap-"), while the
// trace tools' own calls are not. A server tool with the same name as a trace tool wins.
// --max-tools caps the server's tools only; the trace tools can be hidden by name.
package mcpwrap
