-- The conversation of each session (event.Message): prompts, replies, thinking, tool calls in
-- their place (the call's input is its action's target, its result the action's output: joined by
-- tool_use_id, stored once) and compaction summaries, scrubbed, under the same retention as the
-- rest. A conversation reads in (ts, seq) order.
CREATE TABLE messages (
    id          INTEGER PRIMARY KEY,
    event_id    TEXT NOT NULL UNIQUE,
    ts          INTEGER NOT NULL,
    seq         INTEGER NOT NULL DEFAULT 0,
    client      TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    project     TEXT NOT NULL DEFAULT '',
    role        TEXT NOT NULL,
    text        TEXT NOT NULL DEFAULT '',
    message_id  TEXT NOT NULL DEFAULT '',
    tool_use_id TEXT NOT NULL DEFAULT '',
    tool        TEXT NOT NULL DEFAULT '',
    agent_id    TEXT NOT NULL DEFAULT '',
    sidechain   INTEGER NOT NULL DEFAULT 0,
    model       TEXT NOT NULL DEFAULT '',
    member      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX messages_session ON messages(session_id, ts, seq);
CREATE INDEX messages_ts ON messages(ts);
-- Full-text search over the messages' text (prompts, replies, thinking, commands and paths of tool
-- calls, summaries), filled in batches off the write path (fts_progress 'message'), like the
-- tool outputs' index.
CREATE VIRTUAL TABLE message_fts USING fts5(text, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
-- A message read again with more text (a client that rewrites a reply as it streams: Cursor, Cline)
-- keeps the longer text (write.go); its index entry, when it has one already, follows it. Only
-- updates fire this: inserts are indexed in batches.
CREATE TRIGGER messages_text_update AFTER UPDATE OF text ON messages
WHEN old.id <= coalesce((SELECT last_id FROM fts_progress WHERE name = 'message'), 0)
BEGIN
    INSERT INTO message_fts (message_fts, rowid, text) SELECT 'delete', old.id, old.text WHERE old.text != '';
    INSERT INTO message_fts (rowid, text) SELECT new.id, new.text WHERE new.text != '';
END;
