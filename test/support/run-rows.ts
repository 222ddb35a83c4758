import { randomUUID } from 'node:crypto';
import { createSession } from '@quill/db/gateway';
import { createRun, startRun } from '@quill/db/router';
import type { Pool } from 'pg';

type GenerationMode = Parameters<typeof createRun>[1]['generationMode'];

/**
 * A session with one run in it, written straight to the database for tests that drive a service
 * without a gateway's launch: the run row `running` unless `started: false` (then as the launch
 * inserts it, before a router takes it). The session's own phase is left as created.
 */
export async function createTestRun(
  pool: Pool,
  options: {
    projectId: string;
    userId: string;
    title?: string;
    generationMode?: GenerationMode;
    started?: boolean;
  },
): Promise<{ sessionId: string; runId: string }> {
  const { sessionId } = await createSession(pool, {
    projectId: options.projectId,
    userId: options.userId,
    title: options.title ?? 't',
  });
  const runId = randomUUID();
  await createRun(pool, {
    runId,
    sessionId,
    projectId: options.projectId,
    userId: options.userId,
    generationMode: options.generationMode ?? 'fast',
  });
  if (options.started ?? true) await startRun(pool, runId);
  return { sessionId, runId };
}
