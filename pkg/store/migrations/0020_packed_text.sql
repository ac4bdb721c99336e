-- Packed text (pack.go): tool outputs and the messages' text of at least 128 bytes are stored as
-- zstd frames (BLOBs) from now on; the rows stored before stay TEXT. unpack(x) reads either. The
-- two full-text indexes read their documents through views that unpack them (snippets, deletes),
-- so they are made again over those views and filled again from the start by the writer's
-- catch-up (fts_progress). A message without text (a tool call's place) is not indexed, nor in
-- its view.
CREATE VIEW action_output_text AS SELECT rowid AS id, unpack(output) AS output FROM action_outputs;
CREATE VIEW message_text AS SELECT id, unpack(text) AS text FROM messages WHERE text != '';
DROP TABLE tool_output_fts;
CREATE VIRTUAL TABLE tool_output_fts USING fts5(output, content='action_output_text', content_rowid='id');
DROP TRIGGER messages_text_update;
DROP TABLE message_fts;
CREATE VIRTUAL TABLE message_fts USING fts5(text, content='message_text', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
DELETE FROM fts_progress WHERE name IN ('tool_output', 'message');
-- A message read again with more text keeps the longer text (write.go); its index entry, when it
-- has one already, follows it. Only updates fire this: inserts are indexed in batches.
CREATE TRIGGER messages_text_update AFTER UPDATE OF text ON messages
WHEN old.id <= coalesce((SELECT last_id FROM fts_progress WHERE name = 'message'), 0)
BEGIN
    INSERT INTO message_fts (message_fts, rowid, text) SELECT 'delete', old.id, unpack(old.text) WHERE old.text != '';
    INSERT INTO message_fts (rowid, text) SELECT new.id, unpack(new.text) WHERE new.text != '';
END;
