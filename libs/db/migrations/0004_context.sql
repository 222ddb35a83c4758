-- Context compiler, cross-turn memory and skills (issue 8).

-- Skills are per user (skills.owner_id); only enabled ones appear in the L1 catalog.
ALTER TABLE skills ADD COLUMN IF NOT EXISTS enabled boolean NOT NULL DEFAULT true;
-- Imported packages may ship scripts: stored as text, never executed.
CREATE TABLE IF NOT EXISTS skill_resources (
  skill_id uuid NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
  -- Relative path inside the package, validated at import (no '..', no absolute paths).
  path text NOT NULL,
  content text NOT NULL,
  bytes integer NOT NULL CHECK (bytes >= 0),
  PRIMARY KEY (skill_id, path)
);

-- Skill text read by load_skill / read_skill_resource during one run: the per-request skill
-- token budget and the distinct-skill cap are checked against these rows, which every worker
-- replica running a step of the run sees.
CREATE TABLE IF NOT EXISTS skill_reads (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id uuid NOT NULL,
  skill_name text NOT NULL,
  path text NOT NULL,
  tokens integer NOT NULL CHECK (tokens >= 0),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS skill_reads_run_idx ON skill_reads (run_id);

-- History compaction: messages up to and including `through_seq` are represented by `summary`;
-- their full text is archived in the project file `archive_file_id` (readable with query_files).
-- A boundary is written once and reused by every later compile, so the history prefix stays
-- byte-identical until the next compaction.
CREATE TABLE IF NOT EXISTS history_compactions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  through_seq bigint NOT NULL,
  summary text NOT NULL,
  archive_file_id uuid,
  compacted_messages integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (session_id, through_seq)
);

-- The trace endpoint reads a run's traces in step order.
CREATE INDEX IF NOT EXISTS context_traces_run_role_idx ON context_traces (run_id, step, role);
