-- 024: pushed authorization requests (RFC 9126; docs/protocol.md#pushed-requests).
--
-- A row per `POST /oauth2/par` that passed the start's checks: the SHA-256 hex digest of the request URI's
-- random part (never the value itself), the environment whose publishable key pushed it (the only client
-- that may use it), the pushed parameters as a JSON object of name → value (each name once; the
-- authorization endpoint checks them again as if they had come in its query), and its 60-second life.
-- Using it is one statement: `UPDATE … SET used = true WHERE reference_hash = $1 AND environment_id = $2
-- AND NOT used AND expires_at > $3 RETURNING parameters`, so it works once on any number of instances.
-- Times come from the server's injected clock. Housekeeping deletes rows that expired more than a day ago.
-- The primary key carries the distribution column (docs/operations.md#sharding: per environment).
CREATE TABLE pushed_authorization_requests (
    environment_id  uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    reference_hash  text NOT NULL,
    parameters      jsonb NOT NULL,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    used            boolean NOT NULL DEFAULT false,
    PRIMARY KEY (environment_id, reference_hash)
);
CREATE INDEX pushed_authorization_requests_expiry ON pushed_authorization_requests (expires_at);

-- An environment may require that every sign-in start from a pushed request (RFC 9126 §4, §5
-- `require_pushed_authorization_requests`; the admin API's `requirePushedAuthorizationRequests`).
ALTER TABLE environments ADD COLUMN require_pushed_authorization_requests boolean NOT NULL DEFAULT false;
