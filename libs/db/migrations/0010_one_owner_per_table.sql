-- One owning service per table (docs/architecture.md "What each service owns"). The phase of a
-- session moves with its runs, so it leaves `sessions` (the gateway's: title, deletion) for its
-- own table, which only the router writes. The write epoch of a run is the workers' fencing
-- token, so it leaves `runs` (the router's) for a table only the workers write.

CREATE TABLE session_phases (
  session_id uuid PRIMARY KEY REFERENCES sessions (session_id) ON DELETE CASCADE,
  phase text NOT NULL DEFAULT 'idle' CHECK (phase IN ('idle', 'running', 'waiting_user', 'done', 'error')),
  -- The last run ended asking the author a question: the next turn inherits its routing.
  clarification_pending boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO session_phases (session_id, phase, clarification_pending, updated_at)
  SELECT session_id, phase, clarification_pending, updated_at FROM sessions WHERE phase <> 'idle' OR clarification_pending;
ALTER TABLE sessions DROP COLUMN phase, DROP COLUMN clarification_pending;

CREATE TABLE run_fences (
  run_id uuid PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  -- Bumped when a worker takes a redelivered task over; writes from older epochs are refused.
  epoch integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO run_fences (run_id, epoch) SELECT run_id, epoch FROM runs WHERE epoch > 0;
ALTER TABLE runs DROP COLUMN epoch;

-- A run is `idle` from the gateway's admission until a router takes it (docs/architecture.md "Phases").
ALTER TABLE runs ALTER COLUMN phase SET DEFAULT 'idle';
CREATE INDEX IF NOT EXISTS runs_idle_created_idx ON runs (created_at) WHERE phase = 'idle';
