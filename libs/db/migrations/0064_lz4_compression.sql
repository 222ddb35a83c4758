-- The large values Quill writes compressed with lz4 instead of pglz: the prompt and trace every
-- compile stores, a run's turn context, file texts and their versions, chat messages. lz4 costs
-- PostgreSQL a fraction of pglz's CPU to compress and to read back (docs/decisions/0061: ~1 ms of
-- PostgreSQL's CPU less per compile on a 200-file novel). It applies to values written from now
-- on; older ones stay pglz and read as before. A server built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE context_traces ALTER COLUMN messages SET COMPRESSION lz4, ALTER COLUMN trace SET COMPRESSION lz4;
  ALTER TABLE run_turn_contexts ALTER COLUMN turn SET COMPRESSION lz4;
  ALTER TABLE files ALTER COLUMN content SET COMPRESSION lz4;
  ALTER TABLE file_versions ALTER COLUMN content SET COMPRESSION lz4;
  ALTER TABLE messages ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this server has no lz4: large values stay compressed with pglz';
END $$;
