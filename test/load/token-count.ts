/**
 * What a token count costs on the event loop, by text length: prose (a break every 20
 * characters) and a run without any break (unpunctuated classical Chinese, a rule of dashes, model
 * output gone wrong), which the pre-tokenizer makes one piece and js-tiktoken merges in time
 * quadratic in its length unless it is counted in parts (libs/llm/src/token-estimate.ts,
 * docs/decisions/0043). Each text is new to the counter (its paragraph cache would hide the cost).
 * Prints a table and one JSON line.
 *
 *   node test/load/token-count.ts [--lengths 1000,4000,16000]
 */
import { parseArgs } from 'node:util';
import { estimateTextTokens, warmTokenizer } from '@quill/llm';
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
console.log(JSON.stringify({ bench: 'token-count', load_average: load, rows }));
