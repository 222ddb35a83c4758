import type { ChatMessage, SseFrame, ToolCall } from '@quill/contracts';
import { createToolRunState, type ToolContext } from '@quill/tools';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StepEmitter } from '../src/index.ts';
import { createToolTurnRunner } from '../src/tool-turn.ts';

/** A runner whose calls never reach the database: every call below is refused or needs none. */
function runner(scope = { readOnly: false, clarifyFirst: false }) {
  const frames: SseFrame[] = [];
  const emitter: StepEmitter = {
    text: () => {},
    thinking: () => {},
    fileDelta: () => {},
    emit: (value) => frames.push(value),
    close: async () => {},
    settle: async () => 0,
    framesPublished: 0,
  };
  const context = {
    runId: '00000000-0000-4000-8000-0000000000aa',
    epoch: 0,
    role: 'writer',
    state: createToolRunState(),
  } as unknown as ToolContext;
  const turns = createToolTurnRunner({
    role: 'writer',
    scope,
    context,
    emitter,
    log: pino({ level: 'silent' }),
  });
  return { turns, frames, context, messages: [] as ChatMessage[] };
}

let counter = 0;
const call = (name: string, args: unknown = {}): ToolCall => ({
  id: `call_${++counter}`,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

describe('tool turn runner', () => {
  it('opens the breaker inside one batch and pairs every tool_call with its tool_result', async () => {
    const { turns, frames, messages } = runner();
    const calls = [call('summon_muse'), call('summon_muse'), call('summon_muse'), call('query_files')];
    const ran = await turns.run(calls, messages, { index: 0, max: 60 });
    expect(ran).toEqual({
      executed: 3,
      stop: {
        kind: 'failed',
        stopReason: 'tool_failure_circuit_open',
        detail: 'repeated_unavailable_tool_call',
      },
    });
    const ids = (type: string) =>
      frames
        .filter((frame) => frame.type === type)
        .map((frame) => (frame as { tool_call_id: string }).tool_call_id);
    expect(ids('tool_call')).toEqual(calls.slice(0, 3).map((item) => item.id));
    expect(ids('tool_result')).toEqual(ids('tool_call'));
    expect(messages.map((message) => message.role)).toEqual(['tool', 'tool', 'tool']);
    expect(JSON.parse(messages[0]!.content as string)).toMatchObject({
      status: 'error',
      error_type: 'tool_not_found',
    });
  });

  it('ends the step when the model still calls tools on the last turn', async () => {
    const { turns, messages } = runner();
    expect((await turns.run([call('summon_muse')], messages, { index: 6, max: 8 })).stop).toBeUndefined();
    expect((await turns.run([call('summon_muse')], messages, { index: 7, max: 8 })).stop).toEqual({
      kind: 'stopped',
      stopReason: 'tool_turns_exhausted',
    });
  });

  it('yields the step after a handoff request', async () => {
    const { turns, messages, context } = runner();
    const ran = await turns.run(
      [call('handoff_to_agent', { to_agent: 'quality_reviewer', reason: '请审稿' })],
      messages,
      {
        index: 0,
        max: 60,
      },
    );
    expect(ran.stop).toEqual({ kind: 'yield' });
    expect(context.state.handoff).toEqual({ to_agent: 'quality_reviewer', reason: '请审稿' });
  });

  it('refuses write tools on a read-only request with a readable tool_result', async () => {
    const { turns, frames, messages } = runner({ readOnly: true, clarifyFirst: false });
    await turns.run(
      [call('edit_file', { id: crypto.randomUUID(), operation: 'append', new_text: 'x' })],
      messages,
      {
        index: 0,
        max: 60,
      },
    );
    expect(frames.find((frame) => frame.type === 'tool_result')).toMatchObject({
      status: 'error',
      error_type: 'read_only_request',
    });
  });

  it('sends tool_progress frames on the parallel_execute card', async () => {
    const { turns, frames, messages } = runner();
    const parallel = call('parallel_execute', {
      calls: [
        { tool: 'query_files', arguments: { id: 'not-a-uuid' } },
        { tool: 'query_files', arguments: { tail_chars: 3 } },
      ],
    });
    await turns.run([parallel], messages, { index: 0, max: 60 });
    const progress = frames.filter((frame) => frame.type === 'tool_progress');
    expect(progress).toMatchObject([
      { tool_call_id: parallel.id, tool_name: 'parallel_execute', completed: 1, total: 2 },
      { tool_call_id: parallel.id, tool_name: 'parallel_execute', completed: 2, total: 2 },
    ]);
    expect(frames.map((frame) => frame.type)).toEqual([
      'tool_call',
      'tool_progress',
      'tool_progress',
      'tool_result',
    ]);
  });
});
