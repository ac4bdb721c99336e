-- Forge's conversations table as its migrations leave it (antinomyhq/forge
-- crates/forge_repo/src/database/migrations and schema.rs): the table, then the columns later
-- migrations add.
CREATE TABLE IF NOT EXISTS conversations (
    conversation_id TEXT PRIMARY KEY NOT NULL,
    title TEXT,
    workspace_id BIGINT NOT NULL,
    context TEXT,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_conversations_workspace_updated ON conversations(workspace_id, updated_at DESC);
ALTER TABLE conversations ADD COLUMN metrics TEXT;
ALTER TABLE conversations ADD COLUMN todos TEXT;
