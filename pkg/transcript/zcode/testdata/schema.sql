-- ZCode's tables as the published readers query them (see the package doc): the columns they
-- read, with the types their readers expect. Times are unix milliseconds.
CREATE TABLE session (
  id TEXT PRIMARY KEY,
  project_id TEXT,
  workspace_id TEXT,
  parent_id TEXT,
  directory TEXT,
  title TEXT,
  time_created INTEGER,
  time_updated INTEGER
);
CREATE TABLE message (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  time_created INTEGER,
  data TEXT
);
CREATE TABLE part (
  id TEXT PRIMARY KEY,
  message_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  time_created INTEGER,
  data TEXT
);
CREATE TABLE turn_usage (
  session_id TEXT,
  turn_id TEXT,
  started_at INTEGER,
  completed_at INTEGER,
  duration_ms INTEGER,
  time_to_first_token_ms INTEGER,
  model_retry_count INTEGER,
  tool_call_count INTEGER,
  error_type TEXT,
  cancelled_by_user INTEGER
);
CREATE TABLE model_usage (
  session_id TEXT,
  turn_id TEXT,
  provider_id TEXT,
  model_id TEXT,
  status TEXT,
  input_tokens INTEGER,
  output_tokens INTEGER,
  reasoning_tokens INTEGER,
  cache_creation_input_tokens INTEGER,
  cache_read_input_tokens INTEGER,
  provider_total_tokens INTEGER,
  computed_total_tokens INTEGER,
  started_at INTEGER,
  completed_at INTEGER,
  duration_ms INTEGER,
  time_to_first_token_ms INTEGER,
  tool_call_count INTEGER,
  query_source TEXT
);
