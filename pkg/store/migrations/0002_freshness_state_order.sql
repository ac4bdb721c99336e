-- Read freshness and the order of session states.
--
-- actions: observer-watch classifies each read_file result it sees live (fresh, stale,
-- changed_by_agent, changed_elsewhere, missing) and hashes the file a read, edit or write left on
-- disk. Empty and 0 when not known (history, calls without their result).
ALTER TABLE actions ADD COLUMN freshness TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN content_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN content_size INTEGER NOT NULL DEFAULT 0;
CREATE INDEX actions_freshness ON actions(freshness, ts) WHERE freshness != '';

-- sessions.state_at is the time (ms) of the session event whose state the row shows. A session
-- event replaces the state only when it is not older, so events that reach the writer out of order
-- (a Stop hook and the watcher's last records, a restarted watcher) leave the newest state. 0 on
-- rows whose state no session event set yet.
ALTER TABLE sessions ADD COLUMN state_at INTEGER NOT NULL DEFAULT 0;
