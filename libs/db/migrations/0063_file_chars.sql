-- A file's length in characters, kept with its text. The context compile lists every file of the
-- project with its length on every compile, and char_length(content) decompressed every text for
-- it: ~2 ms of PostgreSQL's CPU a compile on a 200-file novel (docs/decisions/0061). The trigger
-- sets it whenever a statement writes the content (or the column itself), so no write path can
-- leave it behind; the statements that move a file, rename it or hide it do not pay for it.
ALTER TABLE files ADD COLUMN chars integer;
UPDATE files SET chars = char_length(content);
ALTER TABLE files ALTER COLUMN chars SET NOT NULL;

CREATE FUNCTION quill_files_chars() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.chars := char_length(NEW.content);
  RETURN NEW;
END $$;

CREATE TRIGGER files_chars BEFORE INSERT OR UPDATE OF content, chars ON files
  FOR EACH ROW EXECUTE FUNCTION quill_files_chars();
