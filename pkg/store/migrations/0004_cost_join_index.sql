-- cost's proxy/transcript join: a transcript row without a message id (Codex logs none) is the
-- proxy's turn when the proxy saw a turn of the same session within 30 s. With api_turns indexed
-- by session_id alone, each such row read every proxy turn of its session from the table (a
-- session of N turns: N*N row reads); indexed by (session_id, ts) the test is one index seek. The
-- new index also serves every session_id lookup the old one did, so the old one goes.
CREATE INDEX IF NOT EXISTS api_turns_session_ts ON api_turns(session_id, ts);
DROP INDEX IF EXISTS api_turns_session;
