-- Later: the first conversation goes on (a prompt), and Warp rewrites its data with the new totals.
INSERT INTO ai_queries (id, exchange_id, conversation_id, start_ts, input, working_directory, output_status, model_id) VALUES
(7, '5b0e6c1a-0007-4f2e-9d3c-1a2b3c4d5e07', '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b', '2026-06-09 10:06:00.000000',
 '[{"Query":{"text":"also check signup.test.ts","context":[]}}]', '/home/dev/webapp', 'Completed', 'claude-4-5-sonnet');
UPDATE agent_conversations SET last_modified_at = '2026-06-09 10:06:31.500000', conversation_data =
 '{"server_conversation_token":"ct-91f0","conversation_usage_metadata":{"was_summarized":false,"context_window_usage":0.15,"credits_spent":4.9,"total_charged_usage":{"input_cost_in_cents":1.2,"output_cost_in_cents":2.25,"input_cache_read_cost_in_cents":1.8,"input_cache_write_cost_in_cents":0.7,"platform_cost_in_cents":0.6,"input_tokens":4000,"output_tokens":1500,"input_cache_read_tokens":60000,"input_cache_write_tokens":5011},"token_usage":[{"model_id":"claude-4-5-sonnet","warp_tokens":70511}]},"run_id":"run-5d2a"}'
WHERE conversation_id = '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b';
