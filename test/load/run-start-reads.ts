/**
 * What three reads of one run cost nats-server once EVENTS holds a day of other runs' frames
 * (docs/decisions/0076), each made the old way and the new:
 * - the router's first step-log catch-up on a first take, 5 s into a step's wait (every run whose
 *   step takes longer): `next_by_subj` on the run's step subject from sequence 1, against from the
 *   sequence its own `dispatched` record was stored at (the step log's read, `nextStored`);
 * - a stop's or steer's link to the run's trace: the run's first frame by `next_by_subj` from
 *   sequence 1, against `runTraceContext` (the newest step record, from the stream's end);
 * - where a stream or history from the run's beginning starts: that same first-frame read from
 *   sequence 1, against `runStartSeq` (a consumer made by the launch time, removed, and one get).
 *
 * On a nats-server of its own, EVENTS as the services make it holds `--frames` frames of
 * `--runs-before` other runs, then `--runs` runs stored as a run stores its record. Then,
 * `--rounds` times, each read in turn: a quiet `--cold-ms` (the server lets its per-subject
 * indexes of older blocks go), one read of a run (cold) and one of every other run (warm).
 * Prints, per read, the cold read's wall time and the server's CPU for it and the warm reads'
 * median wall time and server CPU per read, with the load average. Each read must find the
 * record it is for, or the benchmark fails.
 *
 *   node test/load/run-start-reads.ts [--frames 2000000] [--runs-before 5000] [--runs 21] [--rounds 2] [--cold-ms 30000]
 */
import { parseArgs } from 'node:util';
import { nextStored, runStartSeq, runTraceContext } from '@quill/bus';
import {
  BUSY_STREAM_OPTIONS,
  busyStreamSettings,
  FIGURE_HEADINGS,
  figureCells,
  openBusyStream,
  prefillFrames,
  type ReadFigures,
  storeRun,
  type TargetRun,
  timeRound,
} from './support/busy-events.ts';
import { loadAverage } from './support/proc.ts';
import { table } from './support/stats.ts';

const { values } = parseArgs({ options: BUSY_STREAM_OPTIONS });
const { frames, runIds, runs, rounds, coldMs } = busyStreamSettings(values);

const { nats, bus: opened } = await openBusyStream('rs', 'run-start-reads');
try {
  const started = performance.now();
  await prefillFrames(opened, frames, runIds);
  const targets: TargetRun[] = [];
  for (let index = 0; index < runs; index++) targets.push(await storeRun(opened));
  console.log(
    `stored ${frames} frames of ${runIds.length} runs and ${runs} runs to read in ${Math.round((performance.now() - started) / 1000)} s`,
  );

  const stream = opened.names.streams.events;
  /** Each read, made for one run; throws when it does not find what it reads for. */
  const reads: Record<string, (run: TargetRun) => Promise<void>> = {
    'step-log catch-up, from sequence 1': async (run) =>
      expectSeq(
        await nextStored(opened, { stream, subject: opened.names.steps(run.runId), afterSeq: 0 }),
        run.dispatchedSeq,
      ),
    'step-log catch-up, from its dispatch': async (run) =>
      expectSeq(
        await nextStored(opened, {
          stream,
          subject: opened.names.steps(run.runId),
          afterSeq: run.dispatchedSeq - 1,
        }),
        run.dispatchedSeq,
      ),
    'trace link, the first frame from sequence 1': async (run) => {
      const first = await nextStored(opened, {
        stream,
        subject: opened.names.events(run.runId),
        afterSeq: 0,
      });
      if (!first || first.seq >= run.dispatchedSeq) throw new Error(`run ${run.runId}: no first frame`);
    },
    // Untraced here (no telemetry in the benchmark): both of its gets are made, its dearest case.
    'trace link, runTraceContext': async (run) => void (await runTraceContext(opened, run.runId)),
    // Where a stream or history from the run's beginning starts (the old way is the row above
    // the trace link's: the first frame from sequence 1).
    'a run from its beginning, runStartSeq': async (run) => {
      if ((await runStartSeq(opened, run.runId, run.launchedAt)) === 0)
        throw new Error(`run ${run.runId}: its start was not found from its launch time`);
    },
  };
  const results = new Map<string, ReadFigures>();
  for (let round = 0; round < rounds; round++) {
    const order = Object.entries(reads);
    if (round % 2 === 1) order.reverse();
    for (const [name, read] of order) {
      const figures = results.get(name) ?? { cold: [], coldCpu: [], warm: [], warmCpu: [] };
      results.set(name, figures);
      await timeRound(nats.pid, targets, read, coldMs, figures);
    }
  }
  console.log(
    `\nOne run read after ${coldMs / 1000} s quiet (cold) and then ${runs - 1} others (warm), ${rounds} rounds, load ${loadAverage()}`,
  );
  console.log(
    table([
      ['read', ...FIGURE_HEADINGS],
      ...[...results].map(([name, figures]) => [name, ...figureCells(figures)]),
    ]),
  );
  console.log(
    JSON.stringify({
      bench: 'run-start-reads',
      frames,
      runs,
      rounds,
      cold_ms: coldMs,
      load_average: loadAverage(),
      results: Object.fromEntries(results),
    }),
  );
} finally {
  await opened.connection.close();
  await nats.stop();
}

function expectSeq(found: { seq: number } | undefined, seq: number): void {
  if (found?.seq !== seq) throw new Error(`read ${found?.seq}, not the dispatched record at ${seq}`);
}
