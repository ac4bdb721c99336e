-- The full-text indexes gather the terms of the documents they are given in memory and write
-- them out as a segment when that memory passes FTS5's hashsize (1 MiB by default), merging
-- segments as they add up. A history's catch-up indexes tens of megabytes of text: at 4 MiB it
-- writes a quarter of the segments and merges less (the index over the 300 MB benchmark history
-- 1.22 → 1.00 s, median of 3). The memory is held only while a step of the catch-up runs. The
-- setting is kept in each index's config table.
INSERT INTO tool_output_fts (tool_output_fts, rank) VALUES ('hashsize', 4194304);
INSERT INTO message_fts (message_fts, rank) VALUES ('hashsize', 4194304);
