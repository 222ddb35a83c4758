import type { StepResult } from '@quill/contracts';
import { CONTINUATION_PROMPT } from '@quill/llm';
import { textReply, toolReply } from '@quill/llm/testing';
import { describe, expect, it } from 'vitest';
import { PENDING, runHarness, types } from './step-harness.ts';

const lastContent = (messages: readonly { content?: unknown }[]) => String(messages.at(-1)?.content ?? '');
let calls = 0;
const tool = (name: string, args: unknown = {}, id = `${name}-${++calls}`) => ({
  id,
  name,
  arguments: args,
});
const result = (value: StepResult | 'handed_back' | undefined): StepResult => {
  if (!value || value === 'handed_back') throw new Error(`no step result: ${String(value)}`);
  return value;
};
const messageEnd = (frames: { type: string }[]) => frames.filter((frame) => frame.type === 'message_end');

describe('step machine: the rules of one step', () => {
  it('a plain reply: agent_start, the text, message_end; one model call, journaled once', async () => {
    const run = await runHarness({ replies: [textReply('写好了。', { offsets: [2] })] });
    expect(types(run)).toEqual(['agent_start', 'message_end']);
    expect(run.text).toBe('写好了。');
    expect(result(run.result)).toMatchObject({ outcome: 'completed', stop_reason: 'stop', model_calls: 1 });
    expect(run.checkpoints.map((state) => state.turn)).toEqual([1]);
  });

  it('turn cap: tools still wanted on the last turn end the step as tool_turns_exhausted', async () => {
    const run = await runHarness({
      maxTurns: 2,
      replies: [toolReply([tool('query_files')]), toolReply([tool('query_files')])],
    });
    expect(result(run.result)).toMatchObject({
      outcome: 'stopped',
      stop_reason: 'tool_turns_exhausted',
      model_calls: 2,
      tool_calls: 2,
    });
    expect(messageEnd(run.frames)).toMatchObject([{ stop_reason: 'tool_turns_exhausted' }]);
  });

  it('soft landing: the note goes in once, on the turn the last three begin', async () => {
    const run = await runHarness({
      maxTurns: 4,
      replies: [toolReply([tool('query_files')]), toolReply([tool('query_files')]), textReply('收尾。')],
    });
    const notes = run.requests.map(
      (request) =>
        request.messages.filter((message) => String(message.content).includes('本步骤只剩')).length,
    );
    expect(notes).toEqual([0, 1, 1]);
    expect(lastContent(run.requests[1]!.messages)).toContain('本步骤只剩 3 次模型调用');
    expect(result(run.result)).toMatchObject({ outcome: 'completed', model_calls: 3 });
  });

  it('continuation on a length cut: the open body carries into the next call and is saved once', async () => {
    const run = await runHarness({
      pending: PENDING,
      replies: [textReply('<file>\n前半', { finish: 'length' }), textReply('后半。\n</file>\n写完了。')],
    });
    expect(lastContent(run.requests[1]!.messages)).toBe(CONTINUATION_PROMPT);
    expect(run.saved).toEqual([{ file: PENDING, body: '前半后半。' }]);
    expect(result(run.result)).toMatchObject({ outcome: 'completed', model_calls: 2 });
    expect(run.checkpoints[0]).toMatchObject({ continuationsUsed: 1, turn: 1 });
  });

  it('no continuation left: a body cut at the length limit is saved as partial after the loop', async () => {
    const run = await runHarness({
      pending: PENDING,
      maxContinuations: 0,
      replies: [textReply('<file>\n半章', { finish: 'length' })],
    });
    expect(run.saved).toEqual([{ file: PENDING, body: '半章', partial: 'output_limit' }]);
    expect(types(run)).toEqual(['agent_start', 'file_start', 'file_saved', 'message_end']);
    expect(messageEnd(run.frames)).toMatchObject([{ stop_reason: 'length' }]);
  });

  it('stop mid-turn: the body so far is saved partial, no further call, the step ends stopped', async () => {
    const run = await runHarness({
      pending: PENDING,
      stopAt: { call: 0, chunk: 1 },
      replies: [textReply('<file>\n第一段。\n第二段', { offsets: [10, 14] }), textReply('不该调用')],
    });
    expect(run.requests).toHaveLength(1);
    // Everything that streamed before the stop is kept.
    expect(run.saved).toEqual([{ file: PENDING, body: '第一段。\n第二', partial: 'user_stopped' }]);
    expect(result(run.result)).toMatchObject({ outcome: 'stopped', stop_reason: 'user_stopped' });
    expect(messageEnd(run.frames)).toMatchObject([{ stop_reason: 'user_stopped' }]);
    expect(types(run).at(-1)).toBe('message_end');
  });

  it('steer: an interjection joins the next call as a user message, with a frame and a checkpoint', async () => {
    const run = await runHarness({
      steering: { 1: ['加点雨'] },
      replies: [toolReply([tool('query_files')]), textReply('好的。')],
    });
    expect(lastContent(run.requests[1]!.messages)).toBe('[作者插话] 加点雨');
    expect(run.frames.find((frame) => frame.type === 'steering_received')).toMatchObject({
      content: '加点雨',
    });
    // After the first turn's checkpoint, the drained interjection is journaled before the call.
    expect(run.checkpoints.map((state) => state.turn)).toEqual([1, 1, 2]);
    expect(lastContent(run.checkpoints[1]!.messages)).toBe('[作者插话] 加点雨');
  });

  it('empty-file round: a created file left empty gets one correction call, and its body is saved', async () => {
    const run = await runHarness({
      replies: [
        toolReply([tool('create_file', { title: '第一章', file_type: 'draft' })]),
        textReply('建好了。'),
        textReply('<file>\n雨夜。\n</file>'),
      ],
    });
    expect(lastContent(run.requests[2]!.messages)).toContain('仍是空文件');
    expect(run.saved.map((save) => save.body)).toEqual(['雨夜。']);
    expect(result(run.result)).toMatchObject({ outcome: 'completed', model_calls: 3 });
  });

  it('empty-file round that brings no body: the file is removed and the step fails empty_file_unwritten', async () => {
    const run = await runHarness({
      replies: [
        toolReply([tool('create_file', { title: '第一章' })]),
        textReply('建好了。'),
        textReply('还是不写。'),
      ],
    });
    expect(run.requests).toHaveLength(3);
    expect(run.removed).toEqual([PENDING.fileId]);
    expect(types(run).slice(-2)).toEqual(['file_removed', 'message_end']);
    expect(result(run.result)).toMatchObject({ outcome: 'failed', error_code: 'empty_file_unwritten' });
    expect(messageEnd(run.frames)).toMatchObject([{ stop_reason: 'stop' }]);
  });

  it('no correction on a read-only request', async () => {
    const run = await runHarness({ readOnly: true, pending: PENDING, replies: [textReply('只是看看。')] });
    expect(run.requests).toHaveLength(1);
    expect(result(run.result)).toMatchObject({ outcome: 'failed', error_code: 'empty_file_unwritten' });
  });

  it('tool failure breaker: the third unavailable call in a row ends the batch and the step', async () => {
    const calls = [tool('summon_muse'), tool('summon_muse'), tool('summon_muse'), tool('query_files')];
    const run = await runHarness({ replies: [toolReply(calls), textReply('不该调用')] });
    const ids = (type: string) =>
      run.frames
        .filter((frame) => frame.type === type)
        .map((frame) => (frame as { tool_call_id: string }).tool_call_id);
    expect(ids('tool_call')).toEqual(calls.slice(0, 3).map((call) => call.id));
    expect(ids('tool_result')).toEqual(ids('tool_call'));
    expect(run.requests).toHaveLength(1);
    expect(run.logs).toContain('tool failure circuit open');
    expect(result(run.result)).toMatchObject({
      outcome: 'failed',
      stop_reason: 'tool_failure_circuit_open',
      error_code: 'tool_failure_circuit_open',
      tool_calls: 3,
    });
  });

  it('no progress: a third refused repeat read stops the step', async () => {
    const again = () => tool('query_files', { again: true });
    const run = await runHarness({ replies: [toolReply([again(), again()]), toolReply([again()])] });
    expect(result(run.result)).toMatchObject({
      outcome: 'stopped',
      stop_reason: 'no_progress',
      tool_calls: 3,
    });
  });

  it('model-call budget: a refused call ends the step as model_call_cap', async () => {
    const run = await runHarness({ budget: 1, replies: [toolReply([tool('query_files')]), textReply('x')] });
    expect(run.requests).toHaveLength(1);
    expect(result(run.result)).toMatchObject({ outcome: 'stopped', stop_reason: 'model_call_cap' });
  });

  it('token budget: each reply adds prompt + completion tokens; at the cap the next call never starts', async () => {
    // 15 tokens a reply (10 + 5): after two replies the run holds 30, the cap.
    const run = await runHarness({
      maxRunTokens: 30,
      replies: [toolReply([tool('query_files')]), toolReply([tool('query_files')]), textReply('x')],
    });
    expect(run.requests).toHaveLength(2);
    expect(run.spentTokens).toEqual([15, 15]);
    expect(result(run.result)).toMatchObject({
      outcome: 'stopped',
      stop_reason: 'token_budget',
      model_calls: 2,
    });
    expect(messageEnd(run.frames)).toMatchObject([{ stop_reason: 'token_budget' }]);
  });

  it('token budget: tokens of earlier steps count; one token under the cap still allows a call', async () => {
    const spent = await runHarness({ maxRunTokens: 100, tokensSpent: 100, replies: [textReply('x')] });
    expect(spent.requests).toHaveLength(0);
    expect(result(spent.result)).toMatchObject({
      outcome: 'stopped',
      stop_reason: 'token_budget',
      model_calls: 0,
    });
    const under = await runHarness({ maxRunTokens: 100, tokensSpent: 99, replies: [textReply('好。')] });
    expect(under.requests).toHaveLength(1);
    expect(result(under.result)).toMatchObject({ outcome: 'completed', stop_reason: 'stop' });
  });

  it('both budgets spent: the model-call cap is the reason reported', async () => {
    const run = await runHarness({ budget: 0, maxRunTokens: 1, tokensSpent: 5, replies: [textReply('x')] });
    expect(result(run.result)).toMatchObject({ outcome: 'stopped', stop_reason: 'model_call_cap' });
  });

  it('a handoff yields: the step completes and reports it', async () => {
    const run = await runHarness({ replies: [toolReply([tool('handoff_to_agent', { reason: '请审稿' })])] });
    expect(result(run.result)).toMatchObject({
      outcome: 'completed',
      handoff: { to_agent: 'quality_reviewer', reason: '请审稿' },
    });
  });

  it('hand-back mid-call: no message_end, nothing of the call counts, the step is handed back', async () => {
    const run = await runHarness({
      handBackAt: { call: 0, chunk: 0 },
      replies: [textReply('写到', { offsets: [1] })],
    });
    expect(run.result).toBe('handed_back');
    expect(messageEnd(run.frames)).toEqual([]);
    expect(run.checkpoints).toEqual([]);
  });

  it('a model failure ends the step failed with its catalog code; a tool crash with internal_error', async () => {
    const down = await runHarness({ replies: [[{ text: '写' }, { error: { kind: 'http', status: 503 } }]] });
    expect(result(down.result)).toMatchObject({ outcome: 'failed', error_code: 'model_unavailable' });
    expect(messageEnd(down.frames)).toMatchObject([{ stop_reason: 'error' }]);
    const crash = await runHarness({ replies: [toolReply([tool('explode')])] });
    expect(result(crash.result)).toMatchObject({ outcome: 'failed', error_code: 'internal_error' });
    expect(crash.logs).toContain('step failed');
  });
});
