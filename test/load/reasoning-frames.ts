/**
 * Frames per 1,000 reasoning tokens: a reasoning model streams its thinking one token per
 * delta before the answer, and the writer's frame emitter coalesces those deltas into `thinking`
 * frames through the same flush window as text (docs/protocol.md `thinking`). This drives
 * `runs` runs whose reply is `tokens` reasoning tokens then a short answer, at each rate
 * (0 = as fast as the fake can), and reports thinking frames and EVENTS messages per 1,000
 * reasoning tokens. Prints a table and one JSON line.
 *
 *   node test/load/reasoning-frames.ts [--rates 50,200,0] [--runs 10] [--tokens 2040]
 */

import { parseArgs } from 'node:util';
import type { SseFrame } from '@quill/contracts';
import { startBenchStack } from './support/bench-stack.ts';
import { inWaves } from './support/phases.ts';
import { loadAverage } from './support/proc.ts';
import { readSse } from './support/sse-reader.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '50,200,0' },
    runs: { type: 'string', default: '10' },
    tokens: { type: 'string', default: '2040' },
  },
});
const rates = values.rates.split(',').map(Number);
const runs = Number(values.runs);
const tokens = Number(values.tokens);
// One CJK character is one token to the fake's tokenizer, so the reasoning is exactly `tokens`.
const reasoning = '思'.repeat(tokens);

const bench = await startBenchStack();
const figures: Array<Record<string, unknown>> = [];
try {
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: rates.flatMap((rate) =>
      Array.from({ length: runs }, () => ({ reasoning, text: '好的。', tokens_per_second: rate })),
    ),
  });
  for (const rate of rates) {
    const load = loadAverage();
    const before = await bench.publishedCounts();
    const counts = await inWaves(runs, runs, 200, async (index) => {
      let thinkingFrames = 0;
      let thinkingChars = 0;
      let ended = '';
      const author = bench.author(index);
      await readSse({
        url: `${bench.gateway}/api/v1/agent/stream`,
        headers: author.auth,
        body: { project_id: author.projectId, message: `想一想 ${index}` },
        onEvent(event) {
          const frame = JSON.parse(event.data) as SseFrame;
          if (frame.type === 'thinking') {
            thinkingFrames++;
            thinkingChars += frame.content.length;
          }
          if (frame.type === 'done') ended = 'done';
          return frame.type === 'done';
        },
      });
      return { thinkingFrames, thinkingChars, ended };
    });
    const after = await bench.publishedCounts();
    const frames = counts.reduce((total, run) => total + run.thinkingFrames, 0);
    const reasoningTokens = counts.reduce((total, run) => total + run.thinkingChars, 0);
    figures.push({
      tokens_per_second: rate === 0 ? 'unpaced' : rate,
      thinking_frames_per_1k_reasoning_tokens: (frames * 1000) / Math.max(1, reasoningTokens),
      events_per_1k_reasoning_tokens: ((after.events - before.events) * 1000) / Math.max(1, reasoningTokens),
      reasoning_tokens: reasoningTokens,
      incomplete: counts.filter((run) => run.ended !== 'done' || run.thinkingChars !== tokens).length,
      load_average: load,
    });
  }
} finally {
  await bench.stop();
}

console.log(`reasoning frames: ${runs} runs at each rate, ${tokens} reasoning tokens each`);
console.log(
  table([
    ['tokens/s', 'thinking frames/1k', 'events/1k', 'incomplete', 'load'],
    ...figures.map((f) => [
      f.tokens_per_second as number | string,
      f.thinking_frames_per_1k_reasoning_tokens as number,
      f.events_per_1k_reasoning_tokens as number,
      f.incomplete as number,
      f.load_average as number,
    ]),
  ]),
);
console.log(JSON.stringify(rounded({ bench: 'reasoning-frames', runs, tokens, rates: figures })));
