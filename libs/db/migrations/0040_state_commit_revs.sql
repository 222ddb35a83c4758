-- Commits with rev for the project info and the task board (docs/kernel.md "Commits with rev"):
-- each key has its own rev on the project row, as the notes have notes_version.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS info_version integer NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS task_board_version integer NOT NULL DEFAULT 0;
