import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  acceptArtifact,
  createFile,
  createProject,
  createUser,
  linkRevisionRun,
  rejectArtifact,
  requestArtifactRevision,
  setArtifactAcceptance,
} from '../src/gateway/index.ts';
import {
  getFile,
  listArtifacts,
  readCompileBasics,
  runAwaitsAcceptance,
  withTransaction,
} from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { attachReviewFindings, saveAiBody, saveFileContent } from '../src/workers/index.ts';

let database: TestDatabase;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'artifacts@example.com', displayName: 'A' })).id;
});
afterAll(async () => {
  await database.drop();
});

async function project(acceptance: 'auto' | 'review') {
  const { id } = await createProject(database.pool, { ownerId: userId, title: acceptance });
  await setArtifactAcceptance(database.pool, id, acceptance);
  return id;
}

const body = (
  projectId: string,
  fileId: string,
  runId: string,
  baseVersion: number,
  content: string,
  step = 0,
) =>
  saveAiBody(database.pool, {
    projectId,
    fileId,
    baseVersion,
    content,
    runId,
    writeKey: `${runId}:s${step}:t0:body:${fileId}:${crypto.randomUUID()}`,
  });

/** The project's file list as the context compiler reads it. */
const listFileSummaries = async (pool: typeof database.pool, projectId: string) =>
  (
    await readCompileBasics(pool, {
      projectId,
      sessionId: crypto.randomUUID(),
      runId: crypto.randomUUID(),
      userId,
      recentLimit: 1,
      reviewTargets: false,
    })
  ).summaries;

const decide = <T>(fn: (client: import('pg').PoolClient) => Promise<T>) => withTransaction(database.pool, fn);

describe('artifacts on the AI-write path', () => {
  it('auto-accept keeps the behaviour before artifacts: an in-file body is accepted as saved', async () => {
    const projectId = await project('auto');
    const file = await createFile(database.pool, { projectId, title: '一', fileType: 'draft' });
    const runId = crypto.randomUUID();
    await body(projectId, file.id, runId, 0, '正文');
    const [artifact] = await listArtifacts(database.pool, { runId });
    expect(artifact).toMatchObject({
      state: 'accepted',
      decidedBy: 'auto',
      placement: 'in_file',
      version: 1,
    });
    expect(await runAwaitsAcceptance(database.pool, runId)).toBe(false);
    const summary = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(summary?.unaccepted).toBeNull();
  });

  it('review: a body is drafted until accepted, and the file summary says so', async () => {
    const projectId = await project('review');
    const file = await createFile(database.pool, { projectId, title: '二', fileType: 'draft' });
    const runId = crypto.randomUUID();
    await body(projectId, file.id, runId, 0, '草稿正文');
    const [artifact] = await listArtifacts(database.pool, { runId });
    expect(artifact).toMatchObject({ state: 'drafted', decidedBy: null, baseVersion: 0, version: 1 });
    expect(await runAwaitsAcceptance(database.pool, runId)).toBe(true);
    const before = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(before?.unaccepted).toBe('drafted');

    const accepted = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: artifact!.id, userId }),
    );
    expect(accepted).toMatchObject({ kind: 'decided', artifact: { state: 'accepted', decidedBy: 'author' } });
    expect(await runAwaitsAcceptance(database.pool, runId)).toBe(false);
    const after = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(after?.unaccepted).toBeNull();
    // Accepting twice is refused, not repeated.
    const again = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: artifact!.id, userId }),
    );
    expect(again.kind).toBe('not_open');
  });

  it('review: rejecting restores the previous text as a new version; history keeps the rejected one', async () => {
    const projectId = await project('review');
    const file = await createFile(database.pool, {
      projectId,
      title: '三',
      fileType: 'draft',
      content: '作者原文',
    });
    const runId = crypto.randomUUID();
    await body(projectId, file.id, runId, 1, 'AI 改写');
    const [artifact] = await listArtifacts(database.pool, { runId });
    const rejected = await decide((client) =>
      rejectArtifact(client, { projectId, artifactId: artifact!.id, userId, comment: '不要' }),
    );
    expect(rejected).toMatchObject({ kind: 'decided', artifact: { state: 'rejected', comment: '不要' } });
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({
      content: '作者原文',
      version: 3,
    });
  });

  it('review: an author save after the AI write wins; accepting or rejecting the old artifact is a conflict', async () => {
    const projectId = await project('review');
    const file = await createFile(database.pool, { projectId, title: '四', fileType: 'draft' });
    const runId = crypto.randomUUID();
    await body(projectId, file.id, runId, 0, 'AI 正文');
    await saveFileContent(database.pool, { fileId: file.id, content: '作者改过', source: 'author' });
    const [artifact] = await listArtifacts(database.pool, { runId });
    const summary = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(summary?.unaccepted).toBeNull();
    for (const decideIt of [acceptArtifact, rejectArtifact]) {
      const outcome = await decide((client) =>
        decideIt(client, { projectId, artifactId: artifact!.id, userId }),
      );
      expect(outcome).toMatchObject({ kind: 'conflict', currentVersion: 2 });
    }
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({ content: '作者改过' });
  });

  it('a draft next to a file is an artifact in every mode; accepting it replaces the original', async () => {
    const projectId = await project('auto');
    const file = await createFile(database.pool, { projectId, title: '五', fileType: 'draft' });
    await saveFileContent(database.pool, { fileId: file.id, content: '作者的字', source: 'author' });
    const runId = crypto.randomUUID();
    const saved = await body(projectId, file.id, runId, 0, 'AI 的字');
    expect(saved.kind).toBe('drafted');
    const [artifact] = await listArtifacts(database.pool, { runId });
    expect(artifact).toMatchObject({
      state: 'drafted',
      placement: 'draft',
      fileId: file.id,
      textFileId: saved.fileId,
    });
    const draftSummary = (await listFileSummaries(database.pool, projectId)).find(
      (item) => item.id === saved.fileId,
    );
    expect(draftSummary?.unaccepted).toBe('drafted');
    const unnamed = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: artifact!.id, userId }),
    );
    expect(unnamed.kind).toBe('expected_version_required');
    const stale = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: artifact!.id, userId, expectedVersion: 0 }),
    );
    expect(stale.kind).toBe('conflict');
    const accepted = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: artifact!.id, userId, expectedVersion: 1 }),
    );
    expect(accepted.kind).toBe('decided');
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({
      content: 'AI 的字',
      version: 2,
    });
    expect(await getFile(database.pool, projectId, saved.fileId)).toBeNull();
  });

  it("a reviewer's findings attach once to the artifacts written before its step", async () => {
    const projectId = await project('review');
    const file = await createFile(database.pool, { projectId, title: '六', fileType: 'draft' });
    const runId = crypto.randomUUID();
    await body(projectId, file.id, runId, 0, '第一章', 0);
    const findings = { runId, step: 1, role: 'quality_reviewer', text: '节奏太快' };
    expect(await attachReviewFindings(database.pool, findings)).toBe(1);
    expect(await attachReviewFindings(database.pool, findings)).toBe(0);
    const [artifact] = await listArtifacts(database.pool, { runId });
    expect(artifact).toMatchObject({ state: 'under_review' });
    expect(artifact!.findings).toEqual([expect.objectContaining({ step: 1, text: '节奏太快' })]);
    const revision = await decide((client) =>
      requestArtifactRevision(client, { projectId, artifactId: artifact!.id, userId, comment: '放慢' }),
    );
    expect(revision).toMatchObject({
      kind: 'decided',
      artifact: { state: 'revision_requested', comment: '放慢' },
    });
    const summary = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(summary?.unaccepted).toBe('revision_requested');
  });

  it('accepting a revision closes the artifact it answered as superseded; rejecting it leaves that one open', async () => {
    const projectId = await project('review');
    const file = await createFile(database.pool, { projectId, title: '七', fileType: 'draft' });
    const firstRun = crypto.randomUUID();
    await body(projectId, file.id, firstRun, 0, '初稿');
    const [first] = await listArtifacts(database.pool, { runId: firstRun });
    const sendBack = async (artifactId: string, runId: string) => {
      await decide((client) =>
        requestArtifactRevision(client, { projectId, artifactId, userId, comment: '再紧凑些' }),
      );
      await linkRevisionRun(database.pool, artifactId, runId);
    };
    // A revision the author rejects: its base text (the first draft) is back and still open.
    const rejectedRun = crypto.randomUUID();
    await sendBack(first!.id, rejectedRun);
    await body(projectId, file.id, rejectedRun, 1, '修改稿一');
    const [rejectedRevision] = await listArtifacts(database.pool, { runId: rejectedRun });
    await decide((client) => rejectArtifact(client, { projectId, artifactId: rejectedRevision!.id, userId }));
    expect((await listArtifacts(database.pool, { runId: firstRun }))[0]).toMatchObject({
      state: 'revision_requested',
    });
    expect(await runAwaitsAcceptance(database.pool, firstRun)).toBe(true);
    // Sent back again; this revision is accepted, and the one it answered is closed.
    const acceptedRun = crypto.randomUUID();
    await linkRevisionRun(database.pool, first!.id, acceptedRun);
    const current = await getFile(database.pool, projectId, file.id);
    await body(projectId, file.id, acceptedRun, current!.version, '修改稿二');
    const [revision] = await listArtifacts(database.pool, { runId: acceptedRun });
    const accepted = await decide((client) =>
      acceptArtifact(client, { projectId, artifactId: revision!.id, userId }),
    );
    expect(accepted).toMatchObject({ kind: 'decided', artifact: { state: 'accepted' } });
    expect((await listArtifacts(database.pool, { runId: firstRun }))[0]).toMatchObject({
      state: 'superseded',
      decidedBy: 'author',
    });
    expect(await runAwaitsAcceptance(database.pool, firstRun)).toBe(false);
    const summary = (await listFileSummaries(database.pool, projectId)).find((item) => item.id === file.id);
    expect(summary?.unaccepted).toBeNull();
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({ content: '修改稿二' });
  });
});
