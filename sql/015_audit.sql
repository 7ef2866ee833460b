-- 015: the audit log (docs/console.md, "Audit log"): one row per change through the admin API or the
-- console, written in the change's own transaction, and one per refused action; a person's own security
-- events carry `subject_user_id`. Append-only: a trigger refuses UPDATE, and DELETE of any row younger
-- than the 400-day retention (the housekeeping job prunes older ones). Never a secret in any column.
CREATE TABLE audit_log (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    at timestamptz NOT NULL,
    actor_kind text NOT NULL CHECK (actor_kind IN ('operator_token', 'secret_key', 'account', 'system')),
    actor_id text,
    action text NOT NULL,
    target text,
    project_id uuid,
    environment_id uuid,
    subject_user_id uuid,
    client_address text,
    outcome text NOT NULL CHECK (outcome IN ('done', 'refused'))
);
CREATE INDEX audit_log_newest ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_project ON audit_log (project_id, at DESC, id DESC);
CREATE INDEX audit_log_subject ON audit_log (subject_user_id, at DESC, id DESC);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND OLD.at < now() - interval '400 days' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
