-- The same session, later: the subagent's instruction and answer (another model), an abandoned
-- retry branching off the prompt (the session's own model, a routing mode), the final answer, and
-- a node whose chat_message was cut short.
INSERT INTO message_nodes (session_id, node_id, parent_node_id, chat_message, created_at, metadata) VALUES
('quiet-harbor-7f3a', 9, 8, '{"role":"user","content":"Find every sleep() call under test/"}', 1781000020, NULL),
('quiet-harbor-7f3a', 10, 9, '{"role":"assistant","content":"Found one, in test/login.test.ts.","tool_calls":[{"id":"call_grep_4","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"sleep\\\\(\",\"path\":\"/home/dev/webapp/test\"}"}}],"metadata":{"generation_model":"gpt-5","metrics":{"input_tokens":900,"output_tokens":20,"cache_read_tokens":0,"cache_creation_tokens":0}}}', 1781000024, NULL),
('quiet-harbor-7f3a', 11, 2, '{"role":"assistant","content":"Retrying.","metadata":{"metrics":{"input_tokens":5,"output_tokens":7}}}', 1781000025, NULL),
('quiet-harbor-7f3a', 12, 7, '{"role":"assistant","content":"The test waits a fixed 50 ms for the login to settle; replace the sleep with an await on the promise.","metadata":{"generation_model":"claude-sonnet-4-5-20250929","metrics":{"input_tokens":30,"output_tokens":120,"cache_read_tokens":24000,"cache_creation_tokens":300}}}', 1781000031, NULL),
('quiet-harbor-7f3a', 13, 12, '{"role":"assistant","content":"cut sh', 1781000032, NULL);
UPDATE sessions SET last_activity_at = 1781000032, main_chain_id = 12 WHERE id = 'quiet-harbor-7f3a';
