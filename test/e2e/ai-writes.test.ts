import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import { getFile, listFiles, listFileVersions } from '@quill/db';
import { createFile } from '@quill/db/gateway';
import { saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorApi, gateName, launchRun } from '../support/background-run.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * AI writes never cost the author a word (docs/ai-writes.md): the author saves while the agent
 * writes, the model breaks the two-reply protocol, the provider cuts a body, the author stops a
 * run mid-body. The fake LLM holds a reply at a named gate so each author action lands at an
 * exact point of the write, with no timing involved.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const gate = gateName;
const api = (path: string, init: { method?: string; body?: unknown } = {}) => authorApi(stack, path, init);

/** A run read in the background; its frames once it ended with exactly one terminal then done. */
function launch(message: string): { frames: Promise<SseFrame[]>; runId: Promise<string> } {
  const run = launchRun(stack, message);
  const frames = (async () => {
    expect(await run.status).toBe(200);
    const all = (await run.frames).map((entry) => entry.frame);
    expect(all.filter(isTerminalFrame), all.map((frame) => frame.type).join(',')).toHaveLength(1);
    expect(all.at(-1)?.type).toBe('done');
    return all;
  })();
  frames.catch(() => undefined);
  return { frames, runId: run.runId };
}

const framesOf = <T extends SseFrame['type']>(frames: SseFrame[], type: T) =>
  frames.filter((frame): frame is Extract<SseFrame, { type: T }> => frame.type === type);

async function fileByTitle(title: string) {
  return (await listFiles(stack.pool, stack.projectId)).find((file) => file.title === title);
}

const BODY = '夜雨敲窗，林晚把旧信摊在桌上。信纸泛黄，字迹却还清楚。她读到第三行，忽然停住了。';

describe('compare-and-set on AI writes', () => {
  it.each([
    ['before the body starts', 0],
    ['in the middle of the body', 20],
  ])(
    'an author save %s keeps the author text current and puts the AI body in a draft',
    async (_label, at) => {
      const title = `第一章-${at}`;
      const name = gate('author-saves');
      stack.fakeLlm.addScript({
        match: { role: 'writer' },
        responses: [
          { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
          { text: `<file>\n${BODY}\n</file>\n写好了。`, pause: name, pause_at_chars: at },
        ],
      });
      const run = launch(`写${title}`);
      await stack.fakeLlm.gateReached(name);
      const created = await fileByTitle(title);
      expect(created).toMatchObject({ version: 0, content: '' });
      const saved = await api(`/projects/${stack.projectId}/files/${created!.id}`, {
        method: 'PUT',
        body: { content: '作者自己写的开头。', expected_version: 0 },
      });
      expect(saved.status).toBe(200);
      stack.fakeLlm.releaseGate(name);
      const frames = await run.frames;

      const file = await getFile(stack.pool, stack.projectId, created!.id);
      expect(file).toMatchObject({ content: '作者自己写的开头。', version: 1, authorSaved: true });
      expect((await listFileVersions(stack.pool, created!.id)).map((version) => version.source)).toEqual([
        'author',
      ]);
      const draft = await fileByTitle(`${title}（AI 草稿）`);
      expect(draft).toMatchObject({ content: BODY, draftOf: created!.id, authorSaved: false });
      expect(framesOf(frames, 'file_saved')).toEqual([
        expect.objectContaining({
          file_id: draft!.id,
          saved_as: 'draft',
          draft_of: { file_id: created!.id, title },
          draft_reason: 'author_saved',
          partial: false,
        }),
      ]);
      expect(frames.find(isTerminalFrame)?.type).toBe('workflow_complete');

      // The API shows the link, and accepting the draft makes it the author's next version.
      const listed = await api(`/projects/${stack.projectId}/files`);
      expect(listed.body.files).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: draft!.id, draft_of: created!.id })]),
      );
      const stale = await api(`/projects/${stack.projectId}/files/${draft!.id}/accept-draft`, {
        method: 'POST',
        body: { expected_version: 0 },
      });
      expect(stale.status).toBe(409);
      const accepted = await api(`/projects/${stack.projectId}/files/${draft!.id}/accept-draft`, {
        method: 'POST',
        body: { expected_version: 1 },
      });
      expect(accepted.status).toBe(200);
      expect(await getFile(stack.pool, stack.projectId, created!.id)).toMatchObject({
        content: BODY,
        version: 2,
      });
      expect(await getFile(stack.pool, stack.projectId, draft!.id)).toBeNull();
    },
  );

  it('edit_file, rename_file and delete_file after an author save change nothing and tell the model', async () => {
    const title = '第二章';
    const file = await createFile(stack.pool, { projectId: stack.projectId, title, fileType: 'draft' });
    await saveFileContent(stack.pool, { fileId: file.id, content: BODY, source: 'ai' });
    const name = gate('after-read');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'query_files', arguments: { id: file.id } }] },
        {
          text: '',
          pause: name,
          pause_at_chars: 0,
          tool_calls: [
            {
              name: 'edit_file',
              arguments: { id: file.id, operation: 'replace', old_text: '夜雨敲窗', new_text: '大雨敲窗' },
            },
            { name: 'rename_file', arguments: { id: file.id, new_title: '第二章 旧信' } },
            { name: 'delete_file', arguments: { id: file.id } },
          ],
        },
        { text: '作者刚改过这一章，我没有动它。' },
      ],
    });
    const run = launch(`改${title}`);
    // The model has read version 1 and its next call is under way: now the author saves.
    await stack.fakeLlm.gateReached(name);
    const saved = await api(`/projects/${stack.projectId}/files/${file.id}`, {
      method: 'PUT',
      body: { content: '作者改写的第二章。', expected_version: 1 },
    });
    expect(saved.status).toBe(200);
    stack.fakeLlm.releaseGate(name);
    const frames = await run.frames;
    expect(framesOf(frames, 'tool_result').map((result) => [result.tool_name, result.error_type])).toEqual([
      ['query_files', undefined],
      ['edit_file', 'stale_content'],
      ['rename_file', 'stale_content'],
      ['delete_file', 'protected_manuscript'],
    ]);
    expect(await getFile(stack.pool, stack.projectId, file.id)).toMatchObject({
      title,
      content: '作者改写的第二章。',
      version: 2,
    });
  });
});

describe('the empty-file correction round', () => {
  it('a body written in the same reply as create_file gets one correction round and is saved', async () => {
    const title = '第三章';
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: `<file>\n${BODY}\n</file>`,
          tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }],
        },
        { text: '第三章写好了。' },
        { text: `<file>\n${BODY}\n</file>\n补写好了。` },
      ],
    });
    const run = launch(`写${title}`);
    const frames = await run.frames;
    const runId = await run.runId;
    const file = await fileByTitle(title);
    expect(file).toMatchObject({ content: BODY, version: 1 });
    const requests = stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    expect(requests).toHaveLength(3);
    const last = JSON.stringify((requests[2]!.body as { messages: unknown[] }).messages.at(-1));
    expect(last).toContain('仍是空文件');
    expect(last).toContain('同一次回复');
    expect(framesOf(frames, 'file_saved')).toHaveLength(1);
    expect(frames.find(isTerminalFrame)?.type).toBe('workflow_complete');
  });

  it('a file still empty after its correction round is removed and the run is refunded, not completed', async () => {
    const title = '第四章';
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: '写好了。' },
        { text: '真的写好了。' },
      ],
    });
    const run = launch(`写${title}`);
    const frames = await run.frames;
    const removed = framesOf(frames, 'file_removed');
    expect(removed).toEqual([expect.objectContaining({ title, reason: 'empty_file_unwritten' })]);
    expect(await fileByTitle(title)).toBeUndefined();
    expect(frames.find(isTerminalFrame)).toMatchObject({ type: 'error', code: 'empty_file_unwritten' });
    expect(framesOf(frames, 'quota_refunded')).toHaveLength(1);
  });
});

describe('complete bodies only', () => {
  it('a body cut by a connection reset never replaces complete text: it becomes a partial draft', async () => {
    const title = '第五章';
    const existing = await createFile(stack.pool, { projectId: stack.projectId, title, fileType: 'draft' });
    await saveFileContent(stack.pool, { fileId: existing.id, content: '上一版完整的第五章。', source: 'ai' });
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `<file>\n${BODY}\n</file>`, disconnect_after_chars: 20 },
      ],
    });
    const frames = await launch(`重写${title}`).frames;
    expect(await getFile(stack.pool, stack.projectId, existing.id)).toMatchObject({
      content: '上一版完整的第五章。',
      version: 1,
    });
    const draft = await fileByTitle(`${title}（AI 草稿）`);
    expect(draft?.draftOf).toBe(existing.id);
    expect(BODY.startsWith(draft!.content)).toBe(true);
    expect(draft!.content.length).toBeLessThan(BODY.length);
    const [version] = await listFileVersions(stack.pool, draft!.id);
    expect(version).toMatchObject({ partialReason: 'provider_error' });
    expect(framesOf(frames, 'file_saved')).toEqual([
      expect.objectContaining({
        saved_as: 'draft',
        draft_reason: 'partial_over_text',
        partial: true,
        partial_reason: 'provider_error',
      }),
    ]);
    expect(frames.find(isTerminalFrame)?.type).toBe('error');
  });

  it('a stop mid-body saves what was written, marked partial with why', async () => {
    const title = '第六章';
    const name = gate('stop-mid-body');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `<file>\n${BODY}\n</file>`, pause: name, pause_at_chars: 30 },
      ],
    });
    const run = launch(`写${title}`);
    await stack.fakeLlm.gateReached(name);
    const stopped = await api('/agent/stop', { method: 'POST', body: { run_id: await run.runId } });
    expect(stopped.status).toBe(202);
    const frames = await run.frames;
    const file = await fileByTitle(title);
    expect(file!.content.length).toBeGreaterThan(0);
    expect(BODY.startsWith(file!.content)).toBe(true);
    const [version] = await listFileVersions(stack.pool, file!.id);
    expect(version).toMatchObject({ source: 'ai', partialReason: 'user_stopped' });
    expect(framesOf(frames, 'file_saved')).toEqual([
      expect.objectContaining({
        file_id: file!.id,
        saved_as: 'file',
        partial: true,
        partial_reason: 'user_stopped',
      }),
    ]);
    expect(frames.find(isTerminalFrame)).toMatchObject({ type: 'workflow_stopped', reason: 'user_stopped' });
    const versions = await api(`/projects/${stack.projectId}/files/${file!.id}/versions`);
    expect(versions.body.versions).toEqual([
      expect.objectContaining({ source: 'ai', partial: true, partial_reason: 'user_stopped' }),
    ]);
  });
});
