import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slowReply } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// A gateway on SIGTERM tells its clients to reconnect (SSE `retry:`), ends their streams and
// exits cleanly; the client resumes on another gateway (README "Fault tolerance").
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    replicas: { gateway: 2 },
    env: { AGENT_ROUTER_STRATEGY: 'off', GATEWAY_RATE_LIMIT_PER_MINUTE: '1000' },
  });
});

afterAll(() => stack?.stop());

describe('a gateway shutting down with open streams', () => {
  it('sends retry:, closes the stream before it exits 0, and the run resumes on another gateway', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(5)] });
    const [first, second] = stack.services.filter((service) => service.name === 'gateway');
    const response = await startRun(first!.baseUrl!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段',
    });
    const runId = response.headers.get('x-quill-run-id')!;

    const ids: string[] = [];
    let retry: number | undefined;
    let sawDone = false;
    const parser = createParser({
      onEvent(event) {
        if (event.id) ids.push(event.id);
        if (JSON.parse(event.data).type === 'done') sawDone = true;
      },
      onRetry(interval) {
        retry = interval;
      },
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const exited = new Promise<number | null>((resolve) => first!.child.once('exit', resolve));
    let terminated = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      // A few frames in, the run is streaming: now the gateway is asked to stop.
      if (!terminated && ids.length >= 3) {
        terminated = true;
        first!.child.kill('SIGTERM');
      }
    }
    expect(terminated).toBe(true);
    expect(retry).toBe(500);
    expect(sawDone).toBe(false);
    // 0: the shutdown finished; the bounded shutdown's timeout would have exited 1.
    expect(await exited).toBe(0);

    const resumed = await readStream(
      await fetch(`${second!.baseUrl}/api/v1/agent/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}`, 'last-event-id': ids.at(-1)! },
      }),
    );
    expect(frameTypes(resumed).slice(-2)).toEqual(['workflow_complete', 'done']);
    expect(Number(resumed.frames[0]!.id)).toBeGreaterThan(Number(ids.at(-1)));
  });
});
