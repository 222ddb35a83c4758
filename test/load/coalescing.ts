/**
 * Figure 6: JetStream messages per 1,000 streamed tokens, by token rate, and what the
 * coalescing costs in delay. The writer's frame emitter sends a delta at once unless the next is
 * expected within AGENT_TEXT_FLUSH_MS, and no token waits longer than that in a frame (decision
 * 0031); this drives `concurrency` runs at each
 * rate (0 = as fast as the fake can) and reports frames and messages per 1,000 tokens with the
 * frame delay (newest token in the frame) and the token delay (every token, held ones included).
 * Prints a table and one JSON line.
 *
 *   node test/load/coalescing.ts [--rates 20,33,50,100,0] [--concurrency 20] [--seconds 5] [--env AGENT_TEXT_FLUSH_MS=40]
 */
import { parseArgs } from 'node:util';
import { envFromPairs, startBenchStack } from './support/bench-stack.ts';
import { publishedTotal, quillPhase } from './support/phases.ts';
import { loadAverage } from './support/proc.ts';
import { plainReply } from './support/runs.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '20,33,50,100,0' },
    concurrency: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '5' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const rates = values.rates.split(',').map(Number);
const concurrency = Number(values.concurrency);
const seconds = Number(values.seconds);
const extraEnv = envFromPairs(values.env);

const bench = await startBenchStack({ env: extraEnv });
const figures: Array<Record<string, unknown>> = [];
try {
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: [
      ...Array.from({ length: 3 }, () => ({ text: plainReply(20), tokens_per_second: 20 })),
      ...rates.flatMap((rate) =>
        Array.from({ length: concurrency }, () => ({
          text: plainReply(rate === 0 ? 2000 : Math.max(100, rate * seconds)),
          tokens_per_second: rate,
        })),
      ),
    ],
  });
  await quillPhase(bench, { runs: 3, concurrency: 1, spreadMs: 0 });
  for (const rate of rates) {
    const load = loadAverage();
    const phase = await quillPhase(bench, { runs: concurrency, concurrency, spreadMs: 500 });
    const frames = phase.delays.reduce((total, run) => total + run.frame.length, 0);
    figures.push({
      tokens_per_second: rate === 0 ? 'unpaced' : rate,
      flush_ms: Number(extraEnv.AGENT_TEXT_FLUSH_MS ?? 40),
      frames_per_1k_tokens: (frames * 1000) / phase.tokens,
      messages_per_1k_tokens: (publishedTotal(phase) * 1000) / phase.tokens,
      frame_delay_ms: distribution(phase.delays.flatMap((run) => run.frame)),
      token_delay_ms: distribution(phase.delays.flatMap((run) => run.token)),
      tokens: phase.tokens,
      failures: phase.failures.length,
      load_average: load,
    });
  }
} finally {
  await bench.stop();
}

console.log(
  `coalescing: ${concurrency} runs at each rate, AGENT_TEXT_FLUSH_MS ${extraEnv.AGENT_TEXT_FLUSH_MS ?? '40 (default)'}`,
);
console.log(
  table([
    [
      'tokens/s',
      'frames/1k tok',
      'msgs/1k tok',
      'frame delay p50/p99',
      'token delay p50/p99',
      'failed',
      'load',
    ],
    ...figures.map((f) => {
      const frame = f.frame_delay_ms as { p50: number; p99: number };
      const token = f.token_delay_ms as { p50: number; p99: number };
      return [
        f.tokens_per_second as number | string,
        f.frames_per_1k_tokens as number,
        f.messages_per_1k_tokens as number,
        `${frame.p50.toFixed(1)} / ${frame.p99.toFixed(1)}`,
        `${token.p50.toFixed(1)} / ${token.p99.toFixed(1)}`,
        f.failures as number,
        f.load_average as number,
      ];
    }),
  ]),
);
console.log(JSON.stringify(rounded({ bench: 'coalescing', concurrency, rates: figures })));
