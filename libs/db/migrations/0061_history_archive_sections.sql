-- The history archive file is written by the workers, not by the context service
-- (docs/decisions/0022-two-writer-tables-and-their-guards.md): a compaction boundary keeps the
-- archive section of the messages it evicted, and the next step of the session appends every
-- section not yet in `archive_file_id` (each one version, write key `history_archive:<id>`).
-- A boundary stored before this migration has its section in the file already (null here).
ALTER TABLE history_compactions ADD COLUMN IF NOT EXISTS archive_section text;
