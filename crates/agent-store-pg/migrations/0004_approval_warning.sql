-- A call waiting for a decision carries the warning of a deny rule that cannot check it (a
-- `bash` script whose programs cannot all be known), so every node that lists the call shows it
-- to the person who decides. NULL for an ordinary risky call and for calls asked before.
ALTER TABLE agent_approvals ADD COLUMN IF NOT EXISTS warning TEXT;
