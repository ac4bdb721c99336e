-- Indexes a bulk load into an empty store builds at its end rather than row by row (defer.go):
-- each one's definition while it is dropped, so a writer killed during the load makes them again
-- when the store is next opened for writing.
CREATE TABLE deferred_indexes (
    name TEXT PRIMARY KEY,
    sql  TEXT NOT NULL
);
