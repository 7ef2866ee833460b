-- 020: the account a code flow was requested for, whether or not its code was sent. `user_id` stays NULL on
-- a flow that sends nothing (no account, or the account over its code limits), so such a flow can never
-- finish anything; "Send a new code" on it asks again for this account, and the limits are decided from
-- the account's codes in the window at that moment (docs/protocol.md, "Email codes").
ALTER TABLE email_codes ADD COLUMN requested_user_id uuid REFERENCES users (id) ON DELETE CASCADE;
