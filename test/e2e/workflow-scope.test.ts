import { isTerminalFrame } from '@quill/contracts';
import { getSession } from '@quill/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';
import {
  assistantReply,
  giveProjectHistory,
  handoffCall,
  routing,
  runRow,
  runTurn,
  scriptRouter,
  userMessageRouting,
} from './workflow-support.ts';

/**
 * Issue 3: the author's scope. Read-only requests cannot hand off to writing agents, a
 * clarification ends the run waiting for the author and the answer inherits the routing, vague
 * edit requests ask first, and 「继续」 resumes a run cut off by the collaboration cap.
 */
let stack: Stack;

beforeAll(async () => {
  // A small cap so that a plan can be cut off and resumed.
  stack = await startStack({ env: { AGENT_COLLABORATION_MAX_ITERATIONS: '2' } });
  await giveProjectHistory(stack);
});
afterAll(async () => {
  await stack?.stop();
});
beforeEach(() => stack.fakeLlm.clearScripts());

describe('author scope', () => {
  it('read-only: a handoff to a writing agent is blocked; the non-terminal stop precedes the terminal frame', async () => {
    scriptRouter(
      stack,
      routing('writer', 'quick', { read_only: true, write_content: false, scope: '评价第一章节奏' }),
    );
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '第一章节奏偏慢，可以先收紧开头。', tool_calls: [handoffCall('planner', '重做大纲')] },
      ],
    });
    const turn = await runTurn(stack, { message: '第一章节奏怎么样？不要改文件' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'workflow_stopped:read_only_handoff_blocked',
      'workflow_complete',
      'done',
    ]);
    expect(turn.frames.filter(isTerminalFrame).map((value) => value.type)).toEqual(['workflow_complete']);
    expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
      read_only: true,
      workflow_agents: [],
    });
    expect(await runRow(stack, turn.runId)).toEqual({ phase: 'done', stop_reason: 'completed' });
  });

  it('clarification: the run waits for the author; the answer inherits the routing without the router model', async () => {
    scriptRouter(stack, routing('planner', 'standard', { scope: '规划三章' }));
    stack.fakeLlm.addScript({
      match: { role: 'planner' },
      responses: [
        {
          text: '',
          tool_calls: [
            { name: 'request_clarification', arguments: { question: '用第一人称还是第三人称？' } },
          ],
        },
      ],
    });
    const asked = await runTurn(stack, { message: '帮我规划前三章' });
    expect(asked.outline).toEqual([
      'run_started',
      'routing_decided:planner/standard/llm',
      'agent_start:planner',
      'message_end:planner',
      'clarification_requested:planner',
      'workflow_stopped:waiting_user',
      'done',
    ]);
    expect(asked.frames.filter(isTerminalFrame).map((value) => value.type)).toEqual(['workflow_stopped']);
    expect(asked.frames.find((value) => value.type === 'clarification_requested')).toMatchObject({
      question: '用第一人称还是第三人称？',
    });
    expect(await runRow(stack, asked.runId)).toEqual({ phase: 'waiting_user', stop_reason: 'waiting_user' });
    expect(await getSession(stack.pool, asked.sessionId)).toMatchObject({
      phase: 'waiting_user',
      clarificationPending: true,
    });
    expect(await assistantReply(stack, asked.runId)).toContain('用第一人称还是第三人称？');
    expect((await userMessageRouting(stack, asked.runId)).outcome).toEqual({
      reason: 'waiting_user',
      last_agent: 'planner',
      waiting_agent: 'planner',
      question: '用第一人称还是第三人称？',
    });

    const answered = await runTurn(stack, { message: '第三人称', session_id: asked.sessionId });
    expect(answered.outline.slice(0, 3)).toEqual([
      'run_started',
      'routing_decided:planner/standard/inherited',
      'agent_start:planner',
    ]);
    expect(answered.outline).toContain('handoff:planner>writer');
    expect(answered.outline.slice(-2)).toEqual(['workflow_complete', 'done']);
    expect(stack.fakeLlm.requests({ run_id: answered.runId, role: 'router' })).toHaveLength(0);
    expect(await userMessageRouting(stack, answered.runId)).toMatchObject({
      scope: '规划三章',
      source: 'inherited',
    });
    expect(await runRow(stack, asked.runId)).toMatchObject({ phase: 'done' });
    expect(await getSession(stack.pool, asked.sessionId)).toMatchObject({
      phase: 'done',
      clarificationPending: false,
    });
  });

  it('a vague edit request asks first (no router call); the answer is routed by the model with the previous turn', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '',
          tool_calls: [{ name: 'request_clarification', arguments: { question: '想改哪一段？' } }],
        },
      ],
    });
    const vague = await runTurn(stack, { message: '帮我改一下' });
    expect(vague.outline.slice(0, 3)).toEqual([
      'run_started',
      'routing_decided:writer/quick/clarify_first',
      'agent_start:writer',
    ]);
    expect(vague.outline.slice(-3)).toEqual([
      'clarification_requested:writer',
      'workflow_stopped:waiting_user',
      'done',
    ]);
    expect(stack.fakeLlm.requests({ run_id: vague.runId, role: 'router' })).toHaveLength(0);
    expect(await userMessageRouting(stack, vague.runId)).toMatchObject({
      clarify_first: true,
      workflow_agents: [],
    });

    scriptRouter(stack, routing('writer', 'quick', { scope: '改第二段对话' }));
    const answer = await runTurn(stack, {
      message: '第二段的对话太生硬了，改自然些',
      session_id: vague.sessionId,
    });
    expect(answer.outline[1]).toBe('routing_decided:writer/quick/llm');
    const [routerCall] = stack.fakeLlm.requests({ run_id: answer.runId, role: 'router' });
    const routerInput = (routerCall!.body as { messages: Array<{ content: string }> }).messages[1]!.content;
    expect(routerInput).toContain('[上一轮助手结尾]\n想改哪一段？');
    expect(routerInput).toContain('[上一轮路由]\n{"current_agent":"writer"');
    expect(routerInput).toContain('[用户本轮原话]\n第二段的对话太生硬了，改自然些');
  });

  it('「继续」 after the collaboration cap resumes with the agent that was cut off', async () => {
    scriptRouter(stack, routing('planner', 'full'));
    const cut = await runTurn(stack, { message: '规划、设计钩子，再写第一章' });
    expect(cut.outline.slice(-2)).toEqual(['workflow_stopped:collaboration_cap', 'done']);
    expect((await userMessageRouting(stack, cut.runId)).outcome).toMatchObject({
      reason: 'collaboration_cap',
      last_agent: 'writer',
    });
    const resumed = await runTurn(stack, { message: '继续', session_id: cut.sessionId });
    expect(resumed.outline).toEqual([
      'run_started',
      'routing_decided:writer/full/resume',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    expect(stack.fakeLlm.requests({ run_id: resumed.runId, role: 'router' })).toHaveLength(0);
  });
});
