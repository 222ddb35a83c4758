/**
 * What a run's end-of-run read costs nats-server once EVENTS holds a day of other runs' frames
 * (docs/decisions/0075, 0077). Billing's settlement and the router's archive read a run's frames,
 * step records and usage reports (`readStoredRun`). Read from the stream's first message, the
 * server looks through every block of the stream for the run's subjects, and a block whose
 * per-subject index it let go of (after some seconds unused) is read from disk again. Read from
 * the run's launch time, it starts in the block that time falls in, less the clock margin's minute
 * of every run's frames. Read from its `run_started`'s sequence (which the router finds when it
 * takes the run and sends with the settle request, docs/decisions/0077), it starts at the run's
 * first frame.
 *
 * On a nats-server of its own, with EVENTS as the services make it: `--frames` frames of
 * `--runs-before` other runs (as workers store them), a pause past the read's clock margin
 * (`RUN_RECORD_CLOCK_MARGIN_MS`, so the older frames are older than any launch time less it, as a
 * day's are), `--recent` more frames of those runs (the traffic of the minute before a launch,
 * which a read from the launch time still looks through), then `--runs` target runs stored as a
 * run stores its record, each with its launch time. Then, `--rounds` times, each way of reading in
 * turn: a quiet `--cold-ms` (the server lets its block caches go), one read of a target run (the
 * cold read), and every other target run read once (warm). Prints, per way, the cold read's wall
 * time and the server's CPU for it, the warm reads' median wall time and the server's CPU per
 * read, and how much the server's RSS grew, with the load average. Every way must read the same
 * record, or the benchmark fails.
 *
 *   node test/load/record-read.ts [--frames 2000000] [--recent 100000] [--runs-before 5000] [--runs 21] [--rounds 2] [--cold-ms 30000]
 */
import { parseArgs } from 'node:util';
import { RUN_RECORD_CLOCK_MARGIN_MS, readStoredRun } from '@quill/bus';
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
import { loadAverage, rssKb } from './support/proc.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: { ...BUSY_STREAM_OPTIONS, recent: { type: 'string', default: '100000' } },
});
const { frames, runIds, runs, rounds, coldMs } = busyStreamSettings(values);
const recent = Number(values.recent);
const runsBefore = runIds.length;

const { nats, bus } = await openBusyStream('rr', 'record-read');
try {
  const started = performance.now();
  await prefillFrames(bus, frames, runIds);
  await sleep(RUN_RECORD_CLOCK_MARGIN_MS + 5000);
  await prefillFrames(bus, recent, runIds);
  const targets: TargetRun[] = [];
  for (let index = 0; index < runs; index++) targets.push(await storeRun(bus));
  console.log(
    `stored ${frames} + ${recent} frames of ${runsBefore} runs and ${runs} runs to read in ${Math.round((performance.now() - started) / 1000)} s; server RSS ${Math.round(rssKb(nats.pid) / 1024)} MB`,
  );

  const ways = {
    'from the stream start': (run: TargetRun) => readStoredRun(bus, run.runId, { usage: true }),
    'from the launch time': (run: TargetRun) =>
      readStoredRun(bus, run.runId, { launchedAt: run.launchedAt, usage: true }),
    "from its run_started's sequence": (run: TargetRun) =>
      readStoredRun(bus, run.runId, { startedSeq: run.startedSeq, launchedAt: run.launchedAt, usage: true }),
  };
  const results = new Map<string, ReadFigures & { rss: number[] }>();
  for (let round = 0; round < rounds; round++) {
    const order = Object.entries(ways);
    if (round % 2 === 1) order.reverse();
    for (const [name, read] of order) {
      const figures = results.get(name) ?? { cold: [], coldCpu: [], warm: [], warmCpu: [], rss: [] };
      results.set(name, figures);
      let rssBefore = 0;
      const record = await timeRound(
        nats.pid,
        targets,
        (run) => {
          rssBefore ||= rssKb(nats.pid);
          return read(run);
        },
        coldMs,
        figures,
      );
      if (
        record.reread ||
        record.frames[0]?.frame.type !== 'run_started' ||
        record.steps.length !== 2 ||
        record.usage.length !== 1
      )
        throw new Error(`${name}: the record read is not the run's, or was read twice`);
      figures.rss.push((rssKb(nats.pid) - rssBefore) / 1024);
    }
  }
  // Every way reads the same record.
  for (const run of targets) {
    const [whole, ...others] = await Promise.all(Object.values(ways).map((read) => read(run)));
    if (others.some((other) => JSON.stringify(whole) !== JSON.stringify(other)))
      throw new Error(`run ${run.runId}: the reads differ`);
  }
  console.log(
    `\nOne run's record read after ${coldMs / 1000} s quiet (cold) and then ${runs - 1} others' (warm), ${rounds} rounds, load ${loadAverage()}`,
  );
  console.log(
    table([
      ['read', ...FIGURE_HEADINGS, 'server RSS growth MB'],
      ...[...results].map(([name, figures]) => [
        name,
        ...figureCells(figures),
        figures.rss.map((value) => rounded(value, 1)).join(' / '),
      ]),
    ]),
  );
  console.log(
    JSON.stringify({
      bench: 'record-read',
      frames,
      runs_before: runsBefore,
      runs,
      rounds,
      cold_ms: coldMs,
      load_average: loadAverage(),
      results: Object.fromEntries(results),
    }),
  );
} finally {
  await bus.connection.close();
  await nats.stop();
}
