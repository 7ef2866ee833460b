-- 023: signing in with Apple, Google or another OpenID provider (docs/federation.md).
--
-- A provider is deployment-wide and managed by the operator (docs/federation.md, "Providers"). Every
-- secret is sealed with AES-256-GCM under ZEVAUTH_ENCRYPTION_KEY exactly as TOTP secrets are: base64 of
-- `nonce ‖ ciphertext ‖ tag`, its associated data naming the provider's id and the field, so a box copied
-- onto another row or column does not open. `apple` keeps the team ID, the key ID and the sealed `.p8`
-- private key (the client secret is an ES256 JWT the server mints from them); `google` and `oidc` keep the
-- sealed client secret. The CHECKs keep each kind's columns whole.
CREATE TABLE upstream_providers (
    id                        uuid PRIMARY KEY,
    kind                      text NOT NULL CHECK (kind IN ('apple', 'google', 'oidc')),
    slug                      text NOT NULL,
    display_name              text NOT NULL,
    issuer                    text NOT NULL,
    client_id                 text NOT NULL,
    sealed_client_secret      text,
    apple_team_id             text,
    apple_key_id              text,
    sealed_apple_private_key  text,
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    CONSTRAINT upstream_providers_slug_unique UNIQUE (slug),
    CONSTRAINT upstream_providers_apple_columns CHECK (
        (kind = 'apple') = (apple_team_id IS NOT NULL AND apple_key_id IS NOT NULL AND sealed_apple_private_key IS NOT NULL)),
    CONSTRAINT upstream_providers_secret_columns CHECK ((kind = 'apple') = (sealed_client_secret IS NULL))
);
CREATE INDEX upstream_providers_created ON upstream_providers (created_at, id);

-- The providers a project's sign-in page shows, in the order it shows them (`position`, from 0). Deleting
-- the project or the provider deletes the choice.
CREATE TABLE project_upstream_providers (
    project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    provider_id  uuid NOT NULL REFERENCES upstream_providers (id) ON DELETE CASCADE,
    position     integer NOT NULL CHECK (position >= 0),
    PRIMARY KEY (project_id, provider_id)
);
CREATE INDEX project_upstream_providers_provider ON project_upstream_providers (provider_id);

-- An upstream identity (the upstream's issuer and `sub`, under the provider that proved it) belongs to at
-- most one account: the unique key makes a second link of the same identity fail. `email` is the address
-- the upstream last asserted (shown on /account; never the account's address). Deleting the provider
-- unlinks its identities; closing and deleting the account deletes them.
CREATE TABLE upstream_identities (
    id            uuid PRIMARY KEY,
    provider_id   uuid NOT NULL REFERENCES upstream_providers (id) ON DELETE CASCADE,
    issuer        text NOT NULL,
    subject       text NOT NULL,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email         text,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz NOT NULL,
    CONSTRAINT upstream_identities_subject_unique UNIQUE (provider_id, issuer, subject)
);
CREATE INDEX upstream_identities_user ON upstream_identities (user_id);

-- Each upstream ID token is accepted once at the native token exchange (docs/federation.md, "Native Sign
-- in with Apple and Google"): the SHA-256 hex digest of the token, kept until the token itself expires
-- (then housekeeping deletes it: an expired token is refused on its `exp` anyway). Accepting is one
-- `INSERT … ON CONFLICT DO NOTHING`: a second use inserts nothing.
CREATE TABLE upstream_token_uses (
    token_hash  text PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX upstream_token_uses_expires ON upstream_token_uses (expires_at);
