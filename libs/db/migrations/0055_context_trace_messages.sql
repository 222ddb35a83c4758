-- The compiled prompt of each compile, stored with its Context Trace: a redelivered step asks for
-- the context its first delivery ran with, so the step journal continues the same prompt
-- (docs/decisions/0033-dispatch-by-reference.md). Older rows have none.
ALTER TABLE context_traces ADD COLUMN IF NOT EXISTS messages jsonb;
