-- 001: tenancy, keys, accounts, callbacks, pending sign-ins, authorization codes and sessions.
-- Every credential is stored only as a SHA-256 hex digest (docs/protocol.md#credentials).
-- Times are written by the server from its injected clock, never by now(), so expiry is testable.

CREATE TABLE projects (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL
);

CREATE TABLE environments (
    id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id                  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind                        text NOT NULL CHECK (kind IN ('development', 'production')),
    -- The OAuth client_id; ships inside apps, so it is not a secret (stored plain).
    publishable_key             text NOT NULL UNIQUE,
    session_max_age_days        integer NOT NULL DEFAULT 90 CHECK (session_max_age_days BETWEEN 1 AND 90),
    session_idle_days           integer NOT NULL DEFAULT 30 CHECK (session_idle_days BETWEEN 1 AND 30),
    access_token_ttl_minutes    integer NOT NULL DEFAULT 15 CHECK (access_token_ttl_minutes BETWEEN 5 AND 60),
    refresh_reuse_grace_seconds integer NOT NULL DEFAULT 0 CHECK (refresh_reuse_grace_seconds BETWEEN 0 AND 60),
    CONSTRAINT environments_one_per_kind UNIQUE (project_id, kind)
);

CREATE TABLE secret_keys (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id  uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    key_hash        text NOT NULL UNIQUE,
    key_suffix      text NOT NULL,   -- last 4 characters, to tell keys apart in lists
    created_at      timestamptz NOT NULL,
    revoked_at      timestamptz
);
CREATE INDEX secret_keys_environment ON secret_keys (environment_id);

-- ZevID accounts are deployment-wide: one person, one account, used by every project's apps.
CREATE TABLE users (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email               text NOT NULL,
    email_normalized    text NOT NULL,
    name                text NOT NULL,
    image_url           text,
    password_hash       text NOT NULL,  -- Argon2id PHC string
    password_changed_at timestamptz NOT NULL,
    created_at          timestamptz NOT NULL,
    closed_at           timestamptz,
    CONSTRAINT users_email_unique UNIQUE (email_normalized)
);

CREATE TABLE project_domains (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    domain      text NOT NULL,
    verification_token text NOT NULL,   -- published by the project at /.well-known/zevauth-domain-verification
    verified_at timestamptz,
    hosted      boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL,
    CONSTRAINT project_domains_unique UNIQUE (project_id, domain)
);

CREATE TABLE callbacks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id  uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    uri             text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('link', 'custom_scheme', 'loopback')),
    created_at      timestamptz NOT NULL,
    CONSTRAINT callbacks_unique UNIQUE (environment_id, uri)
);

-- ZevID browser sessions (the hosted page's cookie); app sessions made from one end when it signs out.
CREATE TABLE browser_sessions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token_hash  text NOT NULL UNIQUE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    auth_time   timestamptz NOT NULL,  -- when the person last entered their password here
    created_at  timestamptz NOT NULL,
    ended_at    timestamptz
);
CREATE INDEX browser_sessions_user ON browser_sessions (user_id);

-- A pending sign-in: lives 10 minutes, bound to the browser that started it.
CREATE TABLE authorization_requests (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id      uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    redirect_uri        text NOT NULL,  -- as requested (loopback: with its port)
    redirect_kind       text NOT NULL,
    state               text NOT NULL,
    code_challenge      text NOT NULL,
    prompt_login        boolean NOT NULL,
    login_hint          text,
    browser_binding_hash text NOT NULL,
    browser_session_id  uuid REFERENCES browser_sessions (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    completed_at        timestamptz
);
CREATE INDEX authorization_requests_expiry ON authorization_requests (expires_at);

CREATE TABLE consents (
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    environment_id  uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    granted_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, environment_id)
);

CREATE TABLE authorization_codes (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    code_hash           text NOT NULL UNIQUE,
    environment_id      uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    browser_session_id  uuid REFERENCES browser_sessions (id) ON DELETE SET NULL,
    redirect_uri        text NOT NULL,
    code_challenge      text NOT NULL,
    auth_time           timestamptz NOT NULL,
    issued_at           timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    consumed_at         timestamptz,
    consumed_by         uuid,          -- the exchange attempt that consumed it
    replayed_at         timestamptz    -- first valid presentation after consumption
);
CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at);

-- App sessions: an access token and a rotating refresh token, both stored hashed.
CREATE TABLE sessions (
    id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id          uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    user_id                 uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    browser_session_id      uuid REFERENCES browser_sessions (id) ON DELETE SET NULL,
    authorization_code_id   uuid UNIQUE REFERENCES authorization_codes (id) ON DELETE SET NULL,
    auth_time               timestamptz NOT NULL,
    created_at              timestamptz NOT NULL,
    last_refreshed_at       timestamptz NOT NULL,
    generation              integer NOT NULL DEFAULT 1,
    access_token_hash       text NOT NULL UNIQUE,
    access_expires_at       timestamptz NOT NULL,
    refresh_token_hash      text NOT NULL UNIQUE,
    revoked_at              timestamptz,
    revoked_reason          text
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_browser_session ON sessions (browser_session_id);
