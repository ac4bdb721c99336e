-- One session, first part: the main system prompt, a prompt, an answer with thinking and two tool
-- calls (a read and a command that fails its test), their results, an MCP call and its result,
-- and a subagent's root (its system prompt).
INSERT INTO sessions (id, working_directory, backend_type, model, agent_mode, created_at, last_activity_at, title, main_chain_id)
VALUES ('quiet-harbor-7f3a', '/home/dev/webapp', 'windsurf', 'adaptive', 'accept-edits', 1781000000, 1781000000, 'Fix the flaky login test', NULL);
INSERT INTO message_nodes (session_id, node_id, parent_node_id, chat_message, created_at, metadata) VALUES
('quiet-harbor-7f3a', 1, NULL, '{"role":"system","content":"You are Devin, a software engineer working in the user''s terminal."}', 1781000001, NULL),
('quiet-harbor-7f3a', 2, 1, '{"role":"user","content":"the login test fails one run in ten, find out why"}', 1781000002, NULL),
('quiet-harbor-7f3a', 3, 2, '{"role":"assistant","content":"I''ll read the test and run it.","thinking":"Look at the test first, then run it.","tool_calls":[{"id":"call_read_1","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"/home/dev/webapp/test/login.test.ts\"}"}},{"id":"call_sh_2","type":"function","function":{"name":"shell_command","arguments":"{\"command\":\"npm test -- login\"}"}}],"metadata":{"num_tokens":310,"generation_model":"claude-sonnet-4-5-20250929","metrics":{"input_tokens":12,"output_tokens":310,"cache_read_tokens":18044,"cache_creation_tokens":5210,"total_time_ms":4120}}}', 1781000009, NULL),
('quiet-harbor-7f3a', 4, 3, '{"role":"tool","tool_call_id":"call_read_1","content":"import { login } from \"../src/auth\";\nawait sleep(50);\nexpect(await login()).toBe(true);\n"}', 1781000010, NULL),
('quiet-harbor-7f3a', 5, 4, '{"role":"tool","tool_call_id":"call_sh_2","content":"  1 failing\n  login: timed out after 50ms\nexit code 1"}', 1781000014, NULL),
('quiet-harbor-7f3a', 6, 5, '{"role":"assistant","content":"","tool_calls":[{"id":"call_mcp_3","type":"function","function":{"name":"mcp__github__search_issues","arguments":"{\"query\":\"flaky login\"}"}}],"metadata":{"generation_model":"claude-sonnet-4-5-20250929","metrics":{"input_tokens":40,"output_tokens":55,"cache_read_tokens":23254,"cache_creation_tokens":null,"total_time_ms":1500}}}', 1781000016, NULL),
('quiet-harbor-7f3a', 7, 6, '{"role":"tool","tool_call_id":"call_mcp_3","content":[{"type":"text","text":"2 open issues mention a flaky login"}]}', 1781000018, NULL),
('quiet-harbor-7f3a', 8, NULL, '{"role":"system","content":"You are a subagent of Devin. Answer the task you are given and stop."}', 1781000019, NULL);
