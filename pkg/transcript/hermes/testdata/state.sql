-- Three sessions as Hermes Agent writes them into state.db (see schema.sql), written here for the
-- tests: a CLI session on OpenRouter (reasoning, a read, a search, a test run failing by its exit
-- code, a patch, an MCP call that failed, a hidden system note, per-model usage with a title
-- generation on another model, which Hermes does not add to the session's totals), its
-- continuation after a compression (the summary, a prompt, a delegated subagent, a title the
-- user gave), and a Telegram session of the gateway (its main loop's usage in the session's
-- totals only, with the provider's actual cost; a row for its title generation alone; a command
-- not found).
INSERT INTO sessions (id, source, model, model_config, parent_session_id, started_at, ended_at, end_reason, message_count,
    tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cwd, git_branch,
    billing_provider, billing_base_url, billing_mode, estimated_cost_usd, actual_cost_usd, cost_status, cost_source,
    title, title_source, api_call_count)
VALUES
('20260210_101500_a1b2c3', 'cli', 'anthropic/claude-sonnet-4.5', '{"reasoning_config":{"enabled":true,"effort":"medium"}}', NULL,
    1770718500.0, 1770719410.0, 'compression', 11, 5, 3000, 1200, 41000, 6100, 300, '/home/dev/uploader', 'fix-upload',
    'openrouter', 'https://openrouter.ai/api/v1', 'official_models_api', 0.0532, NULL, 'estimated', 'provider_models_api',
    'Fix the flaky upload test', 'llm', 5),
('20260210_103012_d4e5f6', 'cli', 'claude-sonnet-4-5', '{}', '20260210_101500_a1b2c3',
    1770719412.0, NULL, NULL, 5, 1, 900, 600, 12000, 0, 0, '/home/dev/uploader', 'fix-upload',
    'anthropic', 'https://api.anthropic.com', 'official_docs_snapshot', 0.0156, NULL, 'estimated', 'official_docs_snapshot',
    'Upload flush regression test', 'user', 2),
('20260211_090000_0f9e8d', 'telegram', 'gpt-5', NULL, NULL,
    1770800400.0, NULL, NULL, 5, 1, 5000, 700, 2000, 0, 200, NULL, NULL,
    'openai', 'https://api.openai.com/v1', 'official_docs_snapshot', 0.014, 0.0123, 'actual', 'provider_cost_api',
    'Calendar for today', 'llm', 2);

INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, task, api_call_count,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd,
    cost_status, cost_source, first_seen, last_seen)
VALUES
('20260210_101500_a1b2c3', 'anthropic/claude-sonnet-4.5', 'openrouter', 'https://openrouter.ai/api/v1', 'official_models_api', '', 4,
    3000, 1200, 41000, 6100, 300, 0.0532, 0, 'estimated', 'provider_models_api', 1770718508.2, 1770718561.9),
('20260210_101500_a1b2c3', 'google/gemini-2.5-flash', 'openrouter', 'https://openrouter.ai/api/v1', 'official_models_api', 'title_generation', 1,
    400, 50, 0, 0, 0, 0.0001, 0, 'estimated', 'provider_models_api', 1770718510.0, 1770718510.0),
('20260210_103012_d4e5f6', 'claude-sonnet-4-5', 'anthropic', 'https://api.anthropic.com', 'official_docs_snapshot', '', 2,
    900, 600, 12000, 0, 0, 0.0156, 0, 'estimated', 'official_docs_snapshot', 1770719420.5, 1770719467.0),
('20260211_090000_0f9e8d', 'gpt-5-mini', 'openai', 'https://api.openai.com/v1', 'official_docs_snapshot', 'title_generation', 1,
    180, 12, 0, 0, 0, 0.00007, 0, 'estimated', 'official_docs_snapshot', 1770800409.1, 1770800409.1);

INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason, reasoning,
    _compressed_summary, display_kind)
VALUES
('20260210_101500_a1b2c3', 'user', 'the upload test fails about one run in five; find out why', NULL, NULL, NULL, 1770718502.5, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'assistant', '', NULL,
    '[{"id": "call_01", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"tests/test_upload.py\"}"}}, {"id": "call_02", "type": "function", "function": {"name": "search_files", "arguments": "{\"pattern\": \"sleep(\", \"target\": \"content\", \"path\": \"src\"}"}}]',
    NULL, 1770718508.2, 'tool_calls', 'A one-in-five failure smells like a race between the upload and the flush.', 0, NULL),
('20260210_101500_a1b2c3', 'tool', '{"content": "     1|import time\n     2|from uploader import upload\n     3|\n     4|def test_upload(tmp_path):", "total_lines": 40, "file_size": 1180, "truncated": false}',
    'call_01', NULL, 'read_file', 1770718508.4, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'tool', '{"total_count": 1, "matches": [{"path": "src/uploader/upload.py", "line": 12, "content": "    time.sleep(0.05)  # wait for flush"}]}',
    'call_02', NULL, 'search_files', 1770718508.6, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'assistant', 'The upload waits a fixed 50 ms for the flush. Let me run the test.', NULL,
    '[{"id": "call_03", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"pytest tests/test_upload.py -x -q\", \"timeout\": 120}"}}]',
    NULL, 1770718515.0, 'tool_calls', NULL, 0, NULL),
('20260210_101500_a1b2c3', 'tool', '{"output": "F\n=== FAILURES ===\nAssertionError: file not flushed\n1 failed in 0.41s", "exit_code": 1, "error": null}',
    'call_03', NULL, 'terminal', 1770718516.3, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'assistant', '', NULL,
    '[{"id": "call_04", "type": "function", "function": {"name": "patch", "arguments": "{\"mode\": \"replace\", \"path\": \"/home/dev/uploader/src/uploader/upload.py\", \"old_string\": \"    time.sleep(0.05)  # wait for flush\", \"new_string\": \"    writer.flush_and_wait()\"}"}}, {"id": "call_05", "type": "function", "function": {"name": "mcp_github_search_issues", "arguments": "{\"query\": \"flaky upload repo:acme/uploader\"}"}}]',
    NULL, 1770718540.1, 'tool_calls', NULL, 0, NULL),
('20260210_101500_a1b2c3', 'tool', '{"success": true, "diff": "--- a/src/uploader/upload.py\n+++ b/src/uploader/upload.py\n@@ -12 +12 @@\n-    time.sleep(0.05)  # wait for flush\n+    writer.flush_and_wait()", "files_modified": ["src/uploader/upload.py"]}',
    'call_04', NULL, 'patch', 1770718540.3, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'tool', '{"error": "MCP server ''github'' is not connected"}',
    'call_05', NULL, 'mcp_github_search_issues', 1770718540.4, NULL, NULL, 0, NULL),
('20260210_101500_a1b2c3', 'assistant', 'Replaced the fixed sleep with an explicit flush wait; the race is gone.', NULL, NULL, NULL,
    1770718561.9, 'stop', NULL, 0, NULL),
('20260210_101500_a1b2c3', 'user', '[System note: the background memory review ran; nothing to save.]', NULL, NULL, NULL,
    1770718562.0, NULL, NULL, 0, 'hidden'),
('20260210_103012_d4e5f6', 'user', '[CONTEXT COMPACTION] Earlier turns were compacted. Summary: the upload test raced the flush; a fixed sleep in src/uploader/upload.py was replaced with writer.flush_and_wait().',
    NULL, NULL, NULL, 1770719412.1, NULL, NULL, 1, NULL),
('20260210_103012_d4e5f6', 'user', 'now add a regression test for it', NULL, NULL, NULL, 1770719417.0, NULL, NULL, 0, NULL),
('20260210_103012_d4e5f6', 'assistant', '', NULL,
    '[{"id": "call_06", "type": "function", "function": {"name": "delegate_task", "arguments": "{\"goal\": \"Write a regression test that fails if upload returns before the flush\", \"context\": \"see src/uploader/upload.py\"}"}}]',
    NULL, 1770719420.5, 'tool_calls', NULL, 0, NULL),
('20260210_103012_d4e5f6', 'tool', '{"results": [{"task_index": 0, "status": "completed", "summary": "Added tests/test_upload_flush.py"}], "total_duration_seconds": 42.1}',
    'call_06', NULL, 'delegate_task', 1770719463.0, NULL, NULL, 0, NULL),
('20260210_103012_d4e5f6', 'assistant', 'Added tests/test_upload_flush.py; it fails on the old code and passes now.', NULL, NULL, NULL,
    1770719467.0, 'stop', NULL, 0, NULL),
('20260211_090000_0f9e8d', 'system', 'You are Hermes, a helpful assistant.', NULL, NULL, NULL, 1770800400.5, NULL, NULL, 0, NULL),
('20260211_090000_0f9e8d', 'user', 'what''s on my calendar today?', NULL, NULL, NULL, 1770800401.0, NULL, NULL, 0, NULL),
('20260211_090000_0f9e8d', 'assistant', '', NULL,
    '[{"id": "call_07", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"gcalcli agenda today tomorrow\"}"}}]',
    NULL, 1770800404.0, 'tool_calls', NULL, 0, NULL),
('20260211_090000_0f9e8d', 'tool', '{"output": "bash: gcalcli: command not found", "exit_code": 127, "error": null}',
    'call_07', NULL, 'terminal', 1770800404.6, NULL, NULL, 0, NULL),
('20260211_090000_0f9e8d', 'assistant', 'I cannot reach your calendar from here: gcalcli is not installed.', NULL, NULL, NULL,
    1770800409.0, 'stop', NULL, 0, NULL);
