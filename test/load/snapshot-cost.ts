/**
 * What a run's start snapshot and an undo cost (docs/kernel.md "Snapshots and undo"): takes N
 * `run_start` snapshots of the 200-file Chinese project against the real Postgres, then undoes a
 * run that rewrote 5 chapters, N times (each undo restores, the next run rewrites again). Prints
 * p50 / p95 / max per operation and the stored size of one snapshot.
 *
 *   node test/load/snapshot-cost.ts [--runs 50]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { listFiles, withRunFence } from '@quill/db';
import { createSession, createUser, takeSnapshot, undoRun } from '@quill/db/gateway';
import { createRun, finishRun } from '@quill/db/router';
import { createTestDatabase } from '@quill/db/testing';
import { saveFileContent } from '@quill/db/workers';
import { seedChineseProject } from '../support/chinese-project.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '50' } } });
const runs = Number(values.runs);
const database = await createTestDatabase();
const quantile = (samples: number[], q: number) =>
  [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
try {
  const user = await createUser(database.pool, {
    email: `bench-${randomUUID()}@quill.test`,
    displayName: 'b',
  });
  const { projectId } = await seedChineseProject(database.pool, user.id);
  const session = await createSession(database.pool, { projectId, userId: user.id, title: 'bench' });
  const chapters = (await listFiles(database.pool, projectId)).slice(0, 5);
  const snapshotMs: number[] = [];
  const undoMs: number[] = [];
  for (let index = 0; index < runs; index++) {
    const runId = randomUUID();
    await createRun(database.pool, {
      runId,
      sessionId: session.sessionId,
      projectId,
      userId: user.id,
      generationMode: 'fast',
    });
    let started = performance.now();
    await takeSnapshot(database.pool, { projectId, kind: 'run_start', runId });
    snapshotMs.push(performance.now() - started);
    await withRunFence(database.pool, { runId, epoch: 0 }, async (client) => {
      for (const chapter of chapters)
        await saveFileContent(client, { fileId: chapter.id, content: `改写 ${index}`, source: 'ai', runId });
    });
    await finishRun(database.pool, runId, { phase: 'done', stopReason: 'completed' });
    started = performance.now();
    const outcome = await undoRun(database.pool, { projectId, runId, userId: user.id, force: false });
    undoMs.push(performance.now() - started);
    if (outcome.kind !== 'restored' || outcome.files.length !== chapters.length)
      throw new Error(`undo ${index} restored ${JSON.stringify(outcome)}`);
  }
  const { rows } = await database.pool.query<{ bytes: number; files: number }>(
    `SELECT pg_column_size(data) AS bytes, jsonb_array_length(data->'files') AS files
     FROM snapshots WHERE kind = 'run_start' LIMIT 1`,
  );
  const line = (name: string, samples: number[]) =>
    `${name.padEnd(22)} p50 ${quantile(samples, 0.5).toFixed(1)} ms  p95 ${quantile(samples, 0.95).toFixed(1)} ms  max ${Math.max(...samples).toFixed(1)} ms`;
  console.log(`${runs} runs, ${rows[0]!.files} live files, one snapshot stores ${rows[0]!.bytes} bytes`);
  console.log(line('run_start snapshot', snapshotMs));
  console.log(line('undo (5 files)', undoMs));
} finally {
  await database.drop();
}
