import type { FileWrite, SseFrame } from '@quill/contracts';
import { LlmCallError, type LlmClient } from '@quill/llm';
import { createScriptedModel } from '@quill/llm/testing';
import { createToolRunState, type PendingFile } from '@quill/tools';
import { describe, expect, it } from 'vitest';
import type { StepEmitter } from '../src/frame-emitter.ts';
import { runModelTurn } from '../src/model-turn.ts';

/** A model that streams the given deltas, then finishes or fails mid-stream as told. */
function scriptedModel(deltas: string[], end: { fail?: boolean } = {}): LlmClient {
  return createScriptedModel([
    [
      ...deltas.map((text) => ({ text })),
      end.fail
        ? { error: { kind: 'stream_interrupted' as const } }
        : { finish: 'stop' as const, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
    ],
  ]);
}

function recordingEmitter() {
  const frames: SseFrame[] = [];
  let text = '';
  let body = '';
  const emitter: StepEmitter = {
    text: (delta) => {
      text += delta;
    },
    thinking: () => {},
    fileDelta: (_fileId, delta) => {
      body += delta;
    },
    emit: (value) => frames.push(value),
    close: async () => {},
    settle: async () => 0,
    framesPublished: 0,
  };
  return { emitter, frames, text: () => text, body: () => body };
}

const PENDING: PendingFile = {
  fileId: '00000000-0000-4000-8000-000000000001',
  title: '第一章',
  fileType: 'draft',
  baseVersion: 0,
};

async function turn(llm: LlmClient, pending: PendingFile | undefined) {
  const recorded = recordingEmitter();
  const state = createToolRunState();
  state.pendingFile = pending;
  const saved: Array<{ file: PendingFile; body: string }> = [];
  const saveFileBody = async (file: PendingFile, body: string): Promise<FileWrite> => {
    saved.push({ file, body });
    return {
      file_id: file.fileId,
      title: file.title,
      file_type: file.fileType,
      version: 1,
      body_chars: body.length,
    };
  };
  const run = runModelTurn(
    { llm, emitter: recorded.emitter, state, runId: 'run-1', role: 'writer', saveFileBody },
    { messages: [{ role: 'user', content: '写' }], tools: [] },
  );
  return { run, recorded, state, saved };
}

describe('runModelTurn and the <file> capture', () => {
  it('saves a captured body with a version, streaming file_start / file_delta / file_saved', async () => {
    const { run, recorded, state, saved } = await turn(
      scriptedModel(['<file>\n雨', '夜。\n</fi', 'le>\n写好了。']),
      PENDING,
    );
    const result = await run;
    expect(saved).toEqual([{ file: PENDING, body: '雨夜。' }]);
    expect(result.filesWritten).toHaveLength(1);
    expect(result.text).toBe('写好了。');
    expect(recorded.frames.map((frame) => frame.type)).toEqual(['file_start', 'file_saved']);
    expect(state.pendingFile).toBeUndefined();
    // The model wrote it, so it knows this text: later edits compare against it.
    expect(state.readSnapshots.get(PENDING.fileId)).toEqual({ version: 1, content: '雨夜。', full: true });
    expect(state.writtenFileIds.has(PENDING.fileId)).toBe(true);
  });

  it('saves the in-progress capture when the stream is aborted mid-body (stop, disconnect, error)', async () => {
    const { run, saved, recorded } = await turn(
      scriptedModel(['<file>\n第一段。\n', '第二段写到一半'], { fail: true }),
      PENDING,
    );
    await expect(run).rejects.toBeInstanceOf(LlmCallError);
    expect(saved).toEqual([{ file: PENDING, body: '第一段。\n第二段写到一半' }]);
    expect(recorded.frames.map((frame) => frame.type)).toEqual(['file_start', 'file_saved']);
  });

  it('saves the body when the stream ends inside it, holding nothing back', async () => {
    const { run, saved } = await turn(scriptedModel(['<file>\n未完待续</fi']), PENDING);
    await run;
    expect(saved).toEqual([{ file: PENDING, body: '未完待续</fi' }]);
  });

  it('with no file waiting, drops lone tag lines and shows the body as chat text', async () => {
    const { run, saved, recorded } = await turn(
      scriptedModel(['好的。\n<file>\n雨夜。\n</file>\n']),
      undefined,
    );
    const result = await run;
    expect(saved).toEqual([]);
    expect(result.text).toBe('好的。\n雨夜。\n');
    expect(recorded.text()).toBe('好的。\n雨夜。\n');
    expect(recorded.frames).toEqual([]);
  });

  it('writes nothing for an empty capture: the file keeps waiting for its body', async () => {
    const { run, saved, state } = await turn(scriptedModel(['<file>\n</file>\n稍后再写。']), PENDING);
    await run;
    expect(saved).toEqual([]);
    expect(state.pendingFile).toEqual(PENDING);
  });
});

describe('runModelTurn and its admission', () => {
  it('hands the call the admission read ahead while its turn opened, and its session', async () => {
    const inner = scriptedModel(['好的。']);
    const requests: Array<Parameters<LlmClient['streamChat']>[0]> = [];
    const llm: LlmClient = {
      provider: inner.provider,
      streamChat: (request) => {
        requests.push(request);
        return inner.streamChat(request);
      },
    };
    const admission = Promise.resolve({ provider: 'backup', admission: 'closed' as const });
    const { emitter } = recordingEmitter();
    const dependencies = {
      llm,
      emitter,
      state: createToolRunState(),
      runId: 'run-1',
      role: 'writer' as const,
      saveFileBody: async () => undefined,
      sessionId: 'session-1',
    };
    await runModelTurn(
      { ...dependencies, admission },
      { messages: [{ role: 'user', content: '写' }], tools: [] },
    );
    expect(requests[0]?.admission).toBe(admission);
    expect(requests[0]?.sessionId).toBe('session-1');
  });
});
