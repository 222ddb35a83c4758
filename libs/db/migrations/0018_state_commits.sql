-- Commits with rev (docs/kernel.md "Commits with rev"): structured project state (the notes
-- today) is written as value + rev + source through one path that checks permission and rev and
-- records each commit here. projects.notes_version is the notes' rev.
CREATE TABLE IF NOT EXISTS state_commits (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  key text NOT NULL,
  rev integer NOT NULL,
  -- The rev the writer based its value on; rev - 1 unless the commit was a merge.
  base_rev integer NOT NULL,
  value jsonb NOT NULL,
  -- `author:<user id>` or `agent:<role>:<run id>`.
  source text NOT NULL,
  merged boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (project_id, key, rev)
);
