-- 025: the hosted sign-in with an upstream provider (docs/federation.md, "Hosted sign-in").
--
-- An upstream flow is one trip to the provider and back: started by "Continue with NAME", ended by its
-- callback. The state sent upstream is stored as its SHA-256 hex digest only (the callback presents it);
-- the nonce and the PKCE verifier must be sent again later (the nonce compared with the ID token's, the
-- verifier sent to the token endpoint), so they are sealed with AES-256-GCM under ZEVAUTH_ENCRYPTION_KEY
-- exactly as TOTP secrets are, their associated data naming the flow and the field. The flow belongs to
-- the browser whose binding digest it records, and to the pending ZevAuth sign-in it continues (NULL for
-- the account area). It lives 10 minutes and is used once: the callback consumes it in one UPDATE.
--
-- Apple answers with a cross-site POST (response_mode=form_post), which carries no SameSite=Lax cookie.
-- That POST only parks the code (sealed) and Apple's first-sign-in name on the flow (`posted_at`), once,
-- and redirects the browser to a GET of the callback, which does carry the binding cookie and consumes
-- the flow.
CREATE TABLE upstream_flows (
    id                        uuid PRIMARY KEY,
    state_hash                text NOT NULL,
    browser_binding_hash      text NOT NULL,
    provider_id               uuid NOT NULL REFERENCES upstream_providers (id) ON DELETE CASCADE,
    sealed_nonce              text NOT NULL,
    sealed_code_verifier      text NOT NULL,
    authorization_request_id  uuid REFERENCES authorization_requests (id) ON DELETE CASCADE,
    created_at                timestamptz NOT NULL,
    expires_at                timestamptz NOT NULL,
    -- Apple's form_post: the code (sealed), the name from the `user` field, and when it was posted.
    posted_code_sealed        text,
    posted_name               text,
    posted_at                 timestamptz,
    used_at                   timestamptz,
    CONSTRAINT upstream_flows_state_unique UNIQUE (state_hash)
);
CREATE INDEX upstream_flows_expiry ON upstream_flows (expires_at);

-- A link waiting for its confirmation: the upstream identity seen, and the account whose address it
-- asserted. Nothing is linked until the person signs in to that account (after `created_at`) and chooses
-- Link (the defence against account pre-hijacking). It belongs to the browser that holds the cookie whose
-- SHA-256 hex digest is `token_hash` (a cookie of its own, so it survives the binding's renewal at sign-in),
-- lives 10 minutes and is used once.
CREATE TABLE upstream_link_confirmations (
    id                        uuid PRIMARY KEY,
    token_hash                text NOT NULL,
    provider_id               uuid NOT NULL REFERENCES upstream_providers (id) ON DELETE CASCADE,
    issuer                    text NOT NULL,
    subject                   text NOT NULL,
    email                     text,
    user_id                   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    authorization_request_id  uuid REFERENCES authorization_requests (id) ON DELETE CASCADE,
    created_at                timestamptz NOT NULL,
    expires_at                timestamptz NOT NULL,
    used_at                   timestamptz,
    CONSTRAINT upstream_link_confirmations_token_unique UNIQUE (token_hash)
);
CREATE INDEX upstream_link_confirmations_expiry ON upstream_link_confirmations (expires_at);

-- How a second-factor challenge's first factor was given: a password ('pwd') or an upstream provider
-- ('fed'), so the browser session it earns records the right `amr` (RFC 8176 §2).
ALTER TABLE mfa_challenges ADD COLUMN first_factor text NOT NULL DEFAULT 'pwd' CHECK (first_factor IN ('pwd', 'fed'));

