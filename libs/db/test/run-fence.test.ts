import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createSession, createUser } from '../src/gateway/index.ts';
import { getFile, loadStepJournal, type RunFence, RunFencedError, withRunFence } from '../src/index.ts';
import { createRun, finishRun, startRun as takeRun } from '../src/router/index.ts';
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
async function startRun(): Promise<{ runId: string }> {
  const runId = crypto.randomUUID();
  await createRun(database.pool, { runId, sessionId, projectId, userId, generationMode: 'fast' });
  await takeRun(database.pool, runId);
  return { runId };
}

describe('withRunFence', () => {
  it('commits the write while the run is running at the writer epoch', async () => {
    const run = await startRun();
    const file = await createFile(database.pool, { projectId, title: '第一章', fileType: 'draft' });
    const version = await withRunFence(database.pool, { runId: run.runId, epoch: 0 }, (client) =>
      saveFileContent(client, { fileId: file.id, content: '正文', source: 'ai', runId: run.runId }),
    );
    expect(version).toBe(1);
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({ content: '正文', version: 1 });
  });

  it('refuses a writer whose epoch was taken over, without running its write', async () => {
    const run = await startRun();
    const file = await createFile(database.pool, { projectId, title: '第二章', fileType: 'draft' });
    await bumpRunEpoch(database.pool, run.runId);
    let ran = false;
    const attempt = withRunFence(database.pool, { runId: run.runId, epoch: 0 }, async (client) => {
      ran = true;
      return saveFileContent(client, { fileId: file.id, content: '迟到的写入', source: 'ai' });
    });
    await expect(attempt).rejects.toMatchObject({
      name: 'RunFencedError',
      runId: run.runId,
      expectedEpoch: 0,
      actualPhase: 'running',
      actualEpoch: 1,
    });
    expect(ran).toBe(false);
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({ content: '', version: 0 });
  });

  it('refuses writes to a finished or unknown run', async () => {
    const run = await startRun();
    await finishRun(database.pool, run.runId, { phase: 'done' });
    await expect(
      withRunFence(database.pool, { runId: run.runId, epoch: 0 }, async () => 1),
    ).rejects.toMatchObject({
      actualPhase: 'done',
      actualEpoch: 0,
    });
    const unknown = withRunFence(database.pool, { runId: crypto.randomUUID(), epoch: 0 }, async () => 1);
    await expect(unknown).rejects.toBeInstanceOf(RunFencedError);
    await expect(unknown).rejects.toMatchObject({ actualPhase: null });
  });

  it('rolls the write back when the work inside the fence fails', async () => {
    const run = await startRun();
    const file = await createFile(database.pool, { projectId, title: '第三章', fileType: 'draft' });
    await expect(
      withRunFence(database.pool, { runId: run.runId, epoch: 0 }, async (client) => {
        await saveFileContent(client, { fileId: file.id, content: '半截', source: 'ai' });
        throw new Error('stream broke');
      }),
    ).rejects.toThrow('stream broke');
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({ content: '', version: 0 });
  });
});

describe('a step journal under the fence, in one statement', () => {
  it('writes while the run is running at the writer’s epoch, replacing the journal the step had', async () => {
    const { runId } = await startRun();
    await saveStepJournal(database.pool, runId, 1, { turn: 1 });
    await saveFencedStepJournal(database.pool, { runId, epoch: 0 }, 1, { turn: 2, note: '第二轮' });
    expect(await loadStepJournal(database.pool, runId, 1)).toEqual({ turn: 2, note: '第二轮' });
  });

  it('refuses a writer whose run was taken over, a finished run and an unknown one', async () => {
    const takenOver = (await startRun()).runId;
    await bumpRunEpoch(database.pool, takenOver);
    await expect(
      saveFencedStepJournal(database.pool, { runId: takenOver, epoch: 0 }, 3, {}),
    ).rejects.toMatchObject({
      name: 'RunFencedError',
      expectedEpoch: 0,
      actualPhase: 'running',
      actualEpoch: 1,
    });
    expect(await loadStepJournal(database.pool, takenOver, 3)).toBeNull();

    const finished = (await startRun()).runId;
    await finishRun(database.pool, finished, { phase: 'done' });
    await expect(
      saveFencedStepJournal(database.pool, { runId: finished, epoch: 0 }, 3, {}),
    ).rejects.toMatchObject({
      actualPhase: 'done',
    });
    expect(await loadStepJournal(database.pool, finished, 3)).toBeNull();

    const unknown = saveFencedStepJournal(database.pool, { runId: crypto.randomUUID(), epoch: 0 }, 3, {});
    await expect(unknown).rejects.toBeInstanceOf(RunFencedError);
    await expect(unknown).rejects.toMatchObject({ actualPhase: null });
  });
});

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
      const file = await createFile(database.pool, { projectId, title: '第四章', fileType: 'draft' });
      return {
        write: (fence) =>
          withRunFence(database.pool, fence, (client) =>
            saveFileContent(client, { fileId: file.id, content: '被接管后的写入', source: 'ai' }),
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

describe.each(writers)('a fence check that waited for a takeover in flight: $name', (writer) => {
  it('sees the epoch the takeover committed, and the late write is refused', async () => {
    const { runId } = await startRun();
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
