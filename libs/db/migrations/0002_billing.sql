-- Billing (issue 6): what each settlement was decided from, admin credit grants, and the indexes
-- the usage queries (per user per day, per provider/model) read.

-- The settlement keeps the evidence of its decision: whether the run produced substantive output
-- and the run meter summary (model/tool calls, durations, failovers, tokens) it was computed with.
ALTER TABLE settlements ADD COLUMN produced_output boolean NOT NULL DEFAULT false;
ALTER TABLE settlements ADD COLUMN run_meter jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Credits granted by an admin: an audit trail next to the balance they raised.
CREATE TABLE credit_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  granted_by uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credits integer NOT NULL CHECK (credits > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_grants_user_idx ON credit_grants (user_id, created_at);

CREATE INDEX usage_records_run_idx ON usage_records (run_id);
