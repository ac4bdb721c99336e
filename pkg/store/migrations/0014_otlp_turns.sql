-- OTLP (issue 19): turns the clients' own telemetry reports are api_turns of origin 'otlp' ('' is
-- the proxy). A turn seen by the proxy and by OTLP counts once, at the proxy's figures; a
-- transcript row counts only when neither saw its request (TurnsSQL). Both joins go by request id.
ALTER TABLE api_turns ADD COLUMN origin TEXT NOT NULL DEFAULT '';
CREATE INDEX api_turns_request ON api_turns(request_id) WHERE request_id != '';
CREATE INDEX token_usage_request ON token_usage(request_id) WHERE request_id != '';
