-- Seeds one project, one account and :codes authorization codes `hoc_bench_<i>` (i = 1…:codes), all for the
-- same redirect URI and PKCE challenge, valid for an hour. Only the SHA-256 of each code is stored, as the
-- server does. Run with psql -v codes=N -v challenge=… .
INSERT INTO projects (id, name, created_at) VALUES ('00000000-0000-0000-0000-00000000b001', 'Bench', now());
INSERT INTO environments (id, project_id, kind, publishable_key)
VALUES ('00000000-0000-0000-0000-00000000b002', '00000000-0000-0000-0000-00000000b001', 'development', 'pk_test_bench'),
       ('00000000-0000-0000-0000-00000000b003', '00000000-0000-0000-0000-00000000b001', 'production', 'pk_live_bench');
INSERT INTO users (id, email, email_normalized, name, password_hash, password_changed_at, created_at)
VALUES ('00000000-0000-0000-0000-00000000b004', 'bench@example.com', 'bench@example.com', 'Bench', 'x', now(), now());
INSERT INTO authorization_codes (code_hash, environment_id, user_id, redirect_uri, code_challenge, auth_time, issued_at, expires_at)
SELECT encode(sha256(convert_to('hoc_bench_' || i, 'UTF8')), 'hex'), '00000000-0000-0000-0000-00000000b002',
       '00000000-0000-0000-0000-00000000b004', 'http://127.0.0.1:5000/cb', :'challenge', now(), now(), now() + interval '1 hour'
FROM generate_series(1, :codes) AS i;
ANALYZE;
