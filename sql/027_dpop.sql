-- 027: sender-constrained tokens (DPoP, RFC 9449; docs/dpop.md).
--
-- `dpop_proof_uses`: a proof's `jti` is used once per key (the RFC 7638 thumbprint `jkt`) within the
-- window a proof is accepted (`iat` at most 60 s old), on every instance: the exchange and the refresh
-- insert the proof's use in their one statement (`ON CONFLICT … DO UPDATE … WHERE expires_at <= now`,
-- so a row past its life that housekeeping has not yet deleted is taken over), a resource in its own.
-- `jti_hash` is the SHA-256 hex of the `jti`; `expires_at` is `iat` + 60 s. Housekeeping deletes
-- expired rows.
CREATE TABLE dpop_proof_uses (
    jkt         text NOT NULL,
    jti_hash    text NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (jkt, jti_hash)
);
CREATE INDEX dpop_proof_uses_expiry ON dpop_proof_uses (expires_at);

-- The key a session's tokens are bound to (its access tokens and, the clients being public, its refresh
-- token), set by the exchange that made it when that exchange carried a proof; NULL: bearer tokens.
ALTER TABLE sessions ADD COLUMN dpop_jkt text;

-- An environment may require a DPoP proof (with a server nonce) at the exchange and the refresh
-- (the admin API's `requireDPoP`).
ALTER TABLE environments ADD COLUMN require_dpop boolean NOT NULL DEFAULT false;

-- `dpop_jkt` at the start (`/oauth2/authorize`, `/v1/auth/zevid/start`, or pushed) binds the code: its
-- exchange must carry a proof of that key (RFC 9449 §10). Carried from the pending sign-in to its code.
ALTER TABLE authorization_requests ADD COLUMN dpop_jkt text;
ALTER TABLE authorization_codes ADD COLUMN dpop_jkt text;
