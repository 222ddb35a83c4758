-- The turn context of a run (docs/agent-behaviour.md 「本轮上下文」): compiled once, at the run's
-- first compile, and reused byte-identically by every later step and role of the run, so their
-- prompts share one cacheable prefix up to and including it. The first writer wins.
CREATE TABLE IF NOT EXISTS run_turn_contexts (
  run_id uuid PRIMARY KEY,
  turn jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
