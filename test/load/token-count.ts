/**
 * What the tokenizer costs a process: building its o200k table (CPU, heap and RSS it adds, and
 * the longest wait of the event loop meanwhile: it is built in slices), then a token count on the
 * event loop, by text length: prose (a break every 20 characters), a run without any break
 * (unpunctuated classical Chinese, a rule of dashes, model output gone wrong), which the
 * pre-tokenizer makes one piece and a BPE merges in time quadratic in its length unless it is
 * counted in parts (libs/llm/src/token-estimate.ts, docs/decisions/0043), and varied prose: seeded
 * random ideographs, so no piece repeats and the tokenizer's merge cache does not help (the
 * other two repeat one sentence, as a chapter repeats its names and phrases). Each text is new to
 * the counter (its paragraph cache would hide the cost).
 * Then the longest wait of the event loop while a long reply is counted at once, and while it is
 * precounted in slices (what the model client does before a usage estimate). Prints a table and
 * one JSON line.
 *
 *   node test/load/token-count.ts [--lengths 1000,4000,16000]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { estimateTextTokens, precountTokens, warmTokenizer } from '@quill/llm';
import { loadAverage } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({ options: { lengths: { type: 'string', default: '1000,4000,16000' } } });
const lengths = values.lengths.split(',').map(Number);
const PROSE = '雨夜里旧书店的灯还亮着林晚推门进去老人抬头看了她一眼又低下头去擦那只铜铃';

// A full collection before and after the build, so the heap figure is what the table keeps.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
collect();
const before = { cpu: process.cpuUsage(), memory: process.memoryUsage() };
// The loop's delay is sampled by a timer of Node's (every ms), not by turns of our own that
// would spin the loop and add their CPU to the build's.
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
await warmTokenizer();
delay.disable();
const buildCpu = process.cpuUsage(before.cpu);
const buildBlockMs = rounded(delay.max / 1e6);
collect();
const after = process.memoryUsage();
const build = {
  cpu_ms: rounded((buildCpu.user + buildCpu.system) / 1000),
  heap_mb: rounded((after.heapUsed - before.memory.heapUsed) / 2 ** 20),
  rss_mb: rounded((after.rss - before.memory.rss) / 2 ** 20),
  longest_block_ms: buildBlockMs,
};

let salt = 0;
function timed(text: string): { tokens: number; ms: number } {
  const started = performance.now();
  // A character of its own at the start: never a paragraph the counter has seen.
  const tokens = estimateTextTokens(`${String.fromCodePoint(0x4e00 + salt++)}${text}`);
  return { tokens, ms: rounded(performance.now() - started) };
}

let seed = 1;
/** Seeded ideographs from the CJK block, a comma every 20: text whose pieces never repeat. */
function variedProse(length: number): string {
  let text = '';
  for (let at = 0; at < length; at++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    text += String.fromCodePoint(0x4e00 + (seed % 0x5000));
  }
  return text.replace(/(.{20})/gu, '$1，');
}

const rows = lengths.map((length) => {
  const run = PROSE.repeat(Math.ceil(length / PROSE.length)).slice(0, length);
  const punctuated = run.replace(/(.{20})/gu, '$1，');
  return { length, unbroken: timed(run), prose: timed(punctuated), varied: timed(variedProse(length)) };
});
/**
 * The longest the event loop waited between two turns while `work` ran: a turn is a setImmediate
 * that schedules the next one, so a synchronous stretch shows as one long gap.
 */
async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const turn = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  await work();
  running = false;
  turn();
  return rounded(longest);
}

// A stopped reply's usage: a long text the process has not counted, synchronously or precounted
// in slices first (what the model client does before estimating).
const stopLength = lengths.at(-1) ?? 16_000;
const stopped = () =>
  `${String.fromCodePoint(0x4e00 + salt++)}${PROSE.repeat(Math.ceil(stopLength / PROSE.length))
    .slice(0, stopLength)
    .replace(/(.{20})/gu, '$1，')
    .replace(/(.{200})/gu, '$1\n')}`;
const syncBlockMs = await longestBlock(async () => estimateTextTokens(stopped()));
const slicedBlockMs = await longestBlock(() => precountTokens([stopped()]));
const load = loadAverage();
console.log(
  `o200k table: ${build.cpu_ms} ms of CPU, heap +${build.heap_mb} MB, RSS +${build.rss_mb} MB; the event loop waited at most ${build.longest_block_ms} ms meanwhile`,
);
console.log(`token count on the event loop (o200k, load average ${load})`);
console.log(
  table([
    ['characters', 'unbroken run: tokens', 'ms', 'prose: tokens', 'ms', 'varied prose: tokens', 'ms'],
    ...rows.map((row) => [
      String(row.length),
      String(row.unbroken.tokens),
      row.unbroken.ms.toFixed(1),
      String(row.prose.tokens),
      row.prose.ms.toFixed(1),
      String(row.varied.tokens),
      row.varied.ms.toFixed(1),
    ]),
  ]),
);
console.log(
  `a ${stopLength}-character reply in paragraphs of 200, counted at once: the event loop waits ${syncBlockMs} ms; precounted in slices: at most ${slicedBlockMs} ms between turns`,
);
console.log(
  JSON.stringify({
    bench: 'token-count',
    load_average: load,
    table_build: build,
    rows,
    reply_characters: stopLength,
    longest_block_ms: { at_once: syncBlockMs, in_slices: slicedBlockMs },
  }),
);
