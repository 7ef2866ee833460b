-- 009: the ID-token signing keys shared by every instance (docs/operations.md, "Signing keys").
-- Each algorithm has exactly one current key (it signs) and one next key (published in the JWKS before it
-- signs); retired keys stay published until every token they signed has expired (`retires_at`), then are
-- deleted by the next rotation. A revoked key loses its private key at once and is never published again.
-- The private key is PKCS#8 DER sealed with AES-256-GCM under ZEVAUTH_ENCRYPTION_KEY (base64), bound to
-- its kid; the server generates keys with OpenSSL, so a fresh database gets them from the first `serve`
-- (or `migrate` with an encryption key).
CREATE TABLE signing_keys (
    kid                 text PRIMARY KEY,      -- RFC 7638 thumbprint of the public JWK, base64url
    alg                 text NOT NULL CHECK (alg IN ('RS256', 'ES256')),
    state               text NOT NULL CHECK (state IN ('next', 'current', 'retired', 'revoked')),
    public_jwk          text NOT NULL,         -- one JSON object, as the JWKS lists it
    private_key_sealed  text,                  -- NULL once revoked
    created_at          timestamptz NOT NULL,
    activates_at        timestamptz,           -- next: earliest promotion; current: when it began to sign
    retires_at          timestamptz,           -- retired: when it leaves the JWKS
    revoked_at          timestamptz
);
-- The race-free rotation rests on these: two instances cannot both make a current or a next key.
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (alg) WHERE state = 'current';
CREATE UNIQUE INDEX signing_keys_one_next ON signing_keys (alg) WHERE state = 'next';
