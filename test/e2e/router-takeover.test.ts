import { isTerminalFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, slowReply } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Fast takeover (README "Fault tolerance"): the run message's ack wait is far longer than this
// test may take, so the run can only finish because a peer saw the dead router's lease lapse
// and handed the run back to JetStream.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    replicas: { router: 2 },
    env: {
      AGENT_ROUTER_STRATEGY: 'off',
      RUN_ACK_WAIT_S: '600',
      ROUTER_RUN_LEASE_TTL_MS: '2000',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
});

afterAll(() => stack?.stop());

describe('a router killed mid-run', () => {
  it('is replaced through its lapsed lease, long before the ack wait', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ ...slowReply(4), text: '风'.repeat(80) }],
    });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const reading = readStream(response);
    const holder = await eventually(async () =>
      stack.services.find((service) => service.name === 'router' && service.output().includes(runId)),
    );
    holder.child.kill('SIGKILL');

    const result = await reading;
    expect(frameTypes(result).at(-1)).toBe('done');
    const terminals = result.frames.filter((received) => isTerminalFrame(received.frame));
    expect(terminals.map((received) => received.frame.type)).toEqual(['workflow_complete']);
    const peer = stack.services.find((service) => service.name === 'router' && service !== holder)!;
    expect(peer.output()).toContain('run lease expired; handing the run back for takeover');
    expect(peer.output()).toContain('taking over run');
  });
});
