-- 010: what an OpenID sign-in carries from its start to its ID tokens (docs/protocol.md, "OpenID Connect").
--
-- The granted scope (space-separated, in the order `openid profile email offline_access`; '' when none)
-- and the nonce travel from the pending sign-in to its code and from the code to the session; the nonce
-- stops at the code (only the code exchange's ID token carries it). How the browser session was
-- authenticated (`amr`: 'pwd', 'pwd otp mfa' or 'pwd mfa', RFC 8176) is recorded where the browser session
-- is made and copied to the code and the session, beside `auth_time`. Rows made before read as no scope and
-- a password sign-in.
ALTER TABLE authorization_requests ADD COLUMN scope text NOT NULL DEFAULT '', ADD COLUMN nonce text;
ALTER TABLE browser_sessions ADD COLUMN amr text NOT NULL DEFAULT 'pwd';
ALTER TABLE authorization_codes ADD COLUMN scope text NOT NULL DEFAULT '', ADD COLUMN nonce text,
    ADD COLUMN amr text NOT NULL DEFAULT 'pwd';
ALTER TABLE sessions ADD COLUMN scope text NOT NULL DEFAULT '', ADD COLUMN amr text NOT NULL DEFAULT 'pwd';

-- The JWS algorithm of an environment's ID tokens (`idTokenSigningAlg`, RFC 7518 §3.1).
ALTER TABLE environments ADD COLUMN id_token_signing_alg text NOT NULL DEFAULT 'RS256'
    CONSTRAINT environments_id_token_signing_alg CHECK (id_token_signing_alg IN ('RS256', 'ES256'));
