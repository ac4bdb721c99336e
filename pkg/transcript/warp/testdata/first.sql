-- Three conversations: one on Warp's credits with total_charged_usage (two prompts and a tool
-- result sent back), an agent it spawned on the user's own OpenAI key (Warp charged nothing), and
-- an older one with per-model totals only, whose second exchange's input was cut short.
INSERT INTO ai_queries (id, exchange_id, conversation_id, start_ts, input, working_directory, output_status, model_id) VALUES
(1, '5b0e6c1a-0001-4f2e-9d3c-1a2b3c4d5e01', '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b', '2026-06-09 10:00:02.118734',
 '[{"Query":{"text":"why does the login test flake?","context":[{"Directory":{"pwd":"/home/dev/webapp","home_dir":"/home/dev"}}]}}]',
 '/home/dev/webapp', 'Completed', 'claude-4-5-sonnet'),
(2, '5b0e6c1a-0002-4f2e-9d3c-1a2b3c4d5e02', '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b', '2026-06-09 10:00:40.500000',
 '[{"ActionResult":{"id":"toolu_01","result":{"RequestCommandOutput":{"command":"npm test -- login","output":"1 failing","exit_code":1}}}}]',
 '/home/dev/webapp', 'Completed', 'claude-4-5-sonnet'),
(3, '5b0e6c1a-0003-4f2e-9d3c-1a2b3c4d5e03', '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b', '2026-06-09 10:03:11.000000',
 '[{"Query":{"text":"ok, fix it and rerun","context":[]}}]', '/home/dev/webapp', 'Completed', 'claude-4-5-sonnet'),
(4, '5b0e6c1a-0004-4f2e-9d3c-1a2b3c4d5e04', 'a2f9d810-5c4b-4a3e-b1d2-9e8f7a6b5c4d', '2026-06-09 10:04:00.250000',
 '[{"Query":{"text":"Run the login test 20 times and report the failures","context":[]}}]', '/home/dev/webapp', 'Completed', 'gpt-5'),
(5, '5b0e6c1a-0005-4f2e-9d3c-1a2b3c4d5e05', '0e4d3c2b-1a09-4f8e-a7d6-c5b4a3928170', '2026-05-20 08:12:45',
 '[{"Query":{"text":"list the largest files in this repo","context":[]}}]', '/home/dev/tools', 'Completed', 'auto'),
(6, '5b0e6c1a-0006-4f2e-9d3c-1a2b3c4d5e06', '0e4d3c2b-1a09-4f8e-a7d6-c5b4a3928170', '2026-05-20 08:13:02',
 '[{"Query":{"text":"and the old', '/home/dev/tools', 'Cancelled', 'auto');
INSERT INTO agent_conversations (id, conversation_id, conversation_data, last_modified_at) VALUES
(1, '7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b',
 '{"server_conversation_token":"ct-91f0","conversation_usage_metadata":{"was_summarized":false,"context_window_usage":0.12,"credits_spent":3.5,"platform_credits_spent":0.2,"total_provider_cost_in_cents":4.15,"credits_spent_for_last_block":1.1,"total_charged_usage":{"input_cost_in_cents":0.9,"output_cost_in_cents":1.35,"input_cache_read_cost_in_cents":1.2,"input_cache_write_cost_in_cents":0.7,"platform_cost_in_cents":0.5,"input_tokens":3000,"output_tokens":900,"input_cache_read_tokens":40000,"input_cache_write_tokens":5011,"web_search_count":0,"web_search_cost_in_cents":0.0},"token_usage":[{"model_id":"claude-4-5-sonnet","warp_tokens":48911,"byok_tokens":0,"custom_endpoint_tokens":0,"warp_token_usage_by_category":{"primary_agent":48911},"byok_token_usage_by_category":{},"custom_endpoint_token_usage_by_category":{}}],"tool_usage_metadata":{"run_command_stats":{"count":2,"commands_executed":2},"read_files_stats":{"count":1},"search_codebase_stats":{"count":0},"grep_stats":{"count":1},"file_glob_stats":{"count":0},"apply_file_diff_stats":{"count":1,"lines_added":3,"lines_removed":1,"files_changed":1},"write_to_long_running_shell_command_stats":{"count":0},"read_mcp_resource_stats":{"count":0},"call_mcp_tool_stats":{"count":0},"suggest_plan_stats":{"count":0},"suggest_create_plan_stats":{"count":0},"read_shell_command_output_stats":{"count":0},"use_computer_stats":{"count":0}},"context_window_segments":[]},"run_id":"run-5d2a"}',
 '2026-06-09 10:03:40.221000'),
(2, 'a2f9d810-5c4b-4a3e-b1d2-9e8f7a6b5c4d',
 '{"server_conversation_token":"ct-a7c2","conversation_usage_metadata":{"was_summarized":false,"context_window_usage":0.03,"credits_spent":0.0,"total_charged_usage":{"input_cost_in_cents":0.0,"output_cost_in_cents":0.0,"input_cache_read_cost_in_cents":0.0,"input_cache_write_cost_in_cents":0.0,"platform_cost_in_cents":0.0,"input_tokens":8000,"output_tokens":400,"input_cache_read_tokens":4000,"input_cache_write_tokens":0},"token_usage":[{"model_id":"gpt-5","warp_tokens":0,"byok_tokens":12400,"byok_token_usage_by_category":{"primary_agent":12400}}]},"parent_agent_id":"run-5d2a","agent_name":"Agent 1","parent_conversation_id":"7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b","run_id":"run-6e1b"}',
 '2026-06-09 10:05:12.004000'),
(3, '0e4d3c2b-1a09-4f8e-a7d6-c5b4a3928170',
 '{"server_conversation_token":"ct-0b11","conversation_usage_metadata":{"was_summarized":false,"context_window_usage":0.02,"credits_spent":1.0,"token_usage":[{"model_id":"auto","total_tokens":9120}],"tool_usage_metadata":{"run_command_stats":{"count":1,"commands_executed":1}}}}',
 '2026-05-20 08:13:10');
