-- Settlement reconciliation (README "Fault tolerance") looks, every pass, for runs still running
-- and for ended runs without a billing decision; both sets are small, so partial indexes keep
-- the passes from scanning every run ever made.
CREATE INDEX runs_running_created_idx ON runs (created_at) WHERE phase = 'running';
CREATE INDEX runs_unsettled_updated_idx ON runs (updated_at)
  WHERE billing_decision IS NULL AND phase IN ('done', 'error', 'waiting_user');
