import type { Bus } from '@quill/bus';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';
import {
  connectTestBus,
  fileReplies,
  freshProject,
  giveProjectHistory,
  handoffCall,
  LONG_BODY,
  lastInputOf,
  routing,
  runTurn,
  scriptRouter,
  stepResults,
  textOf,
  userMessageRouting,
} from './workflow-support.ts';

/** Issue 3: the first message of a work, and the file-stream continuation round. */
let stack: Stack;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack();
  bus = await connectTestBus(stack);
});
afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});
beforeEach(() => stack.fakeLlm.clearScripts());

describe('first message of a work', () => {
  it('routes with the first-message form, skips review, drops the writer review handoff, adds one summary round', async () => {
    const projectId = await freshProject(stack, '新作品');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        ...fileReplies(LONG_BODY, { afterTools: [handoffCall('quality_reviewer', '请审稿')] }),
        { text: '第一章写好了：雨夜、旧书店和一本缺页的日记。接下来可以写老人讲的往事。' },
      ],
    });
    const turn = await runTurn(stack, {
      message: '写一部悬疑小说的第一章',
      generation_mode: 'quality',
      project_id: projectId,
    });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    const [routerCall] = stack.fakeLlm.requests({ run_id: turn.runId, role: 'router' });
    const routerInput = (routerCall!.body as { messages: Array<{ content: string }> }).messages[1]!.content;
    expect(
      routerInput.startsWith(
        '[新作品的第一条消息]\n作品类型：novel\n\n[用户本轮原话]\n写一部悬疑小说的第一章',
      ),
    ).toBe(true);
    expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
      first_message: true,
      auto_review: false,
    });
    expect(lastInputOf(stack, turn.runId, 'writer')).toContain('[首轮交付说明]');
    const steps = await stepResults(bus, turn.runId);
    expect(steps.map((step) => [step.role, step.handoff?.to_agent])).toEqual([
      ['writer', 'quality_reviewer'],
      ['writer', undefined],
    ]);
    expect(textOf(turn.frames)).toContain('第一章写好了');
  });

  it('a later message in the same work is no longer the first', async () => {
    const projectId = await freshProject(stack, '第二部');
    await runTurn(stack, { message: '写第一章', project_id: projectId });
    const second = await runTurn(stack, { message: '写第二章', project_id: projectId });
    expect(await userMessageRouting(stack, second.runId)).toMatchObject({ first_message: false });
  });
});

describe('file-stream continuation', () => {
  it('a writer run that ends right after a completed <file> block gets one more run of the same agent', async () => {
    await giveProjectHistory(stack);
    scriptRouter(stack, routing('writer', 'quick'));
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        ...fileReplies('第一章正文。', { before: '好的。' }),
        { text: '第一章已经写完，接下来写第二章吗？' },
      ],
    });
    const turn = await runTurn(stack, { message: '写第一章' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    const steps = await stepResults(bus, turn.runId);
    expect(steps.map((step) => step.ended_on_file_block === true)).toEqual([true, false]);
    expect(lastInputOf(stack, turn.runId, 'writer')).toContain('[文件流续写]');
    // A question mark in the reply does not make the run wait for the author.
    expect(turn.outline).not.toContain('clarification_requested:writer');
  });
});
