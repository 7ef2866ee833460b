-- Seeds the pipeline benchmark (docs/performance.md, "Pipeline benchmark"). Run with
--   psql -v codes=N -v sessions=N -v minimal=N -v users=N -v challenge=…
-- One project (development key pk_test_bench, loopback callback http://127.0.0.1:5000/cb) and :users
-- accounts, each with a live ZevID browser session; then, as the server would have written them:
--   - :codes authorization codes `hoc_bench_<i>` (i = 1…:codes), valid for an hour, spread over the accounts
--     and their browser sessions (so concurrent exchanges rarely lock the same account row);
--   - :sessions app sessions whose first refresh token is `zrt_bench_<i>` (generation 1, in the session row);
--   - the minimal two-table exchange (schema bench_minimal): :minimal codes `hoc_min_<i>` and an empty
--     sessions table, with only the keys a lookup by code or by token needs.
--   - :requests pending sign-ins, each with its browser binding, as starts leave them, and :requests other
--     sessions refreshed once (a rotated refresh token and an access token in the history tables): a
--     deployment in use always has these rows. With these tables empty when analysed, PostgreSQL plans the
--     start's binding lookup and the refresh's token lookup as scans of an empty table, and keeps those
--     plans while the measurement fills the tables (each statement then slower than the one before).
-- Only SHA-256 hex digests of codes and tokens are stored, as the server does.
INSERT INTO projects (id, name, created_at) VALUES ('00000000-0000-0000-0000-00000000b001', 'Bench', now());
INSERT INTO environments (id, project_id, kind, publishable_key)
VALUES ('00000000-0000-0000-0000-00000000b002', '00000000-0000-0000-0000-00000000b001', 'development', 'pk_test_bench'),
       ('00000000-0000-0000-0000-00000000b003', '00000000-0000-0000-0000-00000000b001', 'production', 'pk_live_bench');
-- Stored parsed, as registration stores it (sql/008): the start never parses a registered URI again.
INSERT INTO callbacks (environment_id, uri, kind, scheme, host, port, path_and_query, created_at)
VALUES ('00000000-0000-0000-0000-00000000b002', 'http://127.0.0.1:5000/cb', 'loopback', 'http', '127.0.0.1', 5000, '/cb', now());

INSERT INTO users (id, email, email_normalized, name, password_hash, password_changed_at, created_at)
SELECT ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'bench' || u || '@example.com',
       'bench' || u || '@example.com', 'Bench ' || u, 'x', now(), now()
FROM generate_series(1, :users) AS u;
INSERT INTO browser_sessions (id, token_hash, user_id, auth_time, created_at)
SELECT ('00000000-0000-4000-9000-' || lpad(u::text, 12, '0'))::uuid, encode(sha256(convert_to('zbs_bench_' || u, 'UTF8')), 'hex'),
       ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, now(), now()
FROM generate_series(1, :users) AS u;

INSERT INTO authorization_codes (code_hash, environment_id, user_id, browser_session_id, redirect_uri, code_challenge,
    auth_time, issued_at, expires_at)
SELECT encode(sha256(convert_to('hoc_bench_' || i, 'UTF8')), 'hex'), '00000000-0000-0000-0000-00000000b002',
       ('00000000-0000-4000-8000-' || lpad((1 + i % :users)::text, 12, '0'))::uuid,
       ('00000000-0000-4000-9000-' || lpad((1 + i % :users)::text, 12, '0'))::uuid,
       'http://127.0.0.1:5000/cb', :'challenge', now(), now(), now() + interval '1 hour'
FROM generate_series(1, :codes) AS i;

-- As the exchange writes them (sql/021): the first token pair in the session row.
INSERT INTO sessions (id, environment_id, user_id, auth_time, created_at, last_refreshed_at,
    first_access_token_hash, first_access_expires_at, first_refresh_token_hash)
SELECT ('00000000-0000-4000-a000-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-0000-0000-00000000b002',
       ('00000000-0000-4000-8000-' || lpad((1 + i % :users)::text, 12, '0'))::uuid, now(), now(), now(),
       encode(sha256(convert_to('zat_bench_' || i, 'UTF8')), 'hex'), now() + interval '15 minutes',
       encode(sha256(convert_to('zrt_bench_' || i, 'UTF8')), 'hex')
FROM generate_series(1, :sessions) AS i;

INSERT INTO browser_bindings (binding_hash, created_at, expires_at)
SELECT encode(sha256(convert_to('zbb_seed_' || i, 'UTF8')), 'hex'), now(), now() + interval '1 day'
FROM generate_series(1, :requests) AS i;
INSERT INTO authorization_requests (environment_id, redirect_uri, redirect_kind, state, code_challenge, prompt_login,
    browser_binding_hash, created_at, expires_at, redirect_scheme, redirect_host, redirect_port, redirect_path_and_query)
SELECT '00000000-0000-0000-0000-00000000b002', 'http://127.0.0.1:5000/cb', 'loopback', 'seed' || i, :'challenge', false,
       encode(sha256(convert_to('zbb_seed_' || i, 'UTF8')), 'hex'), now(), now() + interval '10 minutes',
       'http', '127.0.0.1', 5000, '/cb'
FROM generate_series(1, :requests) AS i;

INSERT INTO sessions (id, environment_id, user_id, auth_time, created_at, last_refreshed_at, generation,
    first_access_token_hash, first_access_expires_at, first_refresh_token_hash)
SELECT ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid, '00000000-0000-0000-0000-00000000b002',
       ('00000000-0000-4000-8000-' || lpad((1 + i % :users)::text, 12, '0'))::uuid, now(), now(), now(), 2,
       encode(sha256(convert_to('zat_seed_' || i, 'UTF8')), 'hex'), now() + interval '15 minutes',
       encode(sha256(convert_to('zrt_seed_' || i, 'UTF8')), 'hex')
FROM generate_series(1, :requests) AS i;
INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
SELECT encode(sha256(convert_to('zrt_seed2_' || i, 'UTF8')), 'hex'), ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid,
       2, now()
FROM generate_series(1, :requests) AS i;
INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
SELECT encode(sha256(convert_to('zat_seed2_' || i, 'UTF8')), 'hex'), ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid,
       now(), now() + interval '15 minutes'
FROM generate_series(1, :requests) AS i;

CREATE SCHEMA bench_minimal;
CREATE TABLE bench_minimal.codes (
    code_hash   text PRIMARY KEY,
    user_id     uuid NOT NULL,
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE TABLE bench_minimal.sessions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id             uuid NOT NULL,
    access_token_hash   text NOT NULL UNIQUE,
    refresh_token_hash  text NOT NULL UNIQUE,
    created_at          timestamptz NOT NULL
);
INSERT INTO bench_minimal.codes (code_hash, user_id, expires_at)
SELECT encode(sha256(convert_to('hoc_min_' || i, 'UTF8')), 'hex'),
       ('00000000-0000-4000-8000-' || lpad((1 + i % :users)::text, 12, '0'))::uuid, now() + interval '1 hour'
FROM generate_series(1, :minimal) AS i;
