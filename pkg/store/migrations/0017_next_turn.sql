-- A proxy turn without a session that no transcript message claims (Gemini CLI's model router
-- call) takes the session of the next turn of its client, with transcript_message_id '~next-turn'
-- (store.NextTurnMark). A transcript message that comes later looks among those turns for its own
-- (the writer, once per batch and per message): this index keeps that to the turns of the minutes
-- around it.
CREATE INDEX api_turns_next_turn ON api_turns(ts) WHERE transcript_message_id = '~next-turn';
