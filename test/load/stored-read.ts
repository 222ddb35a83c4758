/**
 * What reading a run's stored frames back costs, per frame: the read billing makes to settle a
 * run and the router makes to archive it (`readStored` of `run.<id>.events`: a consumer up to
 * what the subject holds when the read starts). A run streams at one frame per token when its
 * tokens come further apart than the coalescing window, so these end-of-run reads are paid per
 * token, after the live delivery to the author. Stores `--runs` runs of `--frames` text frames
 * each (published as the writer does), then reads every run `--rounds` times, one run at a time
 * and `--parallel` at a time. Reports the reader's and nats-server's CPU per frame (best and
 * median round) and the wall time per run. Prints a table and one JSON line.
 *
 *   node test/load/stored-read.ts [--runs 20] [--frames 1000] [--rounds 5] [--parallel 4]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Bus, connectBus, ensureStreams, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, frame } from '@quill/contracts';
import { testUrls, uniqueName } from '../support/urls.ts';
import { cpuMeter, loadAverage, natsServerPid } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    frames: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    parallel: { type: 'string', default: '4' },
  },
});
const runs = Number(values.runs);
const framesPerRun = Number(values.frames);
const rounds = Number(values.rounds);
const parallel = Number(values.parallel);

const bus = await connectBus({
  url: testUrls.nats,
  namespace: uniqueName('bench_read'),
  name: 'bench-stored-read',
});
await ensureStreams(bus, {
  eventsMaxAgeHours: 1,
  runAckWaitSeconds: 30,
  runMaxDeliver: 5,
  taskAckWaitSeconds: 30,
});
const natsPid = natsServerPid(testUrls.nats);
try {
  const runIds = Array.from({ length: runs }, () => randomUUID());
  for (const runId of runIds) {
    const sent: Array<Promise<unknown>> = [];
    for (let index = 0; index < framesPerRun; index++) {
      const content = index % 7 === 0 ? '雨夜里旧书店的灯还亮着，' : '她';
      sent.push(publishFrame(bus, frame('text', runId, { agent: 'writer', content }), { quiet: true }));
    }
    await Promise.all(sent);
  }

  const readAll = async (ids: readonly string[], width: number) => {
    const queue = [...ids];
    let frames = 0;
    await Promise.all(
      Array.from({ length: width }, async () => {
        for (let runId = queue.shift(); runId; runId = queue.shift()) {
          const items = await readStored(bus, {
            stream: bus.names.streams.events,
            subject: bus.names.events(runId),
            schema: EventEnvelope,
          });
          frames += items.filter((item) => item.envelope).length;
        }
      }),
    );
    return frames;
  };

  // One read first, so code is compiled and connections warm before anything is measured.
  const expected = runs * framesPerRun;
  const warm = await readAll(runIds, parallel);
  if (warm !== expected) throw new Error(`read ${warm} frames, stored ${expected}`);

  const rows: Array<{ width: number; readerBest: number; reader: number; nats: number; msPerRun: number }> =
    [];
  for (const width of [1, parallel]) {
    const samples: Array<{ reader: number; nats: number; wallPerRun: number }> = [];
    for (let round = 0; round < rounds; round++) {
      const cpu = cpuMeter({ reader: process.pid, nats: natsPid });
      const startedAt = performance.now();
      const read = await readAll(runIds, width);
      const wall = performance.now() - startedAt;
      if (read !== expected) throw new Error(`read ${read} frames, stored ${expected}`);
      const used = cpu();
      samples.push({
        reader: (used.reader! * 1000) / read,
        nats: natsPid ? (used.nats! * 1000) / read : Number.NaN,
        wallPerRun: wall / runs,
      });
    }
    const byReader = [...samples].sort((a, b) => a.reader - b.reader);
    const median = byReader[Math.floor(byReader.length / 2)]!;
    rows.push(
      rounded({
        width,
        readerBest: byReader[0]!.reader,
        reader: median.reader,
        nats: median.nats,
        msPerRun: median.wallPerRun,
      }),
    );
  }
  const load = loadAverage();
  console.log(
    `stored read: ${runs} runs of ${framesPerRun} text frames, ${rounds} rounds; load average ${load}`,
  );
  console.log(
    table([
      [
        'runs at a time',
        'reader µs/frame best',
        'reader µs/frame median',
        'nats-server µs/frame median',
        'ms/run median',
      ],
      ...rows.map((row) => [row.width, row.readerBest, row.reader, row.nats, row.msPerRun]),
    ]),
  );
  console.log(
    JSON.stringify({ bench: 'stored-read', runs, frames: framesPerRun, rounds, load_average: load, rows }),
  );
} finally {
  await dropStreams(bus);
  await bus.close();
}

async function dropStreams(bus: Bus): Promise<void> {
  for (const stream of Object.values(bus.names.streams)) {
    await bus.jsm.streams.delete(stream).catch(() => undefined);
  }
}
