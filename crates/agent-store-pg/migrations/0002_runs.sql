-- Runs shared by nodes: a queue that workers claim from (FOR UPDATE SKIP LOCKED) under a lease
-- they keep alive, the messages sent to a run while it works, and the risky tool calls a run
-- waits on, decided from any node.
CREATE TABLE agent_runs (
    run_id           BIGSERIAL PRIMARY KEY,
    trace_id         TEXT NOT NULL,
    kind             TEXT NOT NULL,
    input            TEXT,
    settings         JSON NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued',
    worker           TEXT,
    lease_until      TIMESTAMPTZ,
    attempts         INT NOT NULL DEFAULT 0,
    cancel_requested BOOLEAN NOT NULL DEFAULT false,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at      TIMESTAMPTZ,
    error            TEXT
);
-- A trace has at most one run that is queued or running.
CREATE UNIQUE INDEX agent_runs_one_active_per_trace ON agent_runs (trace_id) WHERE status <> 'done';
CREATE INDEX agent_runs_claimable ON agent_runs (run_id) WHERE status <> 'done';

-- A message is kept until the run it was handed to is done: a worker that dies after taking
-- it leaves it for the next attempt.
CREATE TABLE agent_run_messages (
    message_id BIGSERIAL PRIMARY KEY,
    trace_id   TEXT NOT NULL,
    content    TEXT NOT NULL,
    delivered  BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX agent_run_messages_by_trace ON agent_run_messages (trace_id, message_id);

CREATE TABLE agent_approvals (
    trace_id     TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    decision     TEXT,
    reason       TEXT,
    PRIMARY KEY (trace_id, tool_call_id)
);
