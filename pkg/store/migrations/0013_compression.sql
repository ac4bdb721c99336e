-- Request compression (issue 18): each decision's detail, the per-turn totals, and the stash of
-- the originals of compressed tool outputs (kept only with [compression] stash = true).
ALTER TABLE compression_events ADD COLUMN mode TEXT NOT NULL DEFAULT '';
ALTER TABLE compression_events ADD COLUMN turn_event_id TEXT NOT NULL DEFAULT '';
ALTER TABLE compression_events ADD COLUMN message_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE compression_events ADD COLUMN count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE compression_events ADD COLUMN score REAL NOT NULL DEFAULT 0;
ALTER TABLE compression_events ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE compression_events ADD COLUMN stash_id TEXT NOT NULL DEFAULT '';

ALTER TABLE api_turns ADD COLUMN compressed_bytes_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_turns ADD COLUMN compressed_bytes_after INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_turns ADD COLUMN compression_tokens_saved INTEGER NOT NULL DEFAULT 0;

-- One row per original: the same output compressed in many requests is stashed once.
CREATE TABLE compression_stash (
    id         INTEGER PRIMARY KEY,
    stash_id   TEXT NOT NULL UNIQUE,
    ts         INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    mechanism  TEXT NOT NULL,
    content    TEXT NOT NULL
);
CREATE INDEX compression_stash_ts ON compression_stash(ts);
