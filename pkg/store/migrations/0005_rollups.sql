-- Hourly rollups kept by the writer in the same transaction as the rows they sum (see rollup.go),
-- so a dashboard or `observerctl cost` over weeks reads thousands of rollup rows instead of
-- millions of raw ones. hour is the Unix time in ms of the UTC hour's start.
--
-- usage_hourly: every model turn once (a proxy turn, or a transcript message the proxy did not
-- see: store.TurnsSQL), by client, session, project (a proxy turn's is its session's) and model.
CREATE TABLE usage_hourly (
    hour                     INTEGER NOT NULL,
    client                   TEXT NOT NULL,
    session_id               TEXT NOT NULL,
    project                  TEXT NOT NULL,
    model                    TEXT NOT NULL,
    turns                    INTEGER NOT NULL,
    proxy_turns              INTEGER NOT NULL,
    unreliable_turns         INTEGER NOT NULL,
    unpriced_turns           INTEGER NOT NULL,
    input_tokens             INTEGER NOT NULL,
    output_tokens            INTEGER NOT NULL,
    cache_read_tokens        INTEGER NOT NULL,
    cache_creation_tokens    INTEGER NOT NULL,
    cache_creation_1h_tokens INTEGER NOT NULL,
    reasoning_tokens         INTEGER NOT NULL,
    cost_usd                 REAL NOT NULL,
    PRIMARY KEY (hour, client, session_id, project, model)
) WITHOUT ROWID;
CREATE INDEX usage_hourly_session ON usage_hourly(session_id, client);
CREATE INDEX usage_hourly_project ON usage_hourly(project, hour);

-- actions_hourly: tool calls by client, session, project, type and tool; failures are results
-- with success = 0, pending calls have no result yet; duration_ms sums the durations of the timed
-- calls (duration_ms > 0).
CREATE TABLE actions_hourly (
    hour       INTEGER NOT NULL,
    client     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL,
    type       TEXT NOT NULL,
    tool       TEXT NOT NULL,
    actions    INTEGER NOT NULL,
    failures   INTEGER NOT NULL,
    pending    INTEGER NOT NULL,
    timed      INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (hour, client, session_id, project, type, tool)
) WITHOUT ROWID;
CREATE INDEX actions_hourly_session ON actions_hourly(session_id, client);
CREATE INDEX actions_hourly_project ON actions_hourly(project, hour);

-- actions_daily: actions_hourly by local day (day: Unix ms of the local midnight in the writer's
-- time zone, recorded in rollup_state as 'zone'), client, type and tool, for windows of weeks.
-- Not kept in a zone whose offset is not a whole number of hours.
CREATE TABLE actions_daily (
    day         INTEGER NOT NULL,
    client      TEXT NOT NULL,
    type        TEXT NOT NULL,
    tool        TEXT NOT NULL,
    actions     INTEGER NOT NULL,
    failures    INTEGER NOT NULL,
    pending     INTEGER NOT NULL,
    timed       INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (day, client, type, tool)
) WITHOUT ROWID;

CREATE TABLE rollup_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- The dashboard's count of a project's token rows.
CREATE INDEX token_usage_project ON token_usage(project, ts);
