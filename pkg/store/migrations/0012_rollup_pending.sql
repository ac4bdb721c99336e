-- The hours whose rollups a bulk write left to recompute (WriteOptions.Bulk): recorded in
-- the transaction that stored the rows, recomputed later by CatchUpRollups, which deletes them in
-- its own transaction. A writer killed in between finds them at its next start.
CREATE TABLE rollup_pending (
    rollup TEXT NOT NULL, -- 'usage' (usage_hourly and what is summed from it) or 'actions'
    hour INTEGER NOT NULL,
    PRIMARY KEY (rollup, hour)
) WITHOUT ROWID;
