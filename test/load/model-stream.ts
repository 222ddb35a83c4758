/**
 * What reading a streamed model reply costs a worker, alone: `--runs` concurrent calls of Quill's
 * model client (`createLlmClient().streamChat`, the writer's path: the SDK builds and sends the
 * request, the body is read as it arrives, SSE-decoded and assembled into events) against the fake
 * LLM in its own process, paced at `--rate` tokens a second each. Prints this process's CPU per
 * streamed token, per round, after a warm-up round (docs/decisions/0046-model-stream-transport.md),
 * and the fake LLM's: what writing the stream costs the benchmarks' stand-in provider, which
 * shares the machine with the services in every capacity figure (docs/decisions/0074).
 *
 * `--client failover` reads through the failover client the workers use (session pin, breaker,
 * the attempt's span around each step) instead of one provider's client.
 *
 *   node test/load/model-stream.ts [--runs 200] [--tokens 400] [--rate 50] [--rounds 3] [--client provider|failover]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createFailoverClient, createLlmClient, type LlmClient } from '@quill/llm';
import { createRedis, redisKeys } from '@quill/redis';
import { startFakeLlmProcess } from '../support/fake-llm-process.ts';
import { uniqueName } from '../support/urls.ts';
import { cpuMs, loadAverage } from './support/proc.ts';
import { plainReply } from './support/runs.ts';
import { rounded } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    tokens: { type: 'string', default: '400' },
    rate: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    client: { type: 'string', default: 'provider' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const runs = Number(values.runs);
const tokens = Number(values.tokens);
const rate = Number(values.rate);
const rounds = Number(values.rounds);

const fake = await startFakeLlmProcess();
const provider = {
  name: 'primary',
  baseUrl: fake.url,
  apiKey: 'bench',
  model: 'quill-fake-1',
  maxInputTokens: 128_000,
};
const redis = values.client === 'failover' ? createRedis(values.redis) : undefined;
const client: LlmClient = redis
  ? createFailoverClient({
      providers: [provider],
      redis,
      keys: redisKeys(uniqueName('quill_bench_model_stream_')),
      timeouts: { connectMs: 5_000, firstTokenMs: 30_000, idleMs: 30_000 },
      breaker: { failureThreshold: 1_000_000, windowMs: 60_000, cooldownMs: 1_000, probeLeaseMs: 1_000 },
      pinTtlMs: 60_000,
    })
  : createLlmClient({ provider });
const reply = { text: plainReply(tokens), tokens_per_second: rate, ttft_ms: 0 };

/** One call to its end; returns the text and thinking deltas it streamed. */
async function streamOne(): Promise<number> {
  let deltas = 0;
  const stream = client.streamChat({
    runId: randomUUID(),
    sessionId: randomUUID(),
    role: 'writer',
    messages: [{ role: 'user', content: '写第一章' }],
  });
  for (;;) {
    const next = await stream.next();
    if (next.done) break;
    if (next.value.type === 'text' || next.value.type === 'thinking') deltas++;
  }
  return deltas;
}

async function round(
  count: number,
): Promise<{ tokens: number; cpuUs: number; fakeCpuUs: number; seconds: number }> {
  await fake.addScript({ match: { role: 'writer' }, responses: Array.from({ length: count }, () => reply) });
  const startedCpu = process.cpuUsage();
  const startedFakeMs = cpuMs(fake.child.pid);
  const startedAt = performance.now();
  const counts = await Promise.all(Array.from({ length: count }, streamOne));
  const cpu = process.cpuUsage(startedCpu);
  return {
    tokens: counts.reduce((sum, value) => sum + value, 0),
    cpuUs: cpu.user + cpu.system,
    fakeCpuUs: (cpuMs(fake.child.pid) - startedFakeMs) * 1000,
    seconds: (performance.now() - startedAt) / 1000,
  };
}

const results: Array<{
  round: number;
  tokens: number;
  cpu_us_per_token: number;
  fake_cpu_us_per_token: number;
  seconds: number;
}> = [];
try {
  await round(Math.min(20, runs));
  for (let index = 1; index <= rounds; index++) {
    const measured = await round(runs);
    results.push({
      round: index,
      tokens: measured.tokens,
      cpu_us_per_token: measured.cpuUs / measured.tokens,
      fake_cpu_us_per_token: measured.fakeCpuUs / measured.tokens,
      seconds: measured.seconds,
    });
    console.log(
      `round ${index}: ${measured.tokens} tokens over ${runs} calls in ${rounded(measured.seconds)} s, ${rounded(measured.cpuUs / measured.tokens)} µs of client CPU per token, fake LLM ${rounded(measured.fakeCpuUs / measured.tokens)}`,
    );
  }
} finally {
  await fake.close();
  redis?.disconnect();
}
const best = Math.min(...results.map((row) => row.cpu_us_per_token));
const bestFake = Math.min(...results.map((row) => row.fake_cpu_us_per_token));
console.log(
  `model-stream: ${runs} calls at ${rate} tokens/s through the ${values.client} client, best ${rounded(best)} µs per token, fake LLM ${rounded(bestFake)} (load ${loadAverage()})`,
);
console.log(
  JSON.stringify({
    bench: 'model-stream',
    client: values.client,
    runs,
    tokens,
    rate,
    load_average: loadAverage(),
    best_cpu_us_per_token: rounded(best),
    best_fake_cpu_us_per_token: rounded(bestFake),
    rounds: results.map((row) => ({
      ...row,
      cpu_us_per_token: rounded(row.cpu_us_per_token),
      fake_cpu_us_per_token: rounded(row.fake_cpu_us_per_token),
    })),
  }),
);
