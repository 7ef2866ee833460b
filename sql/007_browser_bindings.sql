-- 007: the browser binding ids the server minted (`zevauth_browser` cookie), stored hashed, so a request's
-- binding is adopted only when it is on record (docs/threat-model.md, "Planted browser cookies").
-- A binding is minted on a browser's first visit and again whenever the person authenticates.
CREATE TABLE browser_bindings (
    binding_hash  text PRIMARY KEY,         -- SHA-256 hex of the cookie value
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX browser_bindings_expiry ON browser_bindings (expires_at);
