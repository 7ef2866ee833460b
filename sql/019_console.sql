-- 019: the console (docs/console.md, "Signing in"). The console is a built-in first-party OpenID client of
-- the deployment: a project and one development environment owned by the deployment, whose publishable key
-- (the OAuth client_id) is `console`. It has no secret key, no callback row (its one redirect URI,
-- ISSUER/console/callback, is supplied by the server from its configuration) and no production environment,
-- so the project lists, which join both environments, never show it (docs/decisions.md, "The console is a
-- deployment-owned client").
INSERT INTO projects (id, name, created_at)
VALUES ('00000000-0000-4000-8000-00000000c0de', 'ZevAuth console', '2026-01-01T00:00:00Z')
ON CONFLICT (id) DO NOTHING;

INSERT INTO environments (id, project_id, kind, publishable_key)
VALUES ('00000000-0000-4000-8000-00000000c0df', '00000000-0000-4000-8000-00000000c0de', 'development', 'console')
ON CONFLICT DO NOTHING;

-- A console session: 12 hours from the sign-in at most, 1 hour idle (docs/console.md, "Signing in").
-- The id is a 256-bit secret held in the browser's cookie; only its SHA-256 digest is stored.
CREATE TABLE console_sessions (
    id_hash      text PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    auth_time    timestamptz NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_created ON console_sessions (created_at);
