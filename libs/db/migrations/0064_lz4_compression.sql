-- The prompt every compile stores (context_traces.messages, ~130 KB for a full 32k-token context
-- in Chinese) compressed with lz4 instead of pglz: PostgreSQL's CPU for the insert 2.0–2.2 →
-- 1.1–1.3 ms, stored 22 → 32 KB (docs/decisions/0061). The prompts are cleared after their
-- retention, so the larger size is bounded; values kept for good (file texts and versions,
-- messages, traces, turn contexts) stay with pglz, the smaller. It applies to values written from
-- now on. A server built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE context_traces ALTER COLUMN messages SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'this server has no lz4: stored prompts stay compressed with pglz';
END $$;
