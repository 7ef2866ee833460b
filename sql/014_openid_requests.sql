-- 014: what a pending sign-in remembers of OpenID Connect's request options (docs/protocol.md, "prompt,
-- max_age and hints"). `prompt=consent` shows the consent page even when consent is remembered, so the
-- consent page must know it was asked. `prompt=none`, `max_age` and `id_token_hint` are decided at the
-- start and need no column; `prompt=login` is `prompt_login` (sql/001), `login_hint` is `login_hint`.
ALTER TABLE authorization_requests ADD COLUMN prompt_consent boolean NOT NULL DEFAULT false;
