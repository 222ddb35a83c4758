-- Agent tools (issue 4): what update_project maintains next to projects.notes, and the lookups
-- the file tools make on every call.

-- Project info the agent may fill in (genre, synopsis, style…); the title stays the author's.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS info jsonb NOT NULL DEFAULT '{}'::jsonb;
-- The task board: typed tasks whose `done` was checked against files the run actually wrote.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS task_board jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Same-folder title lookups: rename_file refuses duplicates, create_file reuses a same-name file.
CREATE INDEX IF NOT EXISTS files_project_folder_title_idx ON files (project_id, folder, title)
  WHERE NOT deleted;
-- The author-edit diff starts from the newest AI version of a file.
CREATE INDEX IF NOT EXISTS file_versions_file_source_idx ON file_versions (file_id, source, version DESC);
