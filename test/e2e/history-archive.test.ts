import { randomUUID } from 'node:crypto';
import { getFile, getLatestCompaction, listFileVersions } from '@quill/db';
import { appendMessage, createSession } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// History compaction through every service (docs/agent-behaviour.md invariant 5): the context
// service summarises and names the archive file, the writer's step writes it
// (docs/decisions/0022-two-writer-tables-and-their-guards.md).
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { AGENT_CHAT_HISTORY_TOKEN_BUDGET: '1500' } });
});
afterAll(async () => {
  await stack?.stop();
});

interface RecordedBody {
  messages: Array<{ role: string; content: string | null }>;
}

describe('the history archive', () => {
  it('is named by the compile and written by the step it was compiled for, as an AI version of that run', async () => {
    const { sessionId } = await createSession(stack.pool, {
      projectId: stack.projectId,
      userId: stack.userId,
      title: '长会话',
    });
    for (let index = 0; index < 8; index++) {
      const runId = randomUUID();
      await appendMessage(stack.pool, {
        sessionId,
        runId,
        role: 'user',
        content: `第${index + 1}轮要求：${'把雨夜写得更冷一些，'.repeat(15)}`,
      });
      await appendMessage(stack.pool, {
        sessionId,
        runId,
        role: 'assistant',
        content: `第${index + 1}轮回复：${'已经调整了节奏与气氛。'.repeat(15)}`,
      });
    }
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ text: '好的，继续。' }] });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      session_id: sessionId,
      message: '继续写',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    expect(frameTypes(await readStream(response)).at(-1)).toBe('done');

    const compaction = (await getLatestCompaction(stack.pool, sessionId))!;
    expect(compaction.archiveFileId).toBeTruthy();
    const request = stack.fakeLlm.requests({ run_id: runId, role: 'writer' })[0]!;
    expect(JSON.stringify((request.body as RecordedBody).messages)).toContain(
      `query_files(id=\\"${compaction.archiveFileId}\\")`,
    );
    const archive = (await getFile(stack.pool, stack.projectId, compaction.archiveFileId!))!;
    expect(archive).toMatchObject({ folder: '.quill', fileType: 'history_archive', version: 1 });
    expect(archive.content).toContain('第1轮要求');
    expect(await listFileVersions(stack.pool, archive.id)).toEqual([
      expect.objectContaining({ version: 1, source: 'ai', runId }),
    ]);
  });
});
