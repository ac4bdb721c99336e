-- Team mode (issue 21): a hub's store holds many members' events. member is the name the hub
-- verified (the subject its events came in under, never what the event says); host and os_user
-- are what the member's machine reported. On a member's own store they stay ''.
ALTER TABLE sessions ADD COLUMN member TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN os_user TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN member TEXT NOT NULL DEFAULT '';
ALTER TABLE token_usage ADD COLUMN member TEXT NOT NULL DEFAULT '';
ALTER TABLE api_turns ADD COLUMN member TEXT NOT NULL DEFAULT '';
CREATE INDEX actions_member ON actions(member, ts) WHERE member != '';
CREATE INDEX token_usage_member ON token_usage(member, ts) WHERE member != '';
CREATE INDEX api_turns_member ON api_turns(member, ts) WHERE member != '';
