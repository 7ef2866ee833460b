-- 004: hosted accounts — TOTP factors, recovery codes, MFA challenges, and rate-limit counters.
-- TOTP secrets must be read back, so they are sealed with AES-256-GCM under ZEVAUTH_ENCRYPTION_KEY
-- (nonce ‖ ciphertext ‖ tag, base64, associated data = the user id); everything else is a SHA-256 hash.

CREATE TABLE totp_factors (
    user_id         uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret_sealed   text NOT NULL,          -- base64 of AES-256-GCM nonce ‖ ciphertext ‖ tag
    created_at      timestamptz NOT NULL,
    confirmed_at    timestamptz,            -- active only after a correct code
    last_used_step  bigint                  -- RFC 6238 §5.2: a used step is never accepted again
);

-- Ten single-use recovery codes per confirmed factor (50 bits each), stored hashed.
CREATE TABLE recovery_codes (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash   text NOT NULL,
    created_at  timestamptz NOT NULL,
    used_at     timestamptz,
    CONSTRAINT recovery_codes_unique UNIQUE (user_id, code_hash)
);

-- A sign-in whose password was right and that waits for a TOTP or recovery code: bound to the browser
-- (its binding cookie's hash) and, for an app sign-in, to the pending authorization request.
CREATE TABLE mfa_challenges (
    id                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id                  uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    browser_binding_hash     text NOT NULL,
    authorization_request_id uuid REFERENCES authorization_requests (id) ON DELETE CASCADE,
    created_at               timestamptz NOT NULL,
    expires_at               timestamptz NOT NULL,
    completed_at             timestamptz
);
CREATE INDEX mfa_challenges_expiry ON mfa_challenges (expires_at);

-- Fixed-window counters shared by every server instance: one atomic upsert per counted event.
CREATE TABLE rate_limit_counters (
    bucket        text NOT NULL,
    key           text NOT NULL,        -- a user id, a hash of an email, or a client address
    window_start  timestamptz NOT NULL,
    count         integer NOT NULL,
    PRIMARY KEY (bucket, key, window_start)
);
CREATE INDEX rate_limit_counters_window ON rate_limit_counters (window_start);
