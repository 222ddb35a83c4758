-- AI writes never cost the author a word (docs/ai-writes.md).

-- An AI body that could not go into its file (the author saved it meanwhile, or the body is
-- partial and the file already holds text) becomes a draft file next to it, linked here.
ALTER TABLE files ADD COLUMN IF NOT EXISTS draft_of uuid REFERENCES files (id) ON DELETE SET NULL;
CREATE INDEX IF NOT EXISTS files_draft_of_idx ON files (draft_of) WHERE draft_of IS NOT NULL AND NOT deleted;

-- Why a version holds an incomplete body (stopped, disconnected, timed out, cut by the output
-- limit or by a provider error); null for a complete one.
ALTER TABLE file_versions ADD COLUMN IF NOT EXISTS partial_reason text;
-- The idempotency key of an AI write: a write retried after an unknown commit outcome, or redone
-- by the worker that took a redelivered step over, finds its own row instead of adding another.
ALTER TABLE file_versions ADD COLUMN IF NOT EXISTS write_key text;
CREATE UNIQUE INDEX IF NOT EXISTS file_versions_write_key_idx ON file_versions (write_key)
  WHERE write_key IS NOT NULL;

-- A step's progress, written by the worker after each model turn and in the same transaction as
-- each body save, so a worker that takes a redelivered step continues from it instead of redoing
-- model calls and writes. Owned by the role workers.
CREATE TABLE IF NOT EXISTS step_journals (
  run_id uuid NOT NULL,
  step integer NOT NULL,
  journal jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, step)
);
