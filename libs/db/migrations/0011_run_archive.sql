-- The run archive (docs/architecture.md "Run archive"): EVENTS keeps a run's frames and step
-- records for EVENTS_MAX_AGE_H only; when a run's stream ends the router copies them here, so a
-- run's events replay however old it is. Each item keeps its JetStream sequence, the SSE id
-- clients resume from.
CREATE TABLE run_archives (
  run_id uuid PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  -- [{ "seq": <stream sequence>, "frame": <SSE frame> }, ...] in stream order, through `done`.
  frames jsonb NOT NULL,
  -- [{ "seq": ..., "record": <step record envelope> }, ...] in stream order.
  steps jsonb NOT NULL,
  archived_at timestamptz NOT NULL DEFAULT now()
);
-- Set by the router with the archive row; the sweep looks only at ended runs without it.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS archived_at timestamptz;
CREATE INDEX IF NOT EXISTS runs_unarchived_idx ON runs (updated_at)
  WHERE archived_at IS NULL AND phase IN ('done', 'error', 'waiting_user');
