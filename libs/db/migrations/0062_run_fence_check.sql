-- The write fence's check (libs/db/src/workers/run-fence.ts) as one call that first waits and then
-- reads. A check that waited for a takeover's epoch bump must see the epoch the bump committed.
-- In a single `SELECT ... FOR SHARE` the epoch subquery reads the statement's snapshot, taken
-- before the wait, so a writer whose run had just been taken over passed with its old epoch and
-- committed after the takeover. A VOLATILE function takes a fresh snapshot for each statement it
-- runs: the read after the lock sees what the bump (or the run's end) committed.
CREATE OR REPLACE FUNCTION quill_run_fence(p_run_id uuid, p_attribute text)
RETURNS TABLE (run_phase text, run_epoch integer) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- Waits for a bump or an end in flight, and holds the row until the caller commits.
  PERFORM 1 FROM runs r WHERE r.run_id = p_run_id FOR SHARE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- The project_changes triggers attribute the transaction's changes to the run (undo).
  PERFORM set_config('quill.run_id', p_attribute, true);
  RETURN QUERY
    SELECT r.phase, COALESCE((SELECT f.epoch FROM run_fences f WHERE f.run_id = p_run_id), 0)
    FROM runs r WHERE r.run_id = p_run_id;
END $$;
