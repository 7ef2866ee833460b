-- 006: account emails under the current address rule (docs/protocol.md, "Email addresses"): the local part
-- in Unicode NFKC, case-folded; the domain in its IDNA A-label form. SQL cannot run IDNA, so `zevauth
-- migrate` recomputes the keys in Swift inside this migration's transaction (and again on every later run,
-- for rows an older server wrote meanwhile); see docs/operations.md, "Accounts that share an address".

-- An account without a key cannot sign in: where two accounts now share one address, the later one has
-- none until an operator resolves it. Nothing is merged or deleted. (A UNIQUE constraint allows many NULLs.)
ALTER TABLE users ALTER COLUMN email_normalized DROP NOT NULL;

-- Which rule computed email_normalized: 0 is the earlier rule (NFC, lower case); the server writes 1.
ALTER TABLE users ADD COLUMN email_key_rule smallint NOT NULL DEFAULT 0;

-- The rows the recomputation looks for: keys from an earlier rule, and open accounts without a key.
CREATE INDEX users_email_key_work ON users (id) WHERE email_key_rule < 1 OR (email_normalized IS NULL AND closed_at IS NULL);
