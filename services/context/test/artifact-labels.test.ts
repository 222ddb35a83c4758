import { listArtifacts, withTransaction } from '@quill/db';
import {
  acceptArtifact,
  createProject,
  rejectArtifact,
  requestArtifactRevision,
  setArtifactAcceptance,
} from '@quill/db/gateway';
import type { TestDatabase } from '@quill/db/testing';
import { createTestDatabase } from '@quill/db/testing';
import { attachReviewFindings, createFile, saveAiBody, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DRAFT_LABELS, fullHeader } from '../src/render.ts';
import { compilerFor, createUserIn, newSession, startTurn, type TurnFixture } from './support.ts';

/**
 * What the compiler shows of an AI text in each acceptance state (docs/kernel.md "Artifacts and
 * acceptance"): until the author accepts it, a draft with its state, never [全文].
 */
let database: TestDatabase;
let fixture: TurnFixture;

beforeAll(async () => {
  database = await createTestDatabase();
  const userId = await createUserIn(database);
  const project = await createProject(database.pool, { ownerId: userId, title: '验收' });
  await setArtifactAcceptance(database.pool, project.id, 'review');
  fixture = { projectId: project.id, userId, sessionId: await newSession(database, project.id, userId) };
});
afterAll(async () => {
  await database?.drop();
});

async function shown(fileId: string): Promise<string> {
  const request = await startTurn(database, fixture, '看看这一章', { focus: fileId });
  const reply = await compilerFor(database)(request);
  if (!reply.ok) throw new Error(reply.code);
  return reply.messages.at(-1)?.content ?? '';
}

async function aiWrite(fileId: string, baseVersion: number, content: string, step = 0) {
  const runId = crypto.randomUUID();
  const saved = await saveAiBody(database.pool, {
    projectId: fixture.projectId,
    fileId,
    baseVersion,
    content,
    runId,
    writeKey: `${runId}:s${step}:t0:body:${fileId}`,
  });
  const [artifact] = await listArtifacts(database.pool, { runId });
  return { runId, saved, artifact: artifact! };
}

const decide = <T>(fn: (client: import('pg').PoolClient) => Promise<T>) => withTransaction(database.pool, fn);

describe('the compiler labels AI texts the author has not accepted', () => {
  it('drafted, under review, revision requested: a draft; accepted: [全文]', async () => {
    const file = await createFile(database.pool, {
      projectId: fixture.projectId,
      title: '第一章',
      fileType: 'draft',
    });
    const { runId, artifact } = await aiWrite(file.id, 0, '雨夜，旧书店的门铃响了。');
    const draftHeader = (state: keyof typeof DRAFT_LABELS) => fullHeader('第一章', file.id, state);

    let text = await shown(file.id);
    expect(text).toContain(`${draftHeader('drafted')}\n雨夜，旧书店的门铃响了。`);
    expect(text).not.toContain(fullHeader('第一章', file.id));

    await attachReviewFindings(database.pool, { runId, step: 1, role: 'quality_reviewer', text: '好' });
    text = await shown(file.id);
    expect(text).toContain(draftHeader('under_review'));

    const userId = fixture.userId;
    const projectId = fixture.projectId;
    await decide((client) =>
      requestArtifactRevision(client, { projectId, artifactId: artifact.id, userId, comment: '再紧凑些' }),
    );
    text = await shown(file.id);
    expect(text).toContain(draftHeader('revision_requested'));

    await decide((client) => acceptArtifact(client, { projectId, artifactId: artifact.id, userId }));
    text = await shown(file.id);
    expect(text).toContain(`${fullHeader('第一章', file.id)}\n雨夜，旧书店的门铃响了。`);
  });

  it('rejected: the restored text is the fact again; an author save over a draft is the fact', async () => {
    const projectId = fixture.projectId;
    const userId = fixture.userId;
    const file = await createFile(database.pool, {
      projectId,
      title: '第二章',
      fileType: 'draft',
      content: '作者写的第二章。',
    });
    const rejected = await aiWrite(file.id, 1, 'AI 改写的第二章。');
    expect(await shown(file.id)).toContain(fullHeader('第二章', file.id, 'drafted'));
    await decide((client) => rejectArtifact(client, { projectId, artifactId: rejected.artifact.id, userId }));
    expect(await shown(file.id)).toContain(`${fullHeader('第二章', file.id)}\n作者写的第二章。`);

    const overwritten = await aiWrite(file.id, 3, 'AI 又写了一遍。');
    expect(overwritten.saved.kind).toBe('saved');
    await saveFileContent(database.pool, { fileId: file.id, content: '作者亲自改好。', source: 'author' });
    expect(await shown(file.id)).toContain(`${fullHeader('第二章', file.id)}\n作者亲自改好。`);
  });

  it('a draft next to a file is labelled a draft', async () => {
    const projectId = fixture.projectId;
    const file = await createFile(database.pool, { projectId, title: '第三章', fileType: 'draft' });
    await saveFileContent(database.pool, { fileId: file.id, content: '作者的第三章。', source: 'author' });
    const { saved } = await aiWrite(file.id, 0, 'AI 的第三章。');
    expect(saved.kind).toBe('drafted');
    const text = await shown(saved.fileId);
    expect(text).toContain(`${fullHeader(saved.title, saved.fileId, 'drafted')}\nAI 的第三章。`);
  });
});
