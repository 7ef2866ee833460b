-- 028: a web client may require pushed authorization requests on its own (RFC 9126 §6, the client metadata
-- `require_pushed_authorization_requests`; docs/protocol.md, "Web clients" and "Pushed authorization
-- requests"): when true, a start by the client must resume a request it pushed to `/oauth2/par`, as every
-- start must when the environment's `require_pushed_authorization_requests` is true.
ALTER TABLE web_clients ADD COLUMN require_pushed_authorization_requests boolean NOT NULL DEFAULT false;
