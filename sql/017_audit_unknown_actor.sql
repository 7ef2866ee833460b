-- 017: the audit log's `unknown` actor (docs/console.md, "Audit log"): a refused admin call whose bearer
-- names nobody (an unknown or revoked secret key) is recorded with this kind and no actor id; the bearer
-- itself is never stored.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_kind_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check
    CHECK (actor_kind IN ('operator_token', 'secret_key', 'account', 'system', 'unknown'));
