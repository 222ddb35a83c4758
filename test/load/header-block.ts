/**
 * What building a streamed frame's header block costs a worker, the two ways it can: the client's
 * `MsgHdrsImpl.fromRecord(…).encode()` (the block joined line by line and encoded by a
 * `TextEncoder`) and `MsgIdHeader` (libs/bus/src/publish.ts: the block made as one string,
 * docs/decisions/0074). Both make `--frames` blocks for frame ids as a step makes them, in
 * `--rounds` alternated passes, and print the median CPU per block with the load average, and
 * one JSON line. The whole frame path's cost is `frame-publish.ts`; this part of it is ~1 µs of
 * ~20, under that benchmark's round-to-round spread, so it is measured on its own.
 *
 *   node test/load/header-block.ts [--rounds 5] [--frames 200000]
 */
import { parseArgs } from 'node:util';
import { PubHeaders } from '@nats-io/jetstream';
import { MsgHdrsImpl } from '@nats-io/transport-node';
import { msgIds } from '@quill/contracts';
import { MsgIdHeader } from '../../libs/bus/src/publish.ts';
import { loadAverage } from './support/proc.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    frames: { type: 'string', default: '200000' },
  },
});
const rounds = Number(values.rounds);
const frames = Number(values.frames);
const frameId = msgIds.frameIds('0f8fad5b-d9cb-469f-a165-70867728950e', 2, 0);
const ids = Array.from({ length: frames }, (_, index) => frameId(index));

const variants: Record<string, (msgId: string) => Uint8Array> = {
  'client encode': (msgId) =>
    (MsgHdrsImpl.fromRecord({ [PubHeaders.MsgIdHdr]: [msgId] }) as MsgHdrsImpl).encode(),
  'made once': (msgId) => new MsgIdHeader(msgId).encode(),
};

const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const load = loadAverage();
let bytes = 0;
// The first round warms both up (V8 optimises each after enough calls); it is not counted.
for (let round = 0; round <= rounds; round++) {
  for (const [name, make] of Object.entries(variants)) {
    const before = process.cpuUsage();
    for (const msgId of ids) bytes += make(msgId).length;
    const used = process.cpuUsage(before);
    if (round > 0) samples[name]!.push((used.user + used.system) / frames);
  }
}
const medians = Object.fromEntries(
  Object.entries(samples).map(([name, perBlock]) => [name, rounded(distribution(perBlock).p50, 3)]),
);
console.log(
  `A streamed frame's header block, ${frames} per pass, median of ${rounds} passes (load ${load}):`,
);
console.log(
  table([
    ['variant', 'µs of CPU per block', 'passes (µs)'],
    ...Object.entries(samples).map(([name, perBlock]) => [
      name,
      medians[name]!,
      perBlock.map((value) => rounded(value, 2)).join(' / '),
    ]),
  ]),
);
console.log(
  JSON.stringify({ bench: 'header-block', frames, rounds, load_average: load, us_per_block: medians, bytes }),
);
