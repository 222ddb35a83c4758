import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';
import {
  giveProjectHistory,
  routing,
  runTurn,
  scriptRouter,
  userMessageRouting,
} from './workflow-support.ts';

/**
 * AGENT_ROUTER_STRATEGY=off end to end (docs/agent-behaviour.md 「请求与流」): the writer starts
 * alone and the router model is never asked, except in quality mode, which forces model routing.
 * The same runs show the author-facing text shaping on real frames.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { AGENT_ROUTER_STRATEGY: 'off' } });
  await giveProjectHistory(stack);
});
afterAll(async () => {
  await stack?.stop();
});
beforeEach(() => stack.fakeLlm.clearScripts());

const textOf = (frames: Awaited<ReturnType<typeof runTurn>>['frames']) =>
  frames.flatMap((frame) => (frame.type === 'text' ? [frame.content] : [])).join('');

describe('the off routing strategy', () => {
  it('starts the writer alone without a router call, stores source off, and shapes the chat text', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '我先看看文件。', tool_calls: [{ name: 'query_files', arguments: {} }] },
        { text: 'Let me think about the plan first.\n第一章的思路：\n雨夜开场。' },
      ],
    });
    const turn = await runTurn(stack, { message: '写第一章的思路' });
    expect(turn.outline[1]).toBe('routing_decided:writer/quick/off');
    expect(stack.fakeLlm.requests({ run_id: turn.runId, role: 'router' })).toHaveLength(0);
    expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
      source: 'off',
      current_agent: 'writer',
    });
    // The English narration right after the tool call is not shown; prose lines get blank lines.
    expect(textOf(turn.frames)).toBe('我先看看文件。\n\n第一章的思路：\n\n雨夜开场。');
  });

  it('an English-writing author sees the same narration', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: 'Looking at the files.', tool_calls: [{ name: 'query_files', arguments: {} }] },
        { text: 'Let me think about the plan first.' },
      ],
    });
    const turn = await runTurn(stack, { message: 'Outline chapter one please' });
    expect(textOf(turn.frames)).toBe('Looking at the files.\n\nLet me think about the plan first.');
  });

  it('quality mode still asks the router model', async () => {
    scriptRouter(stack, routing('writer', 'quick'));
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ text: '写好了。' }] });
    const turn = await runTurn(stack, { message: '写第一章', generation_mode: 'quality' });
    expect(turn.outline[1]).toBe('routing_decided:writer/quick/llm');
    expect(stack.fakeLlm.requests({ run_id: turn.runId, role: 'router' })).toHaveLength(1);
  });
});
