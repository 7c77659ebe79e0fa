-- The events and messages no longer reference agent_traces by a foreign key: each inserted row
-- ran a check that its trace exists (a `SELECT … FOR KEY SHARE` on the trace's row), although
-- a commit writes the trace's row in the same statement as its events and messages, and no
-- trace is ever deleted by the store. Rows of a trace removed by hand must be removed with it.
ALTER TABLE agent_events DROP CONSTRAINT IF EXISTS agent_events_trace_id_fkey;
ALTER TABLE agent_messages DROP CONSTRAINT IF EXISTS agent_messages_trace_id_fkey;
