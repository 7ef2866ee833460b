-- 026: web clients, the server-side (confidential) OAuth clients of an environment (docs/protocol.md,
-- "Web clients").
--
-- `client_id` is `zc_` and 256 random bits in base64url, minted by the server; it names the client at the
-- authorization and token endpoints and in the admin API. Redirect URIs and post-logout redirect URIs were
-- parsed by `RedirectURI.parse` and checked against the environment's kind when registered (`https` only in
-- production; `https` or loopback in development) and are matched byte for byte. A `private_key_jwt` client
-- has exactly one of `jwks` (a JSON Web Key Set, kept as text exactly as given) or `jwks_uri`; the other
-- methods have neither. Deleting the environment deletes its clients.
CREATE TABLE web_clients (
    client_id                   text PRIMARY KEY,
    environment_id              uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name                        text NOT NULL,
    redirect_uris               text[] NOT NULL,
    post_logout_redirect_uris   text[] NOT NULL DEFAULT '{}',
    token_endpoint_auth_method  text NOT NULL
        CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'private_key_jwt')),
    jwks                        text,
    jwks_uri                    text,
    require_pkce                boolean NOT NULL DEFAULT true,
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL,
    CONSTRAINT web_clients_key_source CHECK (
        (token_endpoint_auth_method = 'private_key_jwt') = ((jwks IS NULL) <> (jwks_uri IS NULL))
        AND (token_endpoint_auth_method = 'private_key_jwt' OR (jwks IS NULL AND jwks_uri IS NULL)))
);
CREATE INDEX web_clients_environment ON web_clients (environment_id, created_at, client_id);

-- A client's secrets (`zcs_…`, 256 bits), stored only as the SHA-256 hex digest, shown once when minted.
-- Rotation adds a secret beside the old ones; every secret with no `revoked_at` (and, when set, an
-- `expires_at` in the future) authenticates the client, so the old secret keeps working until it is revoked.
CREATE TABLE web_client_secrets (
    id           uuid PRIMARY KEY,
    client_id    text NOT NULL REFERENCES web_clients (client_id) ON DELETE CASCADE,
    secret_hash  text NOT NULL UNIQUE,
    suffix       text NOT NULL,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    expires_at   timestamptz
);
CREATE INDEX web_client_secrets_client ON web_client_secrets (client_id, created_at, id);

-- The `jti` of each accepted `private_key_jwt` assertion (RFC 7523 §3: the server may keep the ids it has
-- seen until the assertion expires), kept until its `exp`: accepting is one `INSERT … ON CONFLICT DO
-- NOTHING`, so a replayed assertion inserts nothing and is refused.
CREATE TABLE web_client_assertion_ids (
    client_id   text NOT NULL REFERENCES web_clients (client_id) ON DELETE CASCADE,
    jti         text NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (client_id, jti)
);
CREATE INDEX web_client_assertion_ids_expires ON web_client_assertion_ids (expires_at);

-- A web client's sign-in is bound to the client from the start to the session (docs/protocol.md, "Web
-- clients"): the pending sign-in, its code and the session it makes name the client (NULL: a native app's,
-- under the environment's publishable key). The exchange consumes a code and the refresh rotates a session
-- only for the client named on it, so one client's code or refresh token is useless to another client of the
-- same environment. Deleting the client deletes its sign-ins in flight, its codes and its sessions.
ALTER TABLE authorization_requests ADD COLUMN web_client_id text REFERENCES web_clients (client_id) ON DELETE CASCADE;
ALTER TABLE authorization_codes ADD COLUMN web_client_id text REFERENCES web_clients (client_id) ON DELETE CASCADE;
ALTER TABLE sessions ADD COLUMN web_client_id text REFERENCES web_clients (client_id) ON DELETE CASCADE;
CREATE INDEX authorization_requests_web_client ON authorization_requests (web_client_id) WHERE web_client_id IS NOT NULL;
CREATE INDEX authorization_codes_web_client ON authorization_codes (web_client_id) WHERE web_client_id IS NOT NULL;
CREATE INDEX sessions_web_client ON sessions (web_client_id) WHERE web_client_id IS NOT NULL;

-- A web client's consent is remembered per account and scope set (docs/protocol.md, "Web clients:
-- consent"): `scope` is the granted scope as the token response spells it (space-separated, in the order of
-- `scopes_supported`; empty for a sign-in without `openid`). A later request is covered when its scopes are
-- a subset of one remembered set. Native apps keep the environment-wide `consents` of verified links.
CREATE TABLE web_client_consents (
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id   text NOT NULL REFERENCES web_clients (client_id) ON DELETE CASCADE,
    scope       text NOT NULL,
    granted_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, client_id, scope)
);
CREATE INDEX web_client_consents_client ON web_client_consents (client_id);

-- `response_mode=form_post` (OAuth 2.0 Form Post Response Mode; web clients only): the pending sign-in
-- remembers it, so the code or the error goes back as an auto-submitting form instead of a redirect.
ALTER TABLE authorization_requests ADD COLUMN form_post boolean NOT NULL DEFAULT false;
