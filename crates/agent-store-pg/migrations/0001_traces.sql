-- Traces, their goal trees, messages and events. The events table is the source of truth: one
-- row per event with a dense per-trace id; the other tables hold what the events say, written
-- in the same transaction. Every document is the Contract's JSON, stored as `json`: the exact
-- text written, which may hold any string a user, a model or a tool produced — NUL characters
-- included, which `jsonb` refuses.
CREATE TABLE agent_traces (
    trace_id        TEXT PRIMARY KEY,
    parent_trace_id TEXT,
    created_at      TEXT NOT NULL,
    -- The trace's mode and status, for listing filters (the document's own are the truth).
    mode            TEXT NOT NULL,
    status          TEXT NOT NULL,
    trace           JSON NOT NULL,
    goal_tree       JSON NOT NULL,
    last_event_id   BIGINT NOT NULL,
    last_sequence   BIGINT NOT NULL,
    sub_trace_count BIGINT NOT NULL
);
CREATE INDEX agent_traces_by_parent ON agent_traces (parent_trace_id);
CREATE INDEX agent_traces_newest_first ON agent_traces (created_at DESC, trace_id DESC);

CREATE TABLE agent_events (
    trace_id TEXT NOT NULL REFERENCES agent_traces (trace_id) ON DELETE CASCADE,
    event_id BIGINT NOT NULL,
    event    JSON NOT NULL,
    PRIMARY KEY (trace_id, event_id)
);

CREATE TABLE agent_messages (
    trace_id TEXT NOT NULL REFERENCES agent_traces (trace_id) ON DELETE CASCADE,
    sequence BIGINT NOT NULL,
    goal_id  TEXT,
    message  JSON NOT NULL,
    PRIMARY KEY (trace_id, sequence)
);
CREATE INDEX agent_messages_by_goal ON agent_messages (trace_id, goal_id, sequence);
