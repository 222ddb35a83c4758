/**
 * The direct client of `peer.ts`, as its own process (so its CPU is its own): the `openai` SDK
 * streaming straight from the fake LLM, `runs` streams `concurrency` at a time, no server in
 * between. Prints one JSON line: per stream its id (sent as `x-quill-run-id`, so the fake's log
 * gives when the request arrived), when it was sent, and each token's arrival minus the fake's
 * `x_emitted_at` stamp.
 *
 *   node test/load/support/direct-client.ts --model-url URL --runs 50 --concurrency 50 --spread-ms 1000 --tag t
 */
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { inWaves } from './phases.ts';
import { cpuMs } from './proc.ts';
import { preciseNow } from './sse-reader.ts';

const { values } = parseArgs({
  options: {
    'model-url': { type: 'string' },
    runs: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '1' },
    'spread-ms': { type: 'string', default: '0' },
    tag: { type: 'string', default: 'direct' },
  },
});
const client = new OpenAI({
  baseURL: values['model-url'],
  apiKey: 'direct',
  maxRetries: 0,
  defaultHeaders: { 'x-quill-role': 'direct_sdk' },
});
const runs = Number(values.runs);
// From here on: the start-up (module loading) is not what streaming costs.
const cpuAtStart = cpuMs(process.pid);
const streams = await inWaves(
  runs,
  Number(values.concurrency),
  Number(values['spread-ms']),
  async (index) => {
    const id = `${values.tag}-${index}`;
    const postedAt = preciseNow();
    const token: number[] = [];
    let failure: string | undefined;
    try {
      const stream = await client.chat.completions.create(
        { model: 'quill-fake-1', stream: true, messages: [{ role: 'user', content: 'Continue the story.' }] },
        { headers: { 'x-quill-run-id': id } },
      );
      for await (const chunk of stream) {
        if (!chunk.choices[0]?.delta.content) continue;
        token.push(preciseNow() - (chunk as unknown as { x_emitted_at: number }).x_emitted_at);
      }
    } catch (error) {
      failure = (error as Error).message;
    }
    return { id, postedAt, token, failure };
  },
);
// Its own CPU from /proc, as every other process of the benchmark is read.
console.log(JSON.stringify({ streams, cpu_ms: cpuMs(process.pid) - cpuAtStart }));
