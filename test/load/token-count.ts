/**
 * What a token count costs on the event loop, by text length: prose (a break every 20
 * characters) and a run without any break (unpunctuated classical Chinese, a rule of dashes, model
 * output gone wrong), which the pre-tokenizer makes one piece and js-tiktoken merges in time
 * quadratic in its length unless it is counted in parts (libs/llm/src/token-estimate.ts,
 * docs/decisions/0043). Each text is new to the counter (its paragraph cache would hide the cost).
 * Then the longest wait of the event loop while a long reply is counted at once, and while it is
 * precounted in slices (what the model client does before a usage estimate). Prints a table and
 * one JSON line.
 *
 *   node test/load/token-count.ts [--lengths 1000,4000,16000]
 */
import { parseArgs } from 'node:util';
import { estimateTextTokens, precountTokens, warmTokenizer } from '@quill/llm';
import { loadAverage } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({ options: { lengths: { type: 'string', default: '1000,4000,16000' } } });
const lengths = values.lengths.split(',').map(Number);
const PROSE = '雨夜里旧书店的灯还亮着林晚推门进去老人抬头看了她一眼又低下头去擦那只铜铃';

await warmTokenizer();
let salt = 0;
function timed(text: string): { tokens: number; ms: number } {
  const started = performance.now();
  // A character of its own at the start: never a paragraph the counter has seen.
  const tokens = estimateTextTokens(`${String.fromCodePoint(0x4e00 + salt++)}${text}`);
  return { tokens, ms: rounded(performance.now() - started) };
}

const rows = lengths.map((length) => {
  const run = PROSE.repeat(Math.ceil(length / PROSE.length)).slice(0, length);
  const punctuated = run.replace(/(.{20})/gu, '$1，');
  return { length, unbroken: timed(run), prose: timed(punctuated) };
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
console.log(`token count on the event loop (o200k, load average ${load})`);
console.log(
  table([
    ['characters', 'unbroken run: tokens', 'ms', 'prose: tokens', 'ms'],
    ...rows.map((row) => [
      String(row.length),
      String(row.unbroken.tokens),
      row.unbroken.ms.toFixed(1),
      String(row.prose.tokens),
      row.prose.ms.toFixed(1),
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
    rows,
    reply_characters: stopLength,
    longest_block_ms: { at_once: syncBlockMs, in_slices: slicedBlockMs },
  }),
);
