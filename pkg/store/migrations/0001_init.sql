-- The core tables. Every event table has a unique event id, which makes inserts idempotent, and
-- carries the envelope columns its queries need. Rows append in rowid order; the random ids live
-- only in a narrow unique index. Times are integer milliseconds since the epoch (UTC).

CREATE TABLE projects (
    path        TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL
);

CREATE TABLE sessions (
    client            TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    project           TEXT NOT NULL DEFAULT '',
    first_seen        INTEGER NOT NULL,
    last_seen         INTEGER NOT NULL,
    state             TEXT NOT NULL DEFAULT 'active',
    cwd               TEXT NOT NULL DEFAULT '',
    transcript_path   TEXT NOT NULL DEFAULT '',
    parent_session_id TEXT NOT NULL DEFAULT '',
    epoch             INTEGER NOT NULL DEFAULT 0,
    model             TEXT NOT NULL DEFAULT '',
    events            INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (client, session_id)
) WITHOUT ROWID;
CREATE INDEX sessions_last_seen ON sessions(last_seen);

CREATE TABLE session_events (
    id          INTEGER PRIMARY KEY,
    event_id          TEXT NOT NULL UNIQUE,
    ts                INTEGER NOT NULL,
    client            TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    project           TEXT NOT NULL,
    source            TEXT NOT NULL,
    state             TEXT NOT NULL,
    cwd               TEXT NOT NULL,
    transcript_path   TEXT NOT NULL,
    parent_session_id TEXT NOT NULL,
    epoch             INTEGER NOT NULL,
    model             TEXT NOT NULL,
    git_branch        TEXT NOT NULL
);

CREATE TABLE actions (
    id     INTEGER PRIMARY KEY,
    event_id     TEXT NOT NULL UNIQUE,
    ts           INTEGER NOT NULL,
    client       TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    project      TEXT NOT NULL,
    source       TEXT NOT NULL,
    type         TEXT NOT NULL,
    tool         TEXT NOT NULL,
    target       TEXT NOT NULL,
    tool_use_id  TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    sidechain    INTEGER NOT NULL,
    success      INTEGER,          -- NULL while the result is unknown
    error        TEXT NOT NULL,
    duration_ms  INTEGER NOT NULL,
    input_hash   TEXT NOT NULL,
    output_size  INTEGER NOT NULL,
    model        TEXT NOT NULL,
    transcript   TEXT NOT NULL
);
CREATE INDEX actions_ts ON actions(ts);
CREATE INDEX actions_session ON actions(session_id, ts);
CREATE INDEX actions_type ON actions(type, ts);

-- Tool outputs live apart from actions and are full-text indexed in batches, off the insert path.
CREATE TABLE action_outputs (
    rowid    INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    output   TEXT NOT NULL
);
CREATE VIRTUAL TABLE tool_output_fts USING fts5(output, content='action_outputs', content_rowid='rowid');
CREATE TABLE fts_progress (
    name    TEXT PRIMARY KEY,
    last_id INTEGER NOT NULL
);

CREATE TABLE token_usage (
    id                 INTEGER PRIMARY KEY,
    event_id                 TEXT NOT NULL UNIQUE,
    ts                       INTEGER NOT NULL,
    client                   TEXT NOT NULL,
    session_id               TEXT NOT NULL,
    project                  TEXT NOT NULL,
    source                   TEXT NOT NULL,
    message_id               TEXT NOT NULL,
    request_id               TEXT NOT NULL,
    model                    TEXT NOT NULL,
    agent_id                 TEXT NOT NULL,
    input_tokens             INTEGER NOT NULL,
    output_tokens            INTEGER NOT NULL,
    cache_read_tokens        INTEGER NOT NULL,
    cache_creation_tokens    INTEGER NOT NULL,
    cache_creation_1h_tokens INTEGER NOT NULL,
    reasoning_tokens         INTEGER NOT NULL,
    cost_usd                 REAL NOT NULL,
    reliability              TEXT NOT NULL,
    origin                   TEXT NOT NULL
);
CREATE INDEX token_usage_ts ON token_usage(ts);
CREATE INDEX token_usage_session ON token_usage(session_id);
CREATE INDEX token_usage_message ON token_usage(message_id);

CREATE TABLE api_turns (
    id                 INTEGER PRIMARY KEY,
    event_id                 TEXT NOT NULL UNIQUE,
    ts                       INTEGER NOT NULL,
    client                   TEXT NOT NULL,
    session_id               TEXT NOT NULL,
    project                  TEXT NOT NULL,
    provider                 TEXT NOT NULL,
    endpoint                 TEXT NOT NULL,
    model                    TEXT NOT NULL,
    message_id               TEXT NOT NULL,
    request_id               TEXT NOT NULL,
    stream                   INTEGER NOT NULL,
    status                   INTEGER NOT NULL,
    error_class              TEXT NOT NULL,
    error_message            TEXT NOT NULL,
    stop_reason              TEXT NOT NULL,
    latency_ms               REAL NOT NULL,
    ttfb_ms                  REAL NOT NULL,
    input_tokens             INTEGER NOT NULL,
    output_tokens            INTEGER NOT NULL,
    cache_read_tokens        INTEGER NOT NULL,
    cache_creation_tokens    INTEGER NOT NULL,
    cache_creation_1h_tokens INTEGER NOT NULL,
    reasoning_tokens         INTEGER NOT NULL,
    cost_usd                 REAL NOT NULL,
    reliability              TEXT NOT NULL,
    messages                 INTEGER NOT NULL,
    tools                    INTEGER NOT NULL,
    bytes_in                 INTEGER NOT NULL,
    bytes_out                INTEGER NOT NULL,
    partial                  INTEGER NOT NULL
);
CREATE INDEX api_turns_ts ON api_turns(ts);
CREATE INDEX api_turns_session ON api_turns(session_id);
CREATE INDEX api_turns_message ON api_turns(message_id);

CREATE TABLE compression_events (
    id      INTEGER PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    ts            INTEGER NOT NULL,
    client        TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    project       TEXT NOT NULL,
    mechanism     TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bytes_before  INTEGER NOT NULL,
    bytes_after   INTEGER NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after  INTEGER NOT NULL
);
CREATE INDEX compression_events_ts ON compression_events(ts);

CREATE TABLE hook_events (
    id        INTEGER PRIMARY KEY,
    event_id        TEXT NOT NULL UNIQUE,
    ts              INTEGER NOT NULL,
    client          TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    project         TEXT NOT NULL,
    event           TEXT NOT NULL,
    cwd             TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    tool_name       TEXT NOT NULL,
    tool_use_id     TEXT NOT NULL,
    matcher         TEXT NOT NULL,
    payload_bytes   INTEGER NOT NULL
);
CREATE INDEX hook_events_ts ON hook_events(ts);
CREATE INDEX hook_events_session ON hook_events(session_id);

CREATE TABLE mcp_calls (
    id       INTEGER PRIMARY KEY,
    event_id       TEXT NOT NULL UNIQUE,
    ts             INTEGER NOT NULL,
    client         TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    project        TEXT NOT NULL,
    server         TEXT NOT NULL,
    tool           TEXT NOT NULL,
    request_id     TEXT NOT NULL,
    input_bytes    INTEGER NOT NULL,
    output_bytes   INTEGER NOT NULL,
    input_hash     TEXT NOT NULL,
    output_hash    TEXT NOT NULL,
    duration_ms    REAL NOT NULL,
    error          TEXT NOT NULL,
    token_estimate INTEGER NOT NULL
);
CREATE INDEX mcp_calls_ts ON mcp_calls(ts);

-- Freshness and analysis tables, filled by later components.
CREATE TABLE file_state (
    project    TEXT NOT NULL,
    path       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    hash       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL,
    event_id   TEXT NOT NULL,
    PRIMARY KEY (project, path, session_id)
) WITHOUT ROWID;

CREATE TABLE failure_context (
    id   INTEGER PRIMARY KEY,
    event_id   TEXT NOT NULL UNIQUE,
    ts         INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    target     TEXT NOT NULL,
    error      TEXT NOT NULL,
    context    TEXT NOT NULL
);

CREATE TABLE patterns (
    id          INTEGER PRIMARY KEY,
    project     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    key         TEXT NOT NULL,
    detail      TEXT NOT NULL,
    confidence  REAL NOT NULL,
    occurrences INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    UNIQUE (project, kind, key)
);

-- Messages the writer could not decode, kept with the reason; they never block the stream.
CREATE TABLE quarantine (
    id          INTEGER PRIMARY KEY,
    received_at INTEGER NOT NULL,
    subject     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    data        BLOB NOT NULL
);
