import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createSession, createUser } from '../src/gateway/index.ts';
import { getFile, loadStepJournal, type RunFence, withRunFence } from '../src/index.ts';
import { createRun, finishRun, startRun } from '../src/router/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import {
  bumpRunEpoch,
  saveFencedStepJournal,
  saveFileContent,
  saveStepJournal,
} from '../src/workers/index.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;
let sessionId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'fence@example.com', displayName: 'Fence' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'Fence' })).id;
  sessionId = (await createSession(database.pool, { projectId, userId, title: 'fence' })).sessionId;
});
afterAll(async () => {
  await database.drop();
});

/** A run a router took: `running` at epoch 0. */
async function runningRun(): Promise<string> {
  const runId = crypto.randomUUID();
  await createRun(database.pool, { runId, sessionId, projectId, userId, generationMode: 'fast' });
  await startRun(database.pool, runId);
  return runId;
}

/**
 * The two ways a worker writes under the fence, each asked to write one thing and to say whether
 * it landed: a transaction around any work (withRunFence), and one statement (a step journal).
 */
const writers: Array<{
  name: string;
  prepare(runId: string): Promise<{ write(fence: RunFence): Promise<unknown>; landed(): Promise<boolean> }>;
}> = [
  {
    name: 'withRunFence',
    async prepare() {
      const file = await createFile(database.pool, {
        projectId,
        title: `章 ${crypto.randomUUID()}`,
        fileType: 'draft',
      });
      return {
        write: (fence) =>
          withRunFence(database.pool, fence, (client: pg.PoolClient) =>
            saveFileContent(client, { fileId: file.id, content: '正文', source: 'ai' }),
          ),
        landed: async () => (await getFile(database.pool, projectId, file.id))?.version === 1,
      };
    },
  },
  {
    name: 'saveFencedStepJournal',
    async prepare(runId) {
      return {
        write: (fence) => saveFencedStepJournal(database.pool, fence, 3, { turn: 1 }),
        landed: async () => (await loadStepJournal(database.pool, runId, 3)) !== null,
      };
    },
  },
];

describe.each(writers)('the write fence: $name', (writer) => {
  it('writes while the run is running at the writer’s epoch', async () => {
    const runId = await runningRun();
    const target = await writer.prepare(runId);
    await target.write({ runId, epoch: 0 });
    expect(await target.landed()).toBe(true);
  });

  it('refuses a writer whose run was taken over, a finished run and an unknown one', async () => {
    const takenOver = await runningRun();
    await bumpRunEpoch(database.pool, takenOver);
    const late = await writer.prepare(takenOver);
    await expect(late.write({ runId: takenOver, epoch: 0 })).rejects.toMatchObject({
      name: 'RunFencedError',
      expectedEpoch: 0,
      actualPhase: 'running',
      actualEpoch: 1,
    });
    expect(await late.landed()).toBe(false);

    const finished = await runningRun();
    await finishRun(database.pool, finished, { phase: 'done' });
    const after = await writer.prepare(finished);
    await expect(after.write({ runId: finished, epoch: 0 })).rejects.toMatchObject({ actualPhase: 'done' });
    expect(await after.landed()).toBe(false);

    const unknown = crypto.randomUUID();
    await expect((await writer.prepare(unknown)).write({ runId: unknown, epoch: 0 })).rejects.toMatchObject({
      name: 'RunFencedError',
      actualPhase: null,
    });
  });

  it('refuses a writer whose check waited for a takeover in flight: it sees the epoch committed', async () => {
    const runId = await runningRun();
    const target = await writer.prepare(runId);
    // A takeover's epoch bump (bumpRunEpoch's statements), held open while the old writer comes.
    const takeover = await database.pool.connect();
    try {
      await takeover.query('BEGIN');
      await takeover.query(`SELECT 1 FROM runs WHERE run_id = $1 AND phase = 'running' FOR NO KEY UPDATE`, [
        runId,
      ]);
      await takeover.query(
        `INSERT INTO run_fences AS f (run_id, epoch) VALUES ($1, 1)
         ON CONFLICT (run_id) DO UPDATE SET epoch = f.epoch + 1`,
        [runId],
      );
      let settled = false;
      const late = target.write({ runId, epoch: 0, retryMs: 0 }).finally(() => {
        settled = true;
      });
      late.catch(() => undefined);
      // The old writer's check now waits for the takeover's lock on the run row (one that did
      // not wait has settled, and the expectation below says how).
      while (!settled && !(await lockWaiters())) await new Promise((resolve) => setTimeout(resolve, 20));
      await takeover.query('COMMIT');
      await expect(late).rejects.toMatchObject({ name: 'RunFencedError', expectedEpoch: 0, actualEpoch: 1 });
      expect(await target.landed()).toBe(false);
    } finally {
      takeover.release();
    }
  });
});

async function lockWaiters(): Promise<boolean> {
  const { rows } = await database.pool.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return rows[0]!.waiting > 0;
}

describe('a step journal under the fence', () => {
  it('replaces the journal the step had, like the unfenced save', async () => {
    const runId = await runningRun();
    await saveStepJournal(database.pool, runId, 1, { turn: 1 });
    await saveFencedStepJournal(database.pool, { runId, epoch: 0 }, 1, { turn: 2, note: '第二轮' });
    expect(await loadStepJournal(database.pool, runId, 1)).toEqual({ turn: 2, note: '第二轮' });
  });
});
