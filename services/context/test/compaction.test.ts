import { randomUUID } from 'node:crypto';
import { getFile, getLatestCompaction, listFileVersions } from '@quill/db';
import { saveCompaction } from '@quill/db/context';
import { appendMessage, createProject, softDeleteFile } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { writeHistoryArchive } from '@quill/db/workers';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { createToolRunState, executeTool } from '@quill/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compilerFor,
  createUserIn,
  fakeLlmClient,
  newSession,
  startTurn,
  type TurnFixture,
  traceOf,
} from './support.ts';

let database: TestDatabase;
let fakeLlm: FakeLlm;
let userId: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  fakeLlm = await startFakeLlm({ port: 0 });
  userId = await createUserIn(database);
  projectId = (await createProject(database.pool, { ownerId: userId, title: '雨夜书店' })).id;
});

afterAll(async () => {
  await fakeLlm?.close();
  await database?.drop();
});

async function longSession(turns: number): Promise<TurnFixture> {
  const turn = { projectId, userId, sessionId: await newSession(database, projectId, userId) };
  for (let index = 0; index < turns; index++) {
    const runId = randomUUID();
    await appendMessage(database.pool, {
      sessionId: turn.sessionId,
      runId,
      role: 'user',
      content: `第${index + 1}轮要求：${'把雨夜写得更冷一些，'.repeat(15)}`,
    });
    await appendMessage(database.pool, {
      sessionId: turn.sessionId,
      runId,
      role: 'assistant',
      content: `第${index + 1}轮回复：${'已经调整了节奏与气氛。'.repeat(15)}`,
    });
  }
  return turn;
}

/** `count` more exchanges of the author's `label`ed asks and the agent's replies, after a compaction. */
async function addExchanges(sessionId: string, label: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const runId = randomUUID();
    await appendMessage(database.pool, {
      sessionId,
      runId,
      role: 'user',
      content: `${label}${index}：${'再改一遍。'.repeat(30)}`,
    });
    await appendMessage(database.pool, {
      sessionId,
      runId,
      role: 'assistant',
      content: `改好了${index}：${'细节补足。'.repeat(30)}`,
    });
  }
}

describe('history compaction', () => {
  it('summarises evicted turns once, archives their full text where query_files reads it, and keeps the prefix stable', async () => {
    fakeLlm.clearRequests();
    const turn = await longSession(8);
    const compile = compilerFor(database, { historyTokens: 1_500 }, fakeLlmClient(fakeLlm.url));
    const request = await startTurn(database, turn, '继续写');
    const writer = await compile(request);
    if (!writer.ok) throw new Error(writer.code);
    // The compile that compacted says so: the worker writes the archive section.
    expect(writer.compacted).toBe(true);

    const summaries = fakeLlm.requests({ role: 'summarize' });
    expect(summaries).toHaveLength(1);
    const compaction = (await getLatestCompaction(database.pool, turn.sessionId))!;
    expect(compaction.archiveFileId).toBeTruthy();
    const history = writer.messages.slice(1, -1);
    expect(history[0]?.role).toBe('user');
    expect(history[0]?.content).toContain('[此前对话摘要]\n本轮完成了第一章初稿');
    expect(history[0]?.content).toContain(`query_files(id="${compaction.archiveFileId}")`);
    // Kept: the most recent whole turns, down to about half the budget (hysteresis).
    expect(history[1]?.role).toBe('user');
    expect(history.at(-1)?.content).toContain('第8轮回复');
    expect(JSON.stringify(history)).not.toContain('第1轮要求');

    // The context service names the archive and keeps its text; the step's worker writes the
    // file (docs/decisions/0022-two-writer-tables-and-their-guards.md), once however often asked.
    expect(await getFile(database.pool, projectId, compaction.archiveFileId!)).toBeNull();
    const step = { sessionId: turn.sessionId, projectId, runId: request.run_id };
    expect(await writeHistoryArchive(database.pool, step)).toEqual([compaction.archiveFileId]);
    expect(await writeHistoryArchive(database.pool, step)).toEqual([]);
    const archive = (await getFile(database.pool, projectId, compaction.archiveFileId!))!;
    expect(archive).toMatchObject({ folder: '.quill', fileType: 'history_archive', version: 1 });
    expect(archive.title).toBe(`对话存档 ${turn.sessionId.slice(0, 8)}`);
    expect(archive.content).toContain('第1轮要求');
    expect(archive.content).toContain('第1轮回复');
    const trace = await traceOf(database, request.run_id);
    expect(trace.history.compacted_messages).toBe(compaction.compactedMessages);
    expect(trace.history.archive_file_id).toBe(compaction.archiveFileId);
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({ source: 'history', reason: 'compacted' }),
    );

    // The agent can read the archive back with query_files.
    const read = await executeTool('query_files', JSON.stringify({ id: compaction.archiveFileId }), {
      pool: database.pool,
      runId: request.run_id,
      epoch: 0,
      projectId,
      userId,
      role: 'writer',
      state: createToolRunState(),
    });
    expect(read.status).toBe('ok');
    expect(JSON.stringify(read)).toContain('第1轮要求');

    // Another role in the same turn reuses the boundary: same prefix, no second summary.
    const reviewer = await compile({ ...request, role: 'quality_reviewer', step: 1 });
    if (!reviewer.ok) throw new Error(reviewer.code);
    expect(reviewer.compacted).toBe(true);
    expect(JSON.stringify(reviewer.messages.slice(0, -1))).toBe(JSON.stringify(writer.messages.slice(0, -1)));
    expect(fakeLlm.requests({ role: 'summarize' })).toHaveLength(1);
  });

  it('archives a later compaction into the same file and folds the previous summary in', async () => {
    fakeLlm.clearRequests();
    const turn = await longSession(8);
    const compile = compilerFor(database, { historyTokens: 1_500 }, fakeLlmClient(fakeLlm.url));
    await compile(await startTurn(database, turn, '继续写'));
    const first = (await getLatestCompaction(database.pool, turn.sessionId))!;
    await addExchanges(turn.sessionId, '后续', 6);
    const later = await startTurn(database, turn, '继续写');
    await compile(later);
    const second = (await getLatestCompaction(database.pool, turn.sessionId))!;
    expect(second.throughSeq).toBeGreaterThan(first.throughSeq);
    expect(second.archiveFileId).toBe(first.archiveFileId);
    // Neither section was written yet: the next step writes both, in order, into one file.
    await writeHistoryArchive(database.pool, { sessionId: turn.sessionId, projectId, runId: later.run_id });
    const archive = (await getFile(database.pool, projectId, first.archiveFileId!))!;
    expect(archive.version).toBe(2);
    expect(archive.content.indexOf('第1轮要求')).toBeLessThan(archive.content.indexOf('后续0'));
    expect((await listFileVersions(database.pool, archive.id)).map((version) => version.source)).toEqual([
      'ai',
      'ai',
    ]);
    expect(second.compactedMessages).toBeGreaterThan(first.compactedMessages);
    const requests = fakeLlm.requests({ role: 'summarize' });
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body)).toContain('此前的摘要');
  });

  it('names a new archive once the author deleted the old one, which stays deleted', async () => {
    const turn = await longSession(8);
    const compile = compilerFor(database, { historyTokens: 1_500 }, fakeLlmClient(fakeLlm.url));
    const request = await startTurn(database, turn, '继续写');
    await compile(request);
    const first = (await getLatestCompaction(database.pool, turn.sessionId))!;
    await writeHistoryArchive(database.pool, { sessionId: turn.sessionId, projectId, runId: request.run_id });
    expect(await softDeleteFile(database.pool, projectId, first.archiveFileId!)).toBe(true);
    await addExchanges(turn.sessionId, '删后', 6);
    const later = await startTurn(database, turn, '继续写');
    const reply = await compile(later);
    if (!reply.ok) throw new Error(reply.code);
    const second = (await getLatestCompaction(database.pool, turn.sessionId))!;
    expect(second.archiveFileId).not.toBe(first.archiveFileId);
    expect(JSON.stringify(reply.messages)).toContain(`query_files(id=\\"${second.archiveFileId}\\")`);
    const step = { sessionId: turn.sessionId, projectId, runId: later.run_id };
    expect(await writeHistoryArchive(database.pool, step)).toEqual([second.archiveFileId]);
    const deleted = await database.pool.query('SELECT deleted, version FROM files WHERE id = $1', [
      first.archiveFileId,
    ]);
    expect(deleted.rows).toEqual([{ deleted: true, version: 1 }]);
    expect((await getFile(database.pool, projectId, second.archiveFileId!))?.content).toContain('删后0');
  });

  it('is off with AGENT_HISTORY_COMPACTION_ENABLED=false: old turns are dropped, nothing is summarised', async () => {
    fakeLlm.clearRequests();
    const turn = await longSession(8);
    const request = await startTurn(database, turn, '继续写');
    const reply = await compilerFor(
      database,
      { historyTokens: 1_500, compactionEnabled: false },
      fakeLlmClient(fakeLlm.url),
    )(request);
    if (!reply.ok) throw new Error(reply.code);
    expect(fakeLlm.requests({ role: 'summarize' })).toHaveLength(0);
    expect(await getLatestCompaction(database.pool, turn.sessionId)).toBeNull();
    // Never compacted: the worker has no archive section to look for.
    expect(reply.compacted).toBe(false);
    expect(JSON.stringify(reply.messages)).not.toContain('[此前对话摘要]');
    expect((await traceOf(database, request.run_id)).history.dropped_messages).toBeGreaterThan(0);
  });

  it('shows a short session only what follows its compaction, read once with the recent turns', async () => {
    const turn = await longSession(3);
    const { rows } = await database.pool.query<{ seq: number }>(
      'SELECT seq FROM messages WHERE session_id = $1 ORDER BY seq',
      [turn.sessionId],
    );
    // The first two exchanges were summarised; the third and the new ask follow the boundary.
    await saveCompaction(database.pool, {
      sessionId: turn.sessionId,
      throughSeq: Number(rows[3]!.seq),
      summary: '前两轮：雨夜的气氛改冷了。',
      archiveFileId: null,
      archiveSection: null,
      compactedMessages: 4,
    });
    const request = await startTurn(database, turn, '第四轮要求：收尾');
    const reply = await compilerFor(database, {}, fakeLlmClient(fakeLlm.url))(request);
    if (!reply.ok) throw new Error(reply.code);
    // Compacted by an earlier turn, not by this compile: still a session the worker looks at.
    expect(reply.compacted).toBe(true);
    const text = JSON.stringify(reply.messages);
    expect(text).toContain('前两轮：雨夜的气氛改冷了。');
    expect(text).not.toContain('第1轮要求');
    expect(text).not.toContain('第2轮回复');
    expect(text).toContain('第3轮要求');
    expect(text).toContain('第3轮回复');
    expect(text).toContain('第四轮要求：收尾');
  });
});
