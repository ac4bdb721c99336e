-- Coarser usage rollups, kept from usage_hourly in the same transaction (rollup.go), for the
-- widest questions: usage_daily sums each local day without the session key (all-time and
-- multi-week cost by day, model, project or client), usage_sessions each session of all time
-- without the hour (all-time cost by session). Both have usage_hourly's measures.
CREATE TABLE usage_daily (
    day                      INTEGER NOT NULL, -- Unix ms of the local midnight, in the zone of rollup_state 'zone'
    client                   TEXT NOT NULL,
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
    PRIMARY KEY (day, client, project, model)
) WITHOUT ROWID;

CREATE TABLE usage_sessions (
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
    PRIMARY KEY (client, session_id, model, project) -- grouped by session (and model) along it
) WITHOUT ROWID;
