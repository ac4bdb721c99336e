-- Session memory (issue 22, internal/memory).
--
-- session_summaries: one account per session epoch (a new epoch starts at each compaction), written
-- when the epoch ends: its session compacted again, went idle, was finalized or stopped. source is
-- 'extractive' (deterministic, from the stored records) or 'model' (a language model's, when
-- [memory] model is set); facts is the extractive summary's structure as JSON, text its account.
CREATE TABLE session_summaries (
    client     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    epoch      INTEGER NOT NULL,
    source     TEXT NOT NULL,
    project    TEXT NOT NULL,
    first_ts   INTEGER NOT NULL,
    last_ts    INTEGER NOT NULL,
    ended_by   TEXT NOT NULL,
    actions    INTEGER NOT NULL,
    text       TEXT NOT NULL,
    facts      TEXT NOT NULL,
    model      TEXT NOT NULL DEFAULT '',
    cost_usd   REAL NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (client, session_id, epoch, source)
) WITHOUT ROWID;
CREATE INDEX session_summaries_project ON session_summaries(project, last_ts);

-- observations: what a project's sessions have taught, one row per (project, kind, key). support
-- counts the sessions that confirm it, contradictions those that went against it; confidence is
-- support / (support + contradictions + 1) decayed by the time since last_seen. evidence is a JSON
-- list of {client, session_id, event_id} (the newest few). A forgotten row is never shown and not
-- brought back.
CREATE TABLE observations (
    id             INTEGER PRIMARY KEY,
    project        TEXT NOT NULL,
    kind           TEXT NOT NULL,
    key            TEXT NOT NULL,
    text           TEXT NOT NULL,
    support        INTEGER NOT NULL,
    contradictions INTEGER NOT NULL,
    confidence     REAL NOT NULL,
    first_seen     INTEGER NOT NULL,
    last_seen      INTEGER NOT NULL,
    evidence       TEXT NOT NULL,
    forgotten      INTEGER NOT NULL DEFAULT 0,
    updated_at     INTEGER NOT NULL,
    UNIQUE (project, kind, key)
);
CREATE INDEX observations_rank ON observations(project, confidence DESC);

-- memory_state: how far the memory loop has looked (the newest sessions.last_seen it handled), and
-- the projects whose observations wait to be recomputed.
CREATE TABLE memory_state (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE memory_projects (
    project TEXT PRIMARY KEY
) WITHOUT ROWID;
