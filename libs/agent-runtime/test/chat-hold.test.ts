import { frame, type SseFrame } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { isBodyWrite, withChatHold } from '../src/chat-hold.ts';
import type { StepEmitter } from '../src/frame-emitter.ts';

function recorder() {
  const seen: Array<{ kind: 'text' | 'file' | 'frame'; value: string }> = [];
  const inner: StepEmitter = {
    text: (delta) => seen.push({ kind: 'text', value: delta }),
    thinking: () => undefined,
    fileDelta: (_fileId, delta) => seen.push({ kind: 'file', value: delta }),
    emit: (value: SseFrame) => seen.push({ kind: 'frame', value: value.type }),
    close: async () => undefined,
    settle: async () => 0,
    framesPublished: 0,
  };
  return { inner, seen };
}

const run = 'run-1';
const createCall = (id: string, fileType: string) =>
  frame('tool_call', run, {
    agent: 'writer',
    tool_call_id: id,
    tool_name: 'create_file',
    arguments: { title: '第一章', file_type: fileType },
  });
const toolResult = (id: string, status: 'ok' | 'error') =>
  frame('tool_result', run, {
    agent: 'writer',
    tool_call_id: id,
    tool_name: 'create_file',
    status,
    summary: '',
  });
const saved = frame('file_saved', run, { file_id: 'f', title: '第一章', version: 1, chars: 10 });

describe('withChatHold', () => {
  it('streams chat text until a body write succeeds, then holds it; file bodies are never held', () => {
    const { inner, seen } = recorder();
    const emitter = withChatHold(inner, { holdChat: true });
    emitter.text('我先建文件。');
    emitter.emit(createCall('c1', 'draft'));
    emitter.emit(toolResult('c1', 'ok'));
    emitter.fileDelta('f', '正文');
    emitter.emit(saved);
    emitter.text('写好了，要不要加一场雨？');
    expect(seen.filter((item) => item.kind !== 'frame')).toEqual([
      { kind: 'text', value: '我先建文件。' },
      { kind: 'file', value: '正文' },
    ]);
    expect(emitter.report()).toEqual({ held_text: '写好了，要不要加一场雨？' });
  });

  it('does not hold after an outline, a failed write, or when the task does not ask for it', () => {
    for (const [holdChat, fileType, status] of [
      [true, 'outline', 'ok'],
      [true, 'draft', 'error'],
      [false, 'draft', 'ok'],
    ] as const) {
      const { inner, seen } = recorder();
      const emitter = withChatHold(inner, { holdChat });
      emitter.emit(createCall('c1', fileType));
      emitter.emit(toolResult('c1', status));
      emitter.text('说明');
      expect(seen.some((item) => item.kind === 'text' && item.value === '说明')).toBe(true);
      expect(emitter.report().held_text).toBeUndefined();
    }
  });

  it('reports a step that ended right after a saved file block', () => {
    const ended = withChatHold(recorder().inner, { holdChat: false });
    ended.text('好的。');
    ended.emit(saved);
    ended.text('\n');
    ended.emit(frame('message_end', run, { agent: 'writer', stop_reason: 'stop' }));
    expect(ended.report()).toEqual({ ended_on_file_block: true });

    const talked = withChatHold(recorder().inner, { holdChat: false });
    talked.emit(saved);
    talked.text('写完了。');
    expect(talked.report()).toEqual({});

    const handedOff = withChatHold(recorder().inner, { holdChat: false });
    handedOff.emit(saved);
    handedOff.emit(createCall('c2', 'draft'));
    expect(handedOff.report()).toEqual({});
  });

  it('knows the body-writing tools', () => {
    expect(isBodyWrite('create_file', { file_type: 'script' })).toBe(true);
    expect(isBodyWrite('create_file', { file_type: 'character' })).toBe(false);
    expect(isBodyWrite('edit_file', {})).toBe(true);
    expect(isBodyWrite('query_files', {})).toBe(false);
  });
});
