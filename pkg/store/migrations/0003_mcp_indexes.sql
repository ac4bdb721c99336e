-- Indexes for observer-mcp's query tools, each of which must answer from an index range rather
-- than a table scan (1M actions: a scan costs ~1 s, an index range well under 20 ms). 0001 already
-- has actions(ts), actions(session_id, ts) and actions(type, ts); these add the project-scoped
-- paths the tools take.

-- A file's or a command's history in a project (check_file_freshness, get_file_history,
-- check_command_freshness, and "did this failure get fixed later").
CREATE INDEX actions_project_target ON actions(project, target, ts);

-- The newest actions of one type in a project (get_last_test_result, edits since a command,
-- get_project_patterns).
CREATE INDEX actions_project_type ON actions(project, type, ts);

-- Failures only, which are few: get_failure_context and the failing-command patterns.
CREATE INDEX actions_project_failed ON actions(project, ts) WHERE success = 0;

-- A project's latest session, the default scope when the agent names none; and session lookup by
-- id (or id prefix) without the client, which leads the primary key.
CREATE INDEX sessions_project ON sessions(project, last_seen);
CREATE INDEX sessions_id ON sessions(session_id);

-- A session's lifecycle (epochs, compactions) for get_session_recovery_context.
CREATE INDEX session_events_session ON session_events(session_id, ts);

CREATE INDEX failure_context_project ON failure_context(project, ts);
