/**
 * What one pass of the router's sweep costs while runs stream (docs/decisions/0075). Every
 * `ROUTER_RECONCILE_INTERVAL_S` (30 s) one router lists up to 100 running runs older than
 * `ROUTER_RECONCILE_MIN_AGE_S` and looks for the ones whose stream ended without their row. Long
 * runs in progress are most of that list.
 *
 * On a nats-server of its own and a database of its own: `--runs` run rows `running`, each with
 * `run_started` and `--frames` text frames stored on EVENTS as a writer stores them (a run of 100
 * s at 20 tokens/s is ~2,000). Then `--passes` sweep passes, one after another. Prints, per pass,
 * its wall time, this process's CPU (the router's side of it) and nats-server's, with the load
 * average. Run it in a checkout of the code to compare.
 *
 *   node test/load/sweep-pass.ts [--runs 100] [--frames 2000] [--passes 3]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Bus, connectBus, ensureStreams, publishFrame } from '@quill/bus';
import { loadConfig } from '@quill/config';
import { frame } from '@quill/contracts';
import { seedDemo } from '@quill/db/seed';
import { createTestDatabase } from '@quill/db/testing';
import { pino } from 'pino';
import { createPhaseWriter } from '../../services/router/src/phases/phase-writer.ts';
import { createRunSweep } from '../../services/router/src/phases/run-sweep.ts';
import { createTestRun } from '../support/run-rows.ts';
import { startPrivateNats } from './support/private-nats.ts';
import { cpuMs, loadAverage } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    frames: { type: 'string', default: '2000' },
    passes: { type: 'string', default: '3' },
  },
});
const runs = Number(values.runs);
const frames = Number(values.frames);
const passes = Number(values.passes);

const logger = pino({ level: 'silent' });
const nats = await startPrivateNats();
const database = await createTestDatabase();
let bus: Bus | undefined;
try {
  bus = await connectBus({ url: nats.url, namespace: 'sp', name: 'sweep-pass' });
  await ensureStreams(bus, loadConfig({ env: {}, dotenv: {} }).derived.streams);
  const demo = await seedDemo(database.pool, { apiKey: `qk_test_${randomUUID()}`, credits: 10 });
  const runIds: string[] = [];
  for (let index = 0; index < runs; index++) {
    const { runId, sessionId } = await createTestRun(database.pool, {
      projectId: demo.projectId,
      userId: demo.userId,
    });
    runIds.push(runId);
    await publishFrame(
      bus,
      frame('run_started', runId, {
        session_id: sessionId,
        project_id: demo.projectId,
        generation_mode: 'fast',
      }),
    );
  }
  // The runs' frames interleaved, as concurrent runs store them.
  for (let index = 0; index < frames; index += 10) {
    const sends: Array<Promise<unknown>> = [];
    for (const runId of runIds)
      for (let offset = index; offset < Math.min(frames, index + 10); offset++)
        sends.push(
          publishFrame(bus, frame('text', runId, { agent: 'writer', content: `第${offset}段。` }), {
            quiet: true,
          }),
        );
    await Promise.all(sends);
  }
  const sweep = createRunSweep(
    { bus, pool: database.pool, logger, phases: createPhaseWriter(database.pool, logger) },
    { intervalMs: 60_000, minAgeSeconds: 0, abandonedAfterSeconds: 3600, batch: 100 },
  );
  const rows: Array<Array<string | number>> = [];
  for (let pass = 0; pass < passes; pass++) {
    const [selfBefore, serverBefore, at] = [process.cpuUsage(), cpuMs(nats.pid), performance.now()];
    const report = await sweep.runOnce();
    const self = process.cpuUsage(selfBefore);
    if (report.finished || report.ended || report.failed)
      throw new Error(`the pass changed runs: ${JSON.stringify(report)}`);
    rows.push([
      pass + 1,
      rounded(performance.now() - at, 1),
      rounded((self.user + self.system) / 1000, 1),
      cpuMs(nats.pid) - serverBefore,
    ]);
  }
  console.log(`sweep passes over ${runs} running runs of ${frames} frames each, load ${loadAverage()}`);
  console.log(table([['pass', 'wall ms', 'router-side CPU ms', 'nats-server CPU ms'], ...rows]));
  console.log(
    JSON.stringify({ bench: 'sweep-pass', runs, frames, load_average: loadAverage(), passes: rows }),
  );
} finally {
  await bus?.connection.close();
  await nats.stop();
  await database.drop();
}
