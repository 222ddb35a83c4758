/**
 * The peer of `peer.ts`, as its own process: the OpenAI Agents SDK (`@openai/agents`) with a
 * chat-completions model pointed at the fake LLM, streaming each run's text deltas behind one
 * minimal Fastify SSE route. It is what "an agent behind an HTTP route" costs with nothing else:
 * no auth, no billing, no durable log (a frame lost with the process is lost), no resume on
 * another replica, no review. Prints `listening on <url>` once ready.
 *
 *   node test/load/support/peer-server.ts --model-url http://127.0.0.1:PORT/v1
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parseArgs } from 'node:util';
import {
  Agent,
  OpenAIChatCompletionsModel,
  run,
  setDefaultOpenAIClient,
  setTracingDisabled,
} from '@openai/agents';
import Fastify from 'fastify';
import OpenAI from 'openai';

const { values } = parseArgs({
  options: { 'model-url': { type: 'string' }, port: { type: 'string', default: '0' } },
});
const modelUrl = values['model-url'];
if (!modelUrl) throw new Error('--model-url is required');

/** The bench's id of the current request, so the fake LLM's log can be matched to the stream. */
const requestId = new AsyncLocalStorage<string>();
const client = new OpenAI({
  baseURL: modelUrl,
  apiKey: 'peer',
  maxRetries: 0,
  defaultHeaders: { 'x-quill-role': 'peer' },
  fetch: (url: string | URL | Request, init?: RequestInit) => {
    const id = requestId.getStore();
    if (!id) return fetch(url, init);
    const headers = new Headers(init?.headers);
    headers.set('x-quill-run-id', id);
    return fetch(url, { ...init, headers });
  },
});
setDefaultOpenAIClient(client);
// Tracing would export to the vendor's endpoint: there is no network here, and a peer without it
// is the lighter one.
setTracingDisabled(true);
const agent = new Agent({
  name: 'writer',
  instructions: 'You are a fiction writer. Continue the story.',
  model: new OpenAIChatCompletionsModel(client, 'quill-fake-1'),
});

const app = Fastify({ logger: false });
app.post<{ Body: { id: string; message: string } }>('/stream', async (request, reply) => {
  const { id, message } = request.body;
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  try {
    await requestId.run(id, async () => {
      const result = await run(agent, message, { stream: true });
      for await (const text of result.toTextStream()) out.write(`data: ${JSON.stringify({ text })}\n\n`);
      await result.completed;
    });
    out.write('data: [DONE]\n\n');
  } catch (error) {
    out.write(`data: ${JSON.stringify({ error: (error as Error).message })}\n\n`);
  }
  out.end();
});
const address = await app.listen({ host: '127.0.0.1', port: Number(values.port) });
console.log(`listening on ${address}`);
