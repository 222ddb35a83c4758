-- Snapshots and undo (docs/kernel.md "Snapshots and undo").

-- A snapshot is the project's state at one moment, cheaply: per file its id, version, title,
-- folder and whether it was deleted (the text is already kept in file_versions), plus the notes.
-- `run_id` marks the snapshot a run took as it started (one per run); `kind` says who took it.
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'manual'
  CHECK (kind IN ('manual', 'run_start', 'branch_head'));
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS run_id uuid;
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS created_by uuid;
-- The newest project_changes id when the snapshot was taken: changes after it came later.
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS change_mark bigint NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX IF NOT EXISTS snapshots_run_idx ON snapshots (run_id) WHERE kind = 'run_start';

-- Every change of a file's version, title, folder or deleted flag, and of the project's notes,
-- with who made it: the run whose fenced write made it (set by withRunFence), a restore, or
-- (neither) the author. Written by triggers so no write path can forget it; undo reads it to
-- know which files a run touched and whether anyone changed them after.
CREATE TABLE IF NOT EXISTS project_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id uuid NOT NULL,
  -- null: the project's notes
  file_id uuid,
  run_id uuid,
  restore boolean NOT NULL DEFAULT false,
  -- the file's version, or the notes' version
  version integer NOT NULL,
  title text,
  folder text,
  deleted boolean,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS project_changes_run_idx ON project_changes (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS project_changes_project_idx ON project_changes (project_id, id);

CREATE OR REPLACE FUNCTION quill_change_run() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT NULLIF(current_setting('quill.run_id', true), '')::uuid
$$;

CREATE OR REPLACE FUNCTION quill_record_file_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.version = OLD.version AND NEW.title = OLD.title
     AND NEW.folder = OLD.folder AND NEW.deleted = OLD.deleted THEN
    RETURN NEW;
  END IF;
  INSERT INTO project_changes (project_id, file_id, run_id, restore, version, title, folder, deleted)
  VALUES (NEW.project_id, NEW.id, quill_change_run(),
          COALESCE(current_setting('quill.restore', true), '') = 'on',
          NEW.version, NEW.title, NEW.folder, NEW.deleted);
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION quill_record_notes_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.notes_version <> OLD.notes_version THEN
    INSERT INTO project_changes (project_id, file_id, run_id, restore, version)
    VALUES (NEW.id, NULL, quill_change_run(),
            COALESCE(current_setting('quill.restore', true), '') = 'on', NEW.notes_version);
  END IF;
  RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS files_record_change ON files;
CREATE TRIGGER files_record_change AFTER INSERT OR UPDATE ON files
  FOR EACH ROW EXECUTE FUNCTION quill_record_file_change();
DROP TRIGGER IF EXISTS projects_record_notes_change ON projects;
CREATE TRIGGER projects_record_notes_change AFTER UPDATE OF notes_version ON projects
  FOR EACH ROW EXECUTE FUNCTION quill_record_notes_change();
