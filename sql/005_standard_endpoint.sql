-- 005: remember which endpoint started a pending sign-in, so a redirect it produces later (a denied
-- consent) uses that endpoint's error spelling (docs/protocol.md#authorize-errors).
ALTER TABLE authorization_requests ADD COLUMN standard_endpoint boolean NOT NULL DEFAULT false;
