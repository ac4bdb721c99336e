-- One session's all-time cost (the status line after every message, a session's page,
-- `cost --session`) looks usage_sessions up by session id.
CREATE INDEX usage_sessions_session ON usage_sessions(session_id, client);
