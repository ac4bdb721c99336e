-- Alerts the writer raised (budget thresholds crossed, see internal/budget), each once: the
-- UNIQUE key is what makes a threshold of a budget alert once per period, however often the
-- writer checks and however often it restarts. period is the local day that starts the period
-- ("2026-12-01" for December's monthly budget); project is '' unless scope is 'project';
-- threshold is a percent of limit_usd. ts is Unix ms.
CREATE TABLE alerts (
    id         INTEGER PRIMARY KEY,
    ts         INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    scope      TEXT NOT NULL,
    project    TEXT NOT NULL DEFAULT '',
    period     TEXT NOT NULL,
    threshold  INTEGER NOT NULL,
    spent_usd  REAL NOT NULL,
    limit_usd  REAL NOT NULL,
    message    TEXT NOT NULL,
    UNIQUE (kind, scope, project, period, threshold)
);
CREATE INDEX alerts_ts ON alerts(ts);
