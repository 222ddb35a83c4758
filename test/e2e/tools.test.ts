import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import { getFile, listFileVersions } from '@quill/db';
import { createFile } from '@quill/db/gateway';
import { saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  // Small budgets so the runaway guards are reachable in a few scripted calls.
  stack = await startStack({ env: { AGENT_RUN_MAX_MODEL_CALLS: '6', AGENT_TOOL_CALL_MAX_ITERATIONS: '8' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function run(message: string) {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, { project_id: stack.projectId, message });
  expect(response.status).toBe(200);
  const result = await readStream(response);
  const frames = result.frames.map((received) => received.frame);
  expect(frames.filter(isTerminalFrame), frameTypes(result).join(',')).toHaveLength(1);
  expect(frames.at(-1)?.type).toBe('done');
  return frames;
}

const toolResults = (frames: SseFrame[]) =>
  frames.filter((frame): frame is Extract<SseFrame, { type: 'tool_result' }> => frame.type === 'tool_result');

/** A file an earlier AI run wrote (not protected). */
async function aiFile(title: string, content: string) {
  const file = await createFile(stack.pool, { projectId: stack.projectId, title, fileType: 'draft' });
  await saveFileContent(stack.pool, { fileId: file.id, content, source: 'ai', runId: crypto.randomUUID() });
  return file.id;
}

describe('agent tools end to end', () => {
  it('a model calling a tool that does not exist three times ends the run with the breaker frames', async () => {
    const call = { text: '', tool_calls: [{ name: 'summon_muse', arguments: { mood: '忧郁' } }] };
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [call, call, call] });
    const frames = await run('写一首诗');

    const results = toolResults(frames);
    expect(results).toHaveLength(3);
    expect(results.every((frame) => frame.status === 'error' && frame.error_type === 'tool_not_found')).toBe(
      true,
    );
    const calls = frames.filter((frame) => frame.type === 'tool_call');
    expect(calls.map((frame) => frame.type === 'tool_call' && frame.tool_call_id)).toEqual(
      results.map((frame) => frame.tool_call_id),
    );
    const end = frames.findIndex((frame) => frame.type === 'message_end');
    expect(frames[end]).toMatchObject({ type: 'message_end', stop_reason: 'tool_failure_circuit_open' });
    const error = frames.findIndex((frame) => frame.type === 'error');
    expect(error).toBeGreaterThan(end);
    expect(frames[error]).toMatchObject({ code: 'tool_failure_circuit_open', refundable: false });
    // The breaker ended the step: no fourth model call.
    expect(stack.fakeLlm.requests({ run_id: frames[0]!.run_id, role: 'writer' })).toHaveLength(3);
  });

  it('reads, edits, renames and deletes files through scripted tool calls', async () => {
    const chapter = await aiFile('第三章', '雨夜。\n她走进书店。');
    const scrap = await aiFile('废弃的开头', '不要了。');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '我先看看第三章。', tool_calls: [{ name: 'query_files', arguments: { id: chapter } }] },
        {
          text: '',
          tool_calls: [
            {
              name: 'edit_file',
              arguments: {
                id: chapter,
                operation: 'replace',
                old_text: '她走进书店。',
                new_text: '她推门走进书店。',
              },
            },
            { name: 'edit_file', arguments: { id: chapter, operation: 'append', new_text: '店主抬起头。' } },
            { name: 'rename_file', arguments: { id: chapter, new_title: '第三章 书店' } },
          ],
        },
        { text: '', tool_calls: [{ name: 'delete_file', arguments: { id: scrap } }] },
        { text: '改好了：第三章补了一句并改名，废弃的开头已删除。' },
      ],
    });
    const frames = await run('把第三章改一下，删掉废弃的开头');
    const results = toolResults(frames);
    expect(results.map((frame) => [frame.tool_name, frame.status])).toEqual([
      ['query_files', 'ok'],
      ['edit_file', 'ok'],
      ['edit_file', 'ok'],
      ['rename_file', 'ok'],
      ['delete_file', 'ok'],
    ]);
    expect(frames.some((frame) => frame.type === 'workflow_complete')).toBe(true);
    // Sources come from the tool that read the chapter (docs/protocol.md), on its card and in done.
    const source = {
      kind: 'file',
      file_id: chapter,
      title: '第三章',
      version: expect.any(Number),
      full: true,
    };
    expect(results[0]).toMatchObject({ sources: [source] });
    expect(results.slice(1).every((frame) => frame.sources === undefined)).toBe(true);
    expect(frames.find((frame) => frame.type === 'done')).toMatchObject({ sources: [source] });

    expect(await getFile(stack.pool, stack.projectId, chapter)).toMatchObject({
      title: '第三章 书店',
      content: '雨夜。\n她推门走进书店。\n店主抬起头。',
      version: 3,
    });
    const [latest] = await listFileVersions(stack.pool, chapter);
    expect(latest).toMatchObject({ source: 'ai', runId: frames[0]!.run_id });
    expect(await getFile(stack.pool, stack.projectId, scrap)).toBeNull();
  });

  it('a file the AI created and the author then saved cannot be deleted from chat', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '',
          tool_calls: [{ name: 'create_file', arguments: { title: '第五章', file_type: 'draft' } }],
        },
        { text: '<file>\nAI 写的第五章。\n</file>\n写好了。' },
      ],
    });
    const written = await run('写第五章');
    const saved = written.find((frame) => frame.type === 'file_saved');
    if (saved?.type !== 'file_saved')
      throw new Error(`no file_saved in ${written.map((frame) => frame.type)}`);

    const put = await fetch(
      `${stack.gateways[0]}/api/v1/projects/${stack.projectId}/files/${saved.file_id}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: '作者改过的第五章。', expected_version: saved.version }),
      },
    );
    expect(put.status).toBe(200);

    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'delete_file', arguments: { id: saved.file_id } }] },
        { text: '这一章是你保存过的，我不能在对话里删除它。' },
      ],
    });
    const frames = await run('把第五章删了');
    expect(toolResults(frames)).toMatchObject([
      { tool_name: 'delete_file', status: 'error', error_type: 'protected_manuscript' },
    ]);
    expect(await getFile(stack.pool, stack.projectId, saved.file_id)).toMatchObject({
      content: '作者改过的第五章。',
      authorSaved: true,
    });
  });

  it('stops a model that keeps re-reading the same unchanged text with no_progress', async () => {
    const chapter = await aiFile('第六章', '一成不变的正文。');
    const read = { text: '', tool_calls: [{ name: 'query_files', arguments: { id: chapter } }] };
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [read, read, read, read, read] });
    const frames = await run('看看第六章');
    expect(toolResults(frames).map((frame) => frame.error_type ?? frame.status)).toEqual([
      'ok',
      'repeated_read',
      'repeated_read',
      'repeated_read',
    ]);
    expect(frames.find((frame) => frame.type === 'message_end')).toMatchObject({
      stop_reason: 'no_progress',
    });
    expect(frames.find(isTerminalFrame)).toMatchObject({ type: 'workflow_stopped', reason: 'no_progress' });
  });

  it('caps model calls per run (counted in Redis) after a soft-landing note', async () => {
    const list = { text: '', tool_calls: [{ name: 'query_files', arguments: {} }] };
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: Array.from({ length: 8 }, () => list) });
    const frames = await run('把所有文件都列一遍');
    const runId = frames[0]!.run_id;
    const requests = stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    expect(requests).toHaveLength(6);
    const mentionsLanding = (request: (typeof requests)[number]) =>
      JSON.stringify((request.body as { messages: unknown[] }).messages).includes('只剩 3 次');
    expect(requests.map(mentionsLanding)).toEqual([false, false, false, false, false, true]);
    expect(frames.find((frame) => frame.type === 'message_end')).toMatchObject({
      stop_reason: 'model_call_cap',
    });
    expect(frames.find(isTerminalFrame)).toMatchObject({
      type: 'workflow_stopped',
      reason: 'model_call_cap',
    });
  });
});
