-- An artifact sent back for a revision is closed as `superseded` once the revision that answers it
-- is accepted: its text is no longer in the file, and it no longer keeps the session waiting for
-- the author (docs/kernel.md "Artifacts and acceptance").
ALTER TABLE artifacts DROP CONSTRAINT IF EXISTS artifacts_state_check;
ALTER TABLE artifacts ADD CONSTRAINT artifacts_state_check
  CHECK (state IN ('drafted', 'under_review', 'accepted', 'rejected', 'revision_requested', 'superseded'));
