-- The product API (README "HTTP API"): projects an author manages, session history, members,
-- self-service API keys.

-- The language the agent writes in, next to the project type it already reads.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS language text NOT NULL DEFAULT 'zh'
  CHECK (language IN ('zh', 'en'));
ALTER TABLE projects ADD COLUMN IF NOT EXISTS archived_at timestamptz;
-- Soft delete: the project is invisible everywhere but restorable for PROJECT_RESTORE_DAYS.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
-- Bumped on every change of `notes` (the author's editor and the agent's update_project alike),
-- so an author's save is checked against the version they read.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS notes_version integer NOT NULL DEFAULT 0;
-- The project list: the caller's memberships, newest change first, keyset-paginated.
CREATE INDEX IF NOT EXISTS projects_updated_idx ON projects (updated_at DESC, id DESC);

-- A deleted session leaves its runs and messages for billing and audit, out of every listing.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS deleted_at timestamptz;
CREATE INDEX IF NOT EXISTS runs_session_created_idx ON runs (session_id, created_at, run_id);

-- An API key is listed by a prefix of the secret (enough to recognise it, useless to use it).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS prefix text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz;
