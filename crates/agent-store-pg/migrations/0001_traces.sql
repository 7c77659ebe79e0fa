-- Traces, their goal trees, messages and events. The events table is the source of truth: one
-- row per event with a dense per-trace id; the other tables hold what the events say, written
-- in the same transaction. Traces and goal trees are JSONB (listing filters read them); messages
-- and events are JSON, kept as the exact text written (any string a model or a tool produced,
-- NUL characters included, which JSONB refuses).
CREATE TABLE agent_traces (
    trace_id        TEXT PRIMARY KEY,
    parent_trace_id TEXT,
    created_at      TEXT NOT NULL,
    trace           JSONB NOT NULL,
    goal_tree       JSONB NOT NULL,
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
