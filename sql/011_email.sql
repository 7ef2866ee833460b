-- 011: outbound email and the 6-digit codes it carries (docs/protocol.md, "Email codes";
-- docs/operations.md, "Outbound email").

-- When the account's address was proven by a code; NULL: never. A self-sign-up cannot sign in before.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
-- Whether the account was made on the hosted sign-up page (the operator's accounts are not).
ALTER TABLE users ADD COLUMN self_signed_up boolean NOT NULL DEFAULT false;
-- Code entry is locked until then after too many codes were ended by wrong attempts.
ALTER TABLE users ADD COLUMN code_entry_locked_until timestamptz;
-- Whether a sign-in asks an unverified account for a code after its password.
ALTER TABLE environments ADD COLUMN require_verified_email boolean NOT NULL DEFAULT false;

-- One code, and the flow on the hosted pages that waits for it (its id is in the page's URL and form, and
-- the flow belongs to the browser whose binding digest it records). `user_id` is NULL for a flow that
-- sends nothing (an address without an account, or over a limit): its page looks the same.
CREATE TABLE email_codes (
    id                        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id                   uuid REFERENCES users (id) ON DELETE CASCADE,
    purpose                   text NOT NULL CHECK (purpose IN ('sign_up', 'verify_email', 'password_reset', 'change_email')),
    browser_binding_hash      text NOT NULL,
    authorization_request_id  uuid,
    code_hash                 text NOT NULL,        -- SHA-256 hex of "<id>:<code>"; the code itself is never stored
    attempts                  integer NOT NULL DEFAULT 0,
    created_at                timestamptz NOT NULL,
    expires_at                timestamptz NOT NULL,
    ended_at                  timestamptz,
    end_reason                text CHECK (end_reason IN ('used', 'replaced', 'attempts')),
    -- A sign-up's chosen password (Argon2id), applied when its code is entered.
    password_hash             text,
    -- An address change: the new address (as typed and its key), which the code is sent to.
    new_email                 text,
    new_email_key             text,
    -- After the code (a reset of an account with MFA): the second factor was given.
    second_factor_at          timestamptz,
    completed_at              timestamptz
);
CREATE UNIQUE INDEX email_codes_one_live ON email_codes (user_id, purpose) WHERE ended_at IS NULL AND user_id IS NOT NULL;
CREATE INDEX email_codes_by_user ON email_codes (user_id, created_at);
CREATE INDEX email_codes_expiry ON email_codes (expires_at);

-- The outbox: every message waits here until a drainer sends it. A message is rendered at send time from
-- its kind and account (and, for a code, the code sealed with AES-256-GCM under the deployment's key), so
-- no code is readable at rest. Drainers claim rows with a lease (FOR UPDATE SKIP LOCKED), so several
-- instances never send one message twice.
CREATE TABLE email_outbox (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id           uuid REFERENCES users (id) ON DELETE CASCADE,
    kind              text NOT NULL,
    code_id           uuid REFERENCES email_codes (id) ON DELETE CASCADE,
    code_sealed       text,                         -- base64 of nonce ‖ ciphertext ‖ tag
    created_at        timestamptz NOT NULL,
    next_attempt_at   timestamptz NOT NULL,
    give_up_at        timestamptz NOT NULL,
    attempts          integer NOT NULL DEFAULT 0,
    lease_owner       text,
    lease_expires_at  timestamptz,
    sent_at           timestamptz,
    failed_at         timestamptz,
    -- NULL in a deployment; a test server drains only the messages queued under its own scope.
    scope             text
);
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;
CREATE INDEX email_outbox_created ON email_outbox (created_at);
