import { isTerminalFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // A one-token run budget: the first model call may start (nothing spent yet), its reply's
  // tokens reach the cap, so no second call starts — whatever the prompt's real size is.
  stack = await startStack({ env: { AGENT_RUN_MAX_TOKENS: '1', AGENT_TOOL_CALL_MAX_ITERATIONS: '8' } });
});
afterAll(async () => {
  await stack?.stop();
});

describe('run token budget end to end (docs/agent-behaviour.md 预算)', () => {
  it('stops the run as token_budget after the reply that spent it, with one terminal frame', async () => {
    const list = { text: '', tool_calls: [{ name: 'query_files', arguments: {} }] };
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: Array.from({ length: 8 }, () => list) });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '把所有文件都列一遍',
    });
    expect(response.status).toBe(200);
    const result = await readStream(response);
    const frames = result.frames.map((received) => received.frame);
    expect(frames.filter(isTerminalFrame), frameTypes(result).join(',')).toHaveLength(1);
    expect(frames.at(-1)?.type).toBe('done');

    const requests = stack.fakeLlm.requests({ run_id: frames[0]!.run_id, role: 'writer' });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.usage?.total_tokens ?? 0).toBeGreaterThan(0);
    // The one call's tool still ran; then the step closed instead of calling again.
    expect(frames.filter((frame) => frame.type === 'tool_result')).toHaveLength(1);
    expect(frames.filter((frame) => frame.type === 'message_end')).toMatchObject([
      { stop_reason: 'token_budget' },
    ]);
    expect(frames.find(isTerminalFrame)).toMatchObject({ type: 'workflow_stopped', reason: 'token_budget' });
  });
});
