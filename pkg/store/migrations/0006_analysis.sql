-- The analysis tables (internal/analysis) that the dashboard's Discovery, Patterns and session
-- scores, and `observerctl discover|patterns|score|suggest`, read instead of walking millions of
-- actions per request. The writer's batch marks the sessions whose actions changed in
-- analysis_dirty, in the batch's transaction; the writer's analysis loop recomputes those sessions
-- from their actions and clears the mark.
--
-- analysis_dirty: since_ts is the earliest action time the batches brought (files touched from then
-- on get their file_clients rows recomputed); gen grows with each batch so that the analyzer
-- clears only the mark it read.
CREATE TABLE analysis_dirty (
    client     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    since_ts   INTEGER NOT NULL,
    gen        INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (client, session_id)
) WITHOUT ROWID;

-- One row per analysed session: counts, findings and the score's parts.
CREATE TABLE session_analysis (
    client               TEXT NOT NULL,
    session_id           TEXT NOT NULL,
    project              TEXT NOT NULL,
    first_ts             INTEGER NOT NULL,
    last_ts              INTEGER NOT NULL,
    actions              INTEGER NOT NULL,
    failures             INTEGER NOT NULL,
    completed            INTEGER NOT NULL, -- actions whose success is known
    reads                INTEGER NOT NULL,
    edits                INTEGER NOT NULL, -- edit_file and write_file
    commands             INTEGER NOT NULL,
    searches             INTEGER NOT NULL, -- search_*, web_*
    files                INTEGER NOT NULL, -- distinct targets read, edited or written
    agents               INTEGER NOT NULL, -- main agent and subagents that acted
    stale_rereads        INTEGER NOT NULL,
    unclassified_rereads INTEGER NOT NULL,
    cross_agent_files    INTEGER NOT NULL,
    repeated_commands    INTEGER NOT NULL,
    error_rate           REAL NOT NULL,
    redundancy           REAL NOT NULL,
    exploration          REAL NOT NULL,
    score                INTEGER NOT NULL,
    analyzed_at          INTEGER NOT NULL,
    PRIMARY KEY (client, session_id)
) WITHOUT ROWID;
CREATE INDEX session_analysis_last ON session_analysis(last_ts);
CREATE INDEX session_analysis_project ON session_analysis(project, last_ts);

-- A session's re-read files: stale (classified live as changed since last seen) or later reads
-- without a classification.
CREATE TABLE session_rereads (
    client       TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    target       TEXT NOT NULL,
    project      TEXT NOT NULL,
    reads        INTEGER NOT NULL,
    stale        INTEGER NOT NULL,
    unclassified INTEGER NOT NULL,
    agents       INTEGER NOT NULL,
    last_ts      INTEGER NOT NULL,
    PRIMARY KEY (client, session_id, target)
) WITHOUT ROWID;
CREATE INDEX session_rereads_rank ON session_rereads(stale DESC, unclassified DESC);

-- A session's commands run again with nothing edited since the previous identical run.
CREATE TABLE session_repeats (
    client     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    command    TEXT NOT NULL,
    project    TEXT NOT NULL,
    runs       INTEGER NOT NULL,
    repeats    INTEGER NOT NULL,
    last_ts    INTEGER NOT NULL,
    PRIMARY KEY (client, session_id, command)
) WITHOUT ROWID;
CREATE INDEX session_repeats_rank ON session_repeats(repeats DESC);

-- Per file and client: file actions (read, edit, write) all time; shared_files keeps the files
-- with more than one client.
CREATE TABLE file_clients (
    project  TEXT NOT NULL,
    target   TEXT NOT NULL,
    client   TEXT NOT NULL,
    actions  INTEGER NOT NULL,
    first_ts INTEGER NOT NULL,
    last_ts  INTEGER NOT NULL,
    PRIMARY KEY (project, target, client)
) WITHOUT ROWID;
CREATE TABLE shared_files (
    project   TEXT NOT NULL,
    target    TEXT NOT NULL,
    clients   TEXT NOT NULL, -- sorted, comma-separated
    n_clients INTEGER NOT NULL,
    actions   INTEGER NOT NULL,
    first_ts  INTEGER NOT NULL,
    last_ts   INTEGER NOT NULL,
    PRIMARY KEY (project, target)
) WITHOUT ROWID;
CREATE INDEX shared_files_last ON shared_files(last_ts);
CREATE INDEX shared_files_rank ON shared_files(n_clients DESC, actions DESC);

-- Projects whose patterns need recomputing, and when they last were.
CREATE TABLE pattern_state (
    project     TEXT PRIMARY KEY,
    dirty       INTEGER NOT NULL,
    computed_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX patterns_rank ON patterns(kind, last_seen);

-- What is stored already is marked for analysis by fillAnalysis (analysis.go), after this file.
