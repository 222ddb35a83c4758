-- Artifacts and acceptance (docs/kernel.md "Artifacts and acceptance"): every text the agent
-- writes into a file (a body, a draft next to a file, an edit) is one artifact version with a
-- state. Until it is accepted the context compiler shows it as a draft, never as the fact.

-- Per project: `review` (the author accepts each artifact) or `auto` (an in-file write is
-- accepted as it is saved, the behaviour before artifacts). The column default keeps rows made
-- outside the product API (fixtures, imports, seeds) on `auto`; POST /projects creates `review`.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS artifact_acceptance text NOT NULL DEFAULT 'auto'
  CHECK (artifact_acceptance IN ('auto', 'review'));

CREATE TABLE IF NOT EXISTS artifacts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  run_id uuid,
  step integer,
  -- The file the artifact is for: the file it was written into, or the original a draft is of
  -- (null only for a draft of a file that no longer exists).
  file_id uuid REFERENCES files (id) ON DELETE CASCADE,
  -- Where the text is: file_id itself (`in_file`) or a `（AI 草稿）` file next to it (`draft`).
  text_file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  placement text NOT NULL CHECK (placement IN ('in_file', 'draft')),
  -- The version of text_file_id that holds the artifact's text, and (in_file) the version the
  -- file had before it: what a rejection restores.
  version integer NOT NULL,
  base_version integer,
  state text NOT NULL CHECK (state IN ('drafted', 'under_review', 'accepted', 'rejected', 'revision_requested')),
  -- How the state was reached: `auto` (the project's setting), `author`, or null while open.
  decided_by text,
  decided_by_user uuid,
  comment text,
  -- The reviewer's findings about this very version: [{ run_id, step, role, text, at }].
  findings jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- The run a revision request started.
  revision_run_id uuid,
  write_key text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  decided_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS artifacts_write_key_idx ON artifacts (write_key) WHERE write_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS artifacts_project_idx ON artifacts (project_id, created_at DESC);
CREATE INDEX IF NOT EXISTS artifacts_run_idx ON artifacts (run_id, created_at);
CREATE INDEX IF NOT EXISTS artifacts_open_idx ON artifacts (project_id, text_file_id)
  WHERE state IN ('drafted', 'under_review', 'revision_requested');

-- Drafts made before artifacts existed become open draft artifacts, so accept-draft has one
-- path for every draft.
INSERT INTO artifacts (project_id, file_id, text_file_id, placement, version, state, created_at)
SELECT d.project_id, d.draft_of, d.id, 'draft', d.version, 'drafted', d.created_at
FROM files d
WHERE d.draft_of IS NOT NULL AND NOT d.deleted
  AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.text_file_id = d.id);
