-- 021: a session's first token pair is written with the session row (docs/protocol.md#sessions,
-- docs/decisions.md "The first token pair lives on the session row").
--
-- The exchange used to write three rows per session: the session, its first refresh token and its first
-- access token, each token row with its primary key and its session index. It now writes one: the first
-- pair's SHA-256 hex digests are columns of the session, each with a unique index for the lookup by token.
-- Pairs issued by a refresh keep going to `refresh_tokens` and `access_tokens` (sql/003), one row each.
-- Sessions made before this migration keep their first pair in those tables (the new columns stay NULL),
-- so nothing is moved and every existing token keeps working.
ALTER TABLE sessions ADD COLUMN first_access_token_hash text UNIQUE,
    ADD COLUMN first_access_expires_at timestamptz,
    ADD COLUMN first_refresh_token_hash text UNIQUE;

-- Every token a session has issued, wherever it is stored; every read by token goes through these two
-- views, so a token is found the same way whether it came from the exchange or from a refresh. A lookup
-- `WHERE token_hash = $1` is pushed into both branches and probes two unique indexes.
-- The first pair was issued when the session was made: generation 1, at `created_at`.
CREATE VIEW issued_access_tokens AS
    SELECT token_hash, session_id, issued_at, expires_at FROM access_tokens
    UNION ALL
    SELECT first_access_token_hash, id, created_at, first_access_expires_at FROM sessions
    WHERE first_access_token_hash IS NOT NULL;

CREATE VIEW issued_refresh_tokens AS
    SELECT token_hash, session_id, generation, issued_at FROM refresh_tokens
    UNION ALL
    SELECT first_refresh_token_hash, id, 1, created_at FROM sessions
    WHERE first_refresh_token_hash IS NOT NULL;
