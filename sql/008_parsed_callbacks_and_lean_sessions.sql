-- 008: registered callbacks stored parsed, and sessions without a copy of their latest token pair.
--
-- Callbacks: the parts of the parsed redirect URI (docs/protocol.md#redirect-kinds) are written at
-- registration, so the start compares the request's parsed URI with stored parts and never parses a
-- registered one again. Rows registered before are parsed once by the Swift step of this migration
-- (`CallbackMigration`, with the same parser as registration); a row the current rules refuse keeps NULL
-- parts and is never redirected to (the operator still lists and deletes it).
ALTER TABLE callbacks ADD COLUMN scheme text, ADD COLUMN host text, ADD COLUMN port integer, ADD COLUMN path_and_query text;

-- Pending sign-ins: the start's parsed redirect URI is stored with its parts too, so consent and the
-- redirect back use it without parsing it again. Pending sign-ins in flight are completed by the same step.
ALTER TABLE authorization_requests ADD COLUMN redirect_scheme text, ADD COLUMN redirect_host text,
    ADD COLUMN redirect_port integer, ADD COLUMN redirect_path_and_query text;

-- Sessions: every token pair lives in `refresh_tokens` and `access_tokens` (sql/003); the session row's
-- mirror of the latest pair cost two unique-index updates per exchange and per refresh and was never read.
-- A pair written only to the mirror (none should exist) moves to the history tables first, so every
-- existing session keeps working.
INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
SELECT refresh_token_hash, id, generation, last_refreshed_at FROM sessions
ON CONFLICT (token_hash) DO NOTHING;
INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
SELECT access_token_hash, id, last_refreshed_at, access_expires_at FROM sessions
ON CONFLICT (token_hash) DO NOTHING;

ALTER TABLE sessions DROP COLUMN access_token_hash, DROP COLUMN access_expires_at, DROP COLUMN refresh_token_hash;
