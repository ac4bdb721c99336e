-- The columns and tables Crush's later migrations add (a summary message per session, created_at
-- indexes, the provider and the summary flag of a message, a session's todos, the files read per
-- session), written for these tests from those migrations.
ALTER TABLE sessions ADD COLUMN summary_message_id TEXT;

CREATE INDEX IF NOT EXISTS idx_sessions_created_at ON sessions (created_at);
CREATE INDEX IF NOT EXISTS idx_messages_created_at ON messages (created_at);
CREATE INDEX IF NOT EXISTS idx_files_created_at ON files (created_at);

ALTER TABLE messages ADD COLUMN provider TEXT;
ALTER TABLE messages ADD COLUMN is_summary_message INTEGER DEFAULT 0 NOT NULL;
ALTER TABLE sessions ADD COLUMN todos TEXT;

CREATE TABLE IF NOT EXISTS read_files (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    read_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (path, session_id)
);

CREATE INDEX IF NOT EXISTS idx_read_files_session_id ON read_files (session_id);
CREATE INDEX IF NOT EXISTS idx_read_files_path ON read_files (path);
