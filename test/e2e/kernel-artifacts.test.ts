import type { SseFrame } from '@quill/contracts';
import { getFile, getSession, listFiles } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { authorApi } from '../support/background-run.ts';
import { stopProcesses } from '../support/service-process.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { lastInputOf } from './workflow-support.ts';

/**
 * The runtime kernel end to end (docs/kernel.md): AI texts are artifacts the author accepts,
 * rejects or sends back for a revision run; role definitions are versioned and pinned per
 * session, so a deploy that changes a prompt reaches new sessions only.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) => authorApi(stack, path, init);

interface Turn {
  runId: string;
  sessionId: string;
  frames: SseFrame[];
}

async function turn(message: string, sessionId?: string): Promise<Turn> {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, {
    project_id: stack.projectId,
    message,
    ...(sessionId ? { session_id: sessionId } : {}),
  });
  expect(response.status).toBe(200);
  const result = await readStream(response);
  return {
    runId: response.headers.get('x-quill-run-id')!,
    sessionId: response.headers.get('x-quill-session-id')!,
    frames: result.frames.map((received) => received.frame),
  };
}

/** Follows a run someone else started (the revision run) to its end. */
async function follow(runId: string): Promise<SseFrame[]> {
  const response = await fetch(`${stack.gateways[0]}/api/v1/agent/runs/${runId}/stream`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
  });
  return (await readStream(response)).frames.map((received) => received.frame);
}

const writeChapter = (title: string, body: string) =>
  stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: [
      { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
      { text: `<file>\n${body}\n</file>\n写好了。`, finish_reason: 'stop' },
    ],
  });

async function fileByTitle(title: string) {
  return (await listFiles(stack.pool, stack.projectId)).find((file) => file.title === title)!;
}

describe('artifacts and acceptance over HTTP', () => {
  it('a reviewed project: the run ends awaiting acceptance; a revision run sees a draft; accepting makes it the fact', async () => {
    const settings = await api(`/projects/${stack.projectId}/settings`, {
      method: 'PUT',
      body: { artifact_acceptance: 'review' },
    });
    expect(settings).toMatchObject({ status: 200, body: { artifact_acceptance: 'review' } });

    writeChapter('第一章', '雨夜，旧书店的门铃响了。');
    const first = await turn('写第一章');
    expect(first.frames.at(-1)?.type).toBe('done');
    const chapter = await fileByTitle('第一章');
    expect(chapter.content).toBe('雨夜，旧书店的门铃响了。');

    const runView = await api(`/agent/runs/${first.runId}`);
    expect(runView.body).toMatchObject({
      awaiting_acceptance: true,
      definitions: { writer: expect.any(Number) },
    });
    const listed = await api(`/agent/runs/${first.runId}/artifacts`);
    expect(listed.body.awaiting_acceptance).toBe(true);
    // The run is over; its session waits for the author's decision (docs/architecture.md "Phases").
    const phaseOf = async () => (await getSession(stack.pool, first.sessionId))?.phase;
    expect(await phaseOf()).toBe('waiting_user');
    const [artifact] = listed.body.artifacts as Array<Record<string, unknown>>;
    expect(artifact).toMatchObject({
      state: 'drafted',
      placement: 'in_file',
      file_id: chapter.id,
      version: 1,
    });

    const missing = await api(
      `/projects/${stack.projectId}/artifacts/${crypto.randomUUID()}/request-revision`,
      {
        method: 'POST',
        body: { comment: '节奏放慢' },
      },
    );
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(
      (
        await api(`/projects/${stack.projectId}/artifacts/${artifact!.id}/request-revision`, {
          method: 'POST',
          body: { comment: '' },
        })
      ).status,
    ).toBe(400);

    // The revision run: the writer answers without writing, so we can read what it was shown.
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '我来改。', finish_reason: 'stop' }],
    });
    const revision = await api(`/projects/${stack.projectId}/artifacts/${artifact!.id}/request-revision`, {
      method: 'POST',
      body: { comment: '节奏放慢，多写门铃声' },
    });
    expect(revision.status).toBe(202);
    expect(revision.body).toMatchObject({
      session_id: first.sessionId,
      artifact: { state: 'revision_requested', comment: '节奏放慢，多写门铃声' },
    });
    const revisionRun = revision.body.run_id as string;
    const revisionFrames = await follow(revisionRun);
    expect(revisionFrames.at(-1)?.type).toBe('done');
    // The artifact sent back is still open, so the session still waits for the author.
    expect(await phaseOf()).toBe('waiting_user');
    const allInput = JSON.stringify(stack.fakeLlm.requests({ run_id: revisionRun, role: 'writer' })[0]?.body);
    expect(allInput).toContain('节奏放慢，多写门铃声');
    expect(allInput).toContain(`第一章 (id=${chapter.id}) [AI 草稿，作者已要求返修][完整草稿，不是定稿]`);
    expect(allInput).not.toContain(`第一章 (id=${chapter.id}) [全文]`);

    const accepted = await api(`/projects/${stack.projectId}/artifacts/${artifact!.id}/accept`, {
      method: 'POST',
      body: {},
    });
    expect(accepted).toMatchObject({
      status: 200,
      body: { artifact: { state: 'accepted', decided_by: 'author' } },
    });
    const again = await api(`/projects/${stack.projectId}/artifacts/${artifact!.id}/accept`, {
      method: 'POST',
      body: {},
    });
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'artifact_not_open' } } });
    expect((await api(`/agent/runs/${first.runId}`)).body.awaiting_acceptance).toBe(false);
    // Nothing left open: the router settles the session back to done (asked after the answer).
    await vi.waitFor(async () => expect(await phaseOf()).toBe('done'), { timeout: 30_000, interval: 100 });

    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '好的。', finish_reason: 'stop' }],
    });
    const after = await turn('第一章写得怎么样？', first.sessionId);
    const afterInput = JSON.stringify(
      stack.fakeLlm.requests({ run_id: after.runId, role: 'writer' })[0]?.body,
    );
    expect(afterInput).not.toContain(`第一章 (id=${chapter.id}) [AI 草稿`);
  });

  it('rejecting restores the previous text', async () => {
    writeChapter('第二章', '第二章的 AI 正文。');
    const run = await turn('写第二章');
    const chapter = await fileByTitle('第二章');
    expect(chapter.content).toBe('第二章的 AI 正文。');
    const [artifact] = (await api(`/agent/runs/${run.runId}/artifacts`)).body.artifacts as Array<{
      id: string;
    }>;
    const rejected = await api(`/projects/${stack.projectId}/artifacts/${artifact!.id}/reject`, {
      method: 'POST',
      body: { comment: '不要这一版' },
    });
    expect(rejected).toMatchObject({
      status: 200,
      body: { artifact: { state: 'rejected', comment: '不要这一版' } },
    });
    expect(await getFile(stack.pool, stack.projectId, chapter.id)).toMatchObject({ content: '', version: 2 });
  });
});

describe('definitions and pinning', () => {
  it('a deploy-style prompt change leaves a pinned session unchanged; a new session and an upgrade get it', async () => {
    const marker = '【部署后的新提示】';
    const pinned = await turn('随便聊聊');
    expect(lastInputOf(stack, pinned.runId, 'writer', 0)).not.toContain(marker);
    const before = (await api(`/agent/runs/${pinned.runId}`)).body.definitions as Record<string, number>;

    // The deploy: a writer with the changed prompt starts, the old one stops.
    const old = stack.services.filter((service) => service.name === 'writer');
    await stack.startService('writer', { ROLE_PROMPT_REVISION: marker });
    await stopProcesses(old.map((service) => service.child));

    const sameSession = await turn('再聊聊', pinned.sessionId);
    expect(lastInputOf(stack, sameSession.runId, 'writer', 0)).not.toContain(marker);
    expect((await api(`/agent/runs/${sameSession.runId}`)).body.definitions).toMatchObject({
      writer: before.writer,
    });

    const fresh = await turn('新会话聊聊');
    expect(lastInputOf(stack, fresh.runId, 'writer', 0)).toContain(marker);
    const freshDefinitions = (await api(`/agent/runs/${fresh.runId}`)).body.definitions as Record<
      string,
      number
    >;
    expect(freshDefinitions.writer).toBe(before.writer! + 1);

    const session = await api(`/sessions/${pinned.sessionId}/definitions`);
    expect(session.body).toMatchObject({
      pinned: { writer: before.writer },
      current: { writer: before.writer! + 1 },
    });
    const upgraded = await api(`/sessions/${pinned.sessionId}/definitions/upgrade`, { method: 'POST' });
    expect(upgraded.body).toMatchObject({ pinned: { writer: before.writer! + 1 } });
    const afterUpgrade = await turn('升级后再聊', pinned.sessionId);
    expect(lastInputOf(stack, afterUpgrade.runId, 'writer', 0)).toContain(marker);
  });
});
