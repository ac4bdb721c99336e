-- The providers' own figures of plan usage limits (event.Limit): one row per distinct snapshot of a
-- window (provider, window, member, reset, used share, status), first seen at ts and last seen at
-- last_seen. A snapshot seen again (every response repeats it until usage moves) only moves
-- last_seen, so the table holds the history of changes and the latest figure of each window.
CREATE TABLE limit_snapshots (
    id             INTEGER PRIMARY KEY,
    event_id       TEXT NOT NULL,
    ts             INTEGER NOT NULL,
    last_seen      INTEGER NOT NULL,
    provider       TEXT NOT NULL,
    window         TEXT NOT NULL,
    window_minutes INTEGER NOT NULL DEFAULT 0,
    used_pct       REAL NOT NULL,
    status         TEXT NOT NULL DEFAULT '',
    resets_at      INTEGER NOT NULL DEFAULT 0,
    plan           TEXT NOT NULL DEFAULT '',
    client         TEXT NOT NULL DEFAULT '',
    source         TEXT NOT NULL DEFAULT '',
    member         TEXT NOT NULL DEFAULT '',
    UNIQUE (provider, window, member, resets_at, used_pct, status)
);
CREATE INDEX limit_snapshots_latest ON limit_snapshots(provider, window, member, last_seen);
CREATE INDEX limit_snapshots_ts ON limit_snapshots(ts);
