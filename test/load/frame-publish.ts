/**
 * What a worker's streamed frames cost it, alone: `--runs` step emitters
 * (`createStepEmitter`, the writer's frame path: coalescing, the frame, the envelope's check and
 * encoding, the `Nats-Msg-Id` header, the batched quiet publish through the one ack inbox) fed
 * text deltas at `--rate` a second each, publishing to EVENTS as the services create it
 * (`ensureStreams`) on a nats-server of the benchmark's own. Prints this process's CPU per frame
 * and the server's, per round, after a warm-up round; the best round is the figure (the frame
 * path's cost without the model read, which `model-stream.ts` measures, or the rest of a stack).
 *
 *   node test/load/frame-publish.ts [--runs 300] [--rate 20] [--seconds 8] [--rounds 4]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { connectBus, ensureStreams } from '@quill/bus';
import { loadConfig } from '@quill/config';
import { createStepEmitter, type StepEmitter } from '../../libs/agent-runtime/src/frame-emitter.ts';
import { startPrivateNats } from './support/private-nats.ts';
import { cpuMeter, loadAverage } from './support/proc.ts';
import { rounded, sleep } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '4' },
  },
});
const runCount = Number(values.runs);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
/** What the services create the streams with by default (libs/config). */
const STREAM_SETTINGS = loadConfig({ env: {}, dotenv: {} }).derived.streams;
const EMITTER_SETTINGS = { flushMs: 40, flushBytes: 2048 };
const TICKS_PER_SECOND = 100;
/** A token of Chinese prose, as the fake model streams it. */
const DELTA = '雨';

const nats = await startPrivateNats();
const bus = await connectBus({ url: nats.url, namespace: 'bench', name: 'frame-publish' });
await ensureStreams(bus, STREAM_SETTINGS);

async function round(index: number) {
  const emitters: StepEmitter[] = Array.from({ length: runCount }, () =>
    createStepEmitter(bus, { runId: randomUUID(), step: 1, attempt: 1, agent: 'writer' }, EMITTER_SETTINGS),
  );
  // This process's CPU to the µs (its own clock), the server's from /proc (10 ms ticks).
  const clientFrom = process.cpuUsage();
  const server = cpuMeter({ 'nats-server': nats.pid });
  const startedAt = performance.now();
  // Each run's deltas come every 1/rate s, the runs spread evenly over that gap. The deltas of one
  // 10 ms tick are handed over in one turn of the event loop, one callback each (a busy writer
  // reads many model streams per turn too), so their frames share the publish batches the way a
  // loaded writer's do: more per socket write than a quiet writer's.
  const ticks = seconds * TICKS_PER_SECOND;
  const deltasPerTick = (runCount * rate) / TICKS_PER_SECOND;
  let fed = 0;
  for (let tick = 0; tick < ticks; tick++) {
    const until = Math.round((tick + 1) * deltasPerTick);
    for (; fed < until; fed++) {
      const emitter = emitters[fed % runCount]!;
      setImmediate(() => emitter.text(DELTA));
    }
    const wait = startedAt + ((tick + 1) * 1000) / TICKS_PER_SECOND - performance.now();
    await sleep(Math.max(0, wait));
  }
  const frames = emitters.reduce((sum, emitter) => sum + emitter.framesPublished, 0);
  await Promise.all(emitters.map((emitter) => emitter.close()));
  const client = process.cpuUsage(clientFrom);
  const serverMs = server()['nats-server'] ?? 0;
  const elapsedS = (performance.now() - startedAt) / 1000;
  return {
    round: index,
    deltas: fed,
    frames,
    seconds: rounded(elapsedS),
    client_us_per_frame: rounded((client.user + client.system) / frames),
    nats_us_per_frame: rounded((serverMs * 1000) / frames),
  };
}

const results = [];
try {
  for (let index = 0; index <= rounds; index++) {
    const result = await round(index);
    if (index === 0) {
      console.log(
        `warm-up: ${result.frames} frames, ${result.client_us_per_frame} µs of client CPU per frame`,
      );
      continue;
    }
    results.push(result);
    console.log(
      `round ${index}: ${result.frames} frames from ${result.deltas} deltas in ${result.seconds} s, ` +
        `${result.client_us_per_frame} µs of client CPU per frame, nats-server ${result.nats_us_per_frame}`,
    );
  }
} finally {
  await bus.connection.close();
  await nats.stop();
}
const best = Math.min(...results.map((result) => result.client_us_per_frame));
const load = loadAverage();
console.log(
  `frame-publish: ${runCount} runs at ${rate} deltas/s, best ${best} µs of client CPU per frame (load ${load})`,
);
console.log(
  JSON.stringify({
    bench: 'frame-publish',
    runs: runCount,
    rate,
    load_average: load,
    best_client_us_per_frame: best,
    rounds: results,
  }),
);
