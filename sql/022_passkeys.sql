-- 022: passkeys (docs/passkeys.md, "Storage"): WebAuthn credentials, each account's user handle, the
-- single-use challenges of both ceremonies, and when the person last said "Not now" to the offer.

-- The `user.id` an authenticator keeps for the account (WebAuthn Level 3 §5.4.3): 32 random bytes, never
-- the email or the account id, made the first time the account creates a passkey. A discoverable sign-in
-- names the account by it.
CREATE TABLE passkey_user_handles (
    user_id     uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    handle      bytea NOT NULL UNIQUE CHECK (octet_length(handle) = 32)
);

-- One row per credential (WebAuthn Level 3 §7.1, the "credential record"). `public_key` is the COSE_Key
-- (RFC 9052 §7) as CBOR; `sign_count` the last signature counter seen; `backup_eligible` (BE) never
-- changes, `backed_up` (BS) may. Closing an account deletes them (the close statement), and so does
-- deleting the account row.
CREATE TABLE passkey_credentials (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    credential_id     bytea NOT NULL UNIQUE CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
    user_id           uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    public_key        bytea NOT NULL,
    sign_count        bigint NOT NULL CHECK (sign_count BETWEEN 0 AND 4294967295),
    aaguid            bytea NOT NULL CHECK (octet_length(aaguid) = 16),
    backup_eligible   boolean NOT NULL,
    backed_up         boolean NOT NULL,
    transports        text[] NOT NULL DEFAULT '{}',
    attestation_format text NOT NULL,
    name              text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
    created_at        timestamptz NOT NULL,
    last_used_at      timestamptz
);
CREATE INDEX passkey_credentials_user ON passkey_credentials (user_id, created_at);

-- At most 20 passkeys per account, enforced by PostgreSQL as the app limits are (sql/002): the trigger
-- locks the account row first (FOR NO KEY UPDATE serialises writers of this limit without blocking the
-- foreign-key share locks sign-ins take), then counts; under READ COMMITTED the count after the lock sees
-- every committed competitor. The error carries a stable constraint name the store maps by.
CREATE FUNCTION passkey_credentials_enforce_limit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    existing integer;
BEGIN
    PERFORM 1 FROM users WHERE id = NEW.user_id FOR NO KEY UPDATE;
    SELECT count(*) INTO existing FROM passkey_credentials WHERE user_id = NEW.user_id AND id <> NEW.id;
    IF existing >= 20 THEN
        RAISE EXCEPTION 'an account has at most 20 passkeys'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'passkey_limit';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER passkey_credentials_limit BEFORE INSERT OR UPDATE OF user_id ON passkey_credentials
    FOR EACH ROW EXECUTE FUNCTION passkey_credentials_enforce_limit();

-- A challenge (32 random bytes) is stored as its SHA-256 hex digest only, bound to the browser's binding
-- (its cookie's digest) and, for a registration, to the account. Valid 5 minutes, used once: consuming is
-- one UPDATE … WHERE NOT used AND expires_at > now … RETURNING, so two tabs cannot both use it.
CREATE TABLE passkey_challenges (
    challenge_hash        text PRIMARY KEY,
    purpose               text NOT NULL CHECK (purpose IN ('register', 'authenticate')),
    user_id               uuid REFERENCES users (id) ON DELETE CASCADE,
    browser_binding_hash  text NOT NULL,
    created_at            timestamptz NOT NULL,
    expires_at            timestamptz NOT NULL,
    used                  boolean NOT NULL DEFAULT false,
    CHECK ((purpose = 'register') = (user_id IS NOT NULL))
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);

-- "Not now" on the passkey offer after a sign-in: not offered again for 30 days from this time.
ALTER TABLE users ADD COLUMN passkey_offer_skipped_at timestamptz;
