-- A session's title (sessions.title): the title the user gave it in the client (title_source
-- 'user'), else the one the client made ('client'), the newest of either winning, else its first
-- recognisable prompt, cleaned and cut ('prompt', the earliest; event.CleanTitle). title_at is the time of the
-- record the title came from. The titles of the sessions already stored are filled from their
-- first prompts after this migration (store.fillTitles).
ALTER TABLE sessions ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN title_source TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN title_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX actions_prompts ON actions(session_id, ts) WHERE type = 'user_prompt';
-- A session without a model of its own (Claude Code's records name one per message) takes the
-- model of most of its main-thread usage rows.
UPDATE sessions SET model = coalesce((SELECT u.model FROM token_usage u
    WHERE u.session_id = sessions.session_id AND u.client = sessions.client AND u.model != '' AND u.agent_id = ''
    GROUP BY u.model ORDER BY count(*) DESC, u.model LIMIT 1), '')
  WHERE model = '';
