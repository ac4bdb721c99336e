-- kiro-cli's database as its migrations leave it (aws/amazon-q-developer-cli
-- crates/chat-cli/src/database: the conversations table of migration 7, the
-- conversations_v2 table of migration 8), with the other tables it keeps.
CREATE TABLE migrations (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, migration_time INTEGER NOT NULL);
CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE auth_kv (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE conversations_v2 (
    key TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (key, conversation_id)
);
CREATE INDEX idx_conversations_v2_key_updated ON conversations_v2(key, updated_at DESC);
CREATE INDEX idx_conversations_v2_updated_at ON conversations_v2(updated_at DESC);
