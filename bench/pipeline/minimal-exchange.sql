-- pgbench: the minimal two-table exchange (docs/performance.md, "Pipeline benchmark"): consume the code with
-- UPDATE … RETURNING and insert the session, in one statement, on the bench_minimal tables of seed.sql.
-- Each client presents fresh codes: base + k * step + client_id + 1 (run.sh passes -D base, step, k=-1).
\set k :k + 1
\set n :base + :k * :step + :client_id + 1
WITH code AS (
    UPDATE bench_minimal.codes SET consumed_at = now()
    WHERE code_hash = encode(sha256(convert_to('hoc_min_' || :n::text, 'UTF8')), 'hex')
      AND consumed_at IS NULL AND expires_at > now()
    RETURNING user_id
)
INSERT INTO bench_minimal.sessions (user_id, access_token_hash, refresh_token_hash, created_at)
SELECT user_id, encode(sha256(convert_to('zat_min_' || :n::text, 'UTF8')), 'hex'),
       encode(sha256(convert_to('zrt_min_' || :n::text, 'UTF8')), 'hex'), now()
FROM code;
