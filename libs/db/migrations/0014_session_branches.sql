-- Branches of a session (docs/kernel.md "Branches"). A branch records its parent and the message
-- it forks after; nothing is copied. A session that never branched has no branch rows and no
-- active branch, and reads all its messages as before.
CREATE TABLE IF NOT EXISTS session_branches (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
  parent_id uuid REFERENCES session_branches (id) ON DELETE CASCADE,
  -- The parent path's messages with seq <= fork_seq belong to this branch's history too; null on
  -- the root branch.
  fork_seq bigint,
  -- The files as they were at the fork point, and as they were when the author last left the
  -- branch (switching back restores the head, else the base).
  base_snapshot_id uuid REFERENCES snapshots (id) ON DELETE SET NULL,
  head_snapshot_id uuid REFERENCES snapshots (id) ON DELETE SET NULL,
  -- The newest project_changes id when the branch became active: the author's changes after it
  -- were made on this branch (switching away from them asks for force).
  entered_change_mark bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS session_branches_session_idx ON session_branches (session_id, created_at);

ALTER TABLE sessions ADD COLUMN IF NOT EXISTS active_branch_id uuid REFERENCES session_branches (id) ON DELETE SET NULL;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS branch_id uuid;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS branch_id uuid;
CREATE INDEX IF NOT EXISTS messages_branch_idx ON messages (branch_id, seq) WHERE branch_id IS NOT NULL;

-- A run belongs to the branch active when it started; its messages to the run's branch (the
-- assistant reply lands on the branch its run started on), else to the session's active branch.
-- Set here so every path that writes runs and messages gets it without knowing about branches.
CREATE OR REPLACE FUNCTION quill_run_branch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.branch_id IS NULL THEN
    SELECT active_branch_id INTO NEW.branch_id FROM sessions WHERE session_id = NEW.session_id;
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION quill_message_branch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.branch_id IS NULL AND NEW.run_id IS NOT NULL THEN
    SELECT branch_id INTO NEW.branch_id FROM runs WHERE run_id = NEW.run_id;
  END IF;
  IF NEW.branch_id IS NULL THEN
    SELECT active_branch_id INTO NEW.branch_id FROM sessions WHERE session_id = NEW.session_id;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS runs_branch ON runs;
CREATE TRIGGER runs_branch BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION quill_run_branch();
DROP TRIGGER IF EXISTS messages_branch ON messages;
CREATE TRIGGER messages_branch BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION quill_message_branch();
