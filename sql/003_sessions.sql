-- 003: refresh-token rotation with a generation per session, several live access tokens per session
-- (the reuse grace keeps an earlier pair working), and the indexes the session and key calls need.
-- docs/protocol.md#sessions. Tokens are stored only as SHA-256 hex digests.

-- Every refresh token a session has issued, current or rotated out. A token's generation is the session
-- generation it was issued in; it was rotated out when a token of a later generation was first issued
-- (min(issued_at) over the session's later generations), so no row is ever updated after insert.
CREATE TABLE refresh_tokens (
    token_hash  text PRIMARY KEY,
    session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation  integer NOT NULL CHECK (generation >= 1),
    issued_at   timestamptz NOT NULL
);
CREATE INDEX refresh_tokens_session_generation ON refresh_tokens (session_id, generation);

-- Every access token a session has issued; each lives until its own expiry while the session is live.
CREATE TABLE access_tokens (
    token_hash  text PRIMARY KEY,
    session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    issued_at   timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX access_tokens_session ON access_tokens (session_id);

-- Sessions made before this migration keep working: their current pair moves into the history tables.
INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
SELECT refresh_token_hash, id, generation, last_refreshed_at FROM sessions;
INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
SELECT access_token_hash, id, last_refreshed_at, access_expires_at FROM sessions;

-- Settings changes that lengthen a window first end the environment's sessions already past it.
CREATE INDEX sessions_environment_live ON sessions (environment_id) WHERE revoked_at IS NULL;
