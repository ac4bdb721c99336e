-- A proxy turn of a client that sends no session id (Gemini CLI, Qwen Code, Cline) is linked by
-- the writer to the transcript message the client's own records name: the same client, model and
-- token figures within the join window (store.linkSessionless). transcript_message_id holds that
-- message's id, so the transcript row stops counting beside the turn (TurnsSQL), and the turn
-- takes the message's session.
ALTER TABLE api_turns ADD COLUMN transcript_message_id TEXT NOT NULL DEFAULT '';
CREATE INDEX api_turns_transcript_message ON api_turns(transcript_message_id);
