-- pgbench script: the server's exchange statement (PostgresAuthorizations.exchangeSQL) with the parameters the
-- server would bind, one fresh code per transaction: PostgreSQL's own ceiling for a one-statement exchange.
\set n random(1, :codes)
WITH env AS (
    SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes
    FROM environments WHERE publishable_key = 'pk_test_bench'
), code AS (
    UPDATE authorization_codes c SET
        consumed_at = COALESCE(c.consumed_at, now()),
        consumed_by = COALESCE(c.consumed_by, gen_random_uuid()),
        replayed_at = c.replayed_at
    WHERE c.code_hash = encode(sha256(convert_to('hoc_bench_' || :n, 'UTF8')), 'hex')
      AND c.environment_id = (SELECT id FROM env)
      AND (c.consumed_at IS NOT NULL OR c.expires_at > now())
    RETURNING c.id, c.user_id, c.browser_session_id, c.auth_time, c.consumed_at = now() AS won
), new_session AS (
    INSERT INTO sessions (environment_id, user_id, browser_session_id, authorization_code_id, auth_time,
        created_at, last_refreshed_at)
    SELECT env.id, code.user_id, code.browser_session_id, code.id, code.auth_time, now(), now()
    FROM code, env WHERE code.won
    RETURNING id
)
SELECT (SELECT id FROM env), (SELECT count(*) FROM new_session);
