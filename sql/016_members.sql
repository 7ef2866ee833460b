-- 016: project members and operators (docs/console.md, "Roles", "Members"). A member has one role per
-- project; an operator is an account the operator token marked. A project always keeps at least one owner:
-- each change of members decides it under a lock on the project's row (docs/console.md, "Members").
CREATE TABLE project_members (
    project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
    added_at    timestamptz NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members (user_id);

CREATE TABLE operators (
    user_id     uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    marked_at   timestamptz NOT NULL
);
