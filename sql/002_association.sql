-- 002: mobile apps, their Android signing certificates, association-file checks (history and per-app
-- state) and the per-domain check schedule with leases: docs/protocol.md#apps.
-- Times are written by the server from its injected clock, never by now().

CREATE TABLE mobile_apps (
    id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    environment_id              uuid NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    platform                    text NOT NULL CHECK (platform IN ('ios', 'android')),
    team_id                     text,   -- iOS: 10 of A-Z 0-9, upper case
    bundle_id                   text,   -- iOS: as typed (letters, digits, '-', '.'; at most 155)
    package_name                text,   -- Android: the applicationId, exact case
    -- The operator's exception: production sign-ins may return to this private-use scheme.
    production_custom_scheme    text,
    created_at                  timestamptz NOT NULL,
    CONSTRAINT mobile_apps_platform_fields CHECK (
        (platform = 'ios' AND team_id ~ '^[A-Z0-9]{10}$' AND bundle_id ~ '^[A-Za-z0-9.-]{1,155}$'
            AND package_name IS NULL)
        OR (platform = 'android' AND package_name ~ '^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$'
            AND team_id IS NULL AND bundle_id IS NULL)),
    CONSTRAINT mobile_apps_custom_scheme_shape CHECK (
        production_custom_scheme IS NULL OR production_custom_scheme ~ '^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$')
);
CREATE INDEX mobile_apps_environment ON mobile_apps (environment_id, created_at, id);
-- Apple calls bundle IDs case-insensitive: one environment cannot register the same one twice in two cases.
CREATE UNIQUE INDEX mobile_apps_ios_unique ON mobile_apps (environment_id, lower(bundle_id)) WHERE platform = 'ios';
CREATE UNIQUE INDEX mobile_apps_android_unique ON mobile_apps (environment_id, package_name) WHERE platform = 'android';

-- One row per SHA-256 certificate fingerprint of an Android app, canonical: 32 upper-case hex pairs joined by ':'.
CREATE TABLE android_fingerprints (
    app_id      uuid NOT NULL REFERENCES mobile_apps (id) ON DELETE CASCADE,
    fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9A-F]{2}(:[0-9A-F]{2}){31}$'),
    position    integer NOT NULL,   -- the order the project gave them
    PRIMARY KEY (app_id, fingerprint)
);

-- Limits, enforced by PostgreSQL so that neither concurrent requests nor a direct INSERT can break them
-- (docs/protocol.md#app-limits: 10 iOS and 10 Android apps per environment, 5 certificates per Android app, one Apple team
-- for every iOS app of an environment). A CHECK constraint cannot count rows, so a trigger does: it first
-- locks the parent row (FOR NO KEY UPDATE: it serialises writers of this limit without blocking the
-- foreign-key share locks that sign-ins take on the environment), then counts. Under READ COMMITTED each
-- statement of a volatile PL/pgSQL function takes a new snapshot, so the count after the lock sees every
-- committed competitor. The error carries a stable constraint name the store maps by
-- (`PostgresError.constraint`), never by its text.
CREATE FUNCTION mobile_apps_enforce_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    existing integer;
BEGIN
    PERFORM 1 FROM environments WHERE id = NEW.environment_id FOR NO KEY UPDATE;
    SELECT count(*) INTO existing FROM mobile_apps
     WHERE environment_id = NEW.environment_id AND platform = NEW.platform AND id <> NEW.id;
    IF existing >= 10 THEN
        RAISE EXCEPTION 'an environment has at most 10 % apps', NEW.platform
            USING ERRCODE = 'check_violation', CONSTRAINT = 'native_app_limit';
    END IF;
    IF NEW.platform = 'ios' AND EXISTS (
        SELECT 1 FROM mobile_apps
         WHERE environment_id = NEW.environment_id AND platform = 'ios' AND id <> NEW.id AND team_id <> NEW.team_id
    ) THEN
        RAISE EXCEPTION 'every iOS app of an environment belongs to one Apple team'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'native_app_team_mismatch';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER mobile_apps_limits BEFORE INSERT OR UPDATE OF environment_id, platform, team_id ON mobile_apps
    FOR EACH ROW EXECUTE FUNCTION mobile_apps_enforce_limits();

CREATE FUNCTION android_fingerprints_enforce_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    app_platform text;
    existing integer;
BEGIN
    SELECT platform INTO app_platform FROM mobile_apps WHERE id = NEW.app_id FOR NO KEY UPDATE;
    IF app_platform IS DISTINCT FROM 'android' THEN
        RAISE EXCEPTION 'fingerprints belong to Android apps'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'android_fingerprints_android_only';
    END IF;
    SELECT count(*) INTO existing FROM android_fingerprints
     WHERE app_id = NEW.app_id AND fingerprint <> NEW.fingerprint;
    IF existing >= 5 THEN
        RAISE EXCEPTION 'an Android app has at most 5 certificate fingerprints'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'native_app_limit';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER android_fingerprints_limits BEFORE INSERT OR UPDATE OF app_id ON android_fingerprints
    FOR EACH ROW EXECUTE FUNCTION android_fingerprints_enforce_limits();

-- Every check of one link domain, kept as history: what each file's fetch answered and each app's verdict.
CREATE TABLE association_checks (
    id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    domain                  text NOT NULL,
    checked_at              timestamptz NOT NULL,
    -- HTTP status of each fetch (NULL when not fetched or the fetch failed before a response).
    aasa_status             integer,
    assetlinks_status       integer,
    -- Whether a file failed transiently (timeout, DNS, 5xx, refused connection).
    transient               boolean NOT NULL,
    -- {"<app id>": {"status": "verified"|"not_verified", "problems": [{"code","message","blocking"}]}}
    results                 jsonb NOT NULL
);
CREATE INDEX association_checks_domain ON association_checks (domain, checked_at DESC);

-- The current link state of each app on each link domain of its environment.
CREATE TABLE app_link_states (
    app_id          uuid NOT NULL REFERENCES mobile_apps (id) ON DELETE CASCADE,
    domain          text NOT NULL,
    status          text NOT NULL CHECK (status IN ('verified', 'not_verified', 'pending')),
    checked_at      timestamptz,
    next_check_at   timestamptz,
    problems        jsonb NOT NULL DEFAULT '[]',
    -- iOS: the callback paths on this domain the file covers for the app (production gating);
    -- Android: every path when verified, none otherwise.
    covered_paths   text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (app_id, domain)
);
CREATE INDEX app_link_states_domain ON app_link_states (domain);

-- When each link domain is checked next, and which instance holds it (a lease, so that several
-- instances never check one domain at once).
CREATE TABLE link_domain_schedule (
    domain                          text PRIMARY KEY,
    next_check_at                   timestamptz NOT NULL,
    last_checked_at                 timestamptz,
    lease_owner                     text,
    lease_expires_at                timestamptz,
    consecutive_transient_failures  integer NOT NULL DEFAULT 0
);
CREATE INDEX link_domain_schedule_due ON link_domain_schedule (next_check_at);
