-- Stored prompts are kept only while a redelivered step could still ask for them: the context
-- service clears them after the run's wall clock (docs/decisions/0033-dispatch-by-reference.md).
-- The partial index holds just the rows that still carry one, so the periodic pass stays cheap
-- however many traces the table keeps.
CREATE INDEX IF NOT EXISTS context_traces_stored_prompt_idx
  ON context_traces (created_at) WHERE messages IS NOT NULL;
