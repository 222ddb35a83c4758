import { randomUUID } from 'node:crypto';
import { getPreRunContents } from '@quill/db';
import { createFile, createProject, createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReviewEvidence } from '../src/workflow/evidence-reads.ts';
import { buildDirective } from '../src/workflow/handoff-packet.ts';
import { reviewContent } from '../src/workflow/review-content.ts';
import { planOf, result } from './workflow-fixtures.ts';

let database: TestDatabase;
let projectId: string;

const paragraphs = (count: number, mark: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => `第${index + 1}段：${mark(index).repeat(60)}`).join('\n');

beforeAll(async () => {
  database = await createTestDatabase();
  const user = await createUser(database.pool, { email: `r-${randomUUID()}@quill.test`, displayName: 'r' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: '长篇' })).id;
});
afterAll(async () => {
  await database?.drop();
});

const write = (fileId: string, title: string, version: number) => ({
  file_id: fileId,
  title,
  file_type: 'draft',
  version,
  body_chars: 0,
});

describe('review evidence read from the database', () => {
  it('remembers the text before the run’s first write, and gives the reviewer the changed segment of a long file', async () => {
    const runId = randomUUID();
    const original = paragraphs(200, () => '旧');
    const chapter = await createFile(database.pool, {
      projectId,
      title: '第七章 长夜',
      fileType: 'draft',
      content: original,
    });
    // An earlier run's write, then two writes of this run: the evidence diffs against the text
    // before this run touched the file, so both of this run's changes are in the segment.
    const earlier = paragraphs(200, (index) => (index === 3 ? '前' : '旧'));
    await saveFileContent(database.pool, {
      fileId: chapter.id,
      content: earlier,
      source: 'ai',
      runId: randomUUID(),
    });
    const first = paragraphs(200, (index) => (index === 3 ? '前' : index === 150 ? '新' : '旧'));
    await saveFileContent(database.pool, { fileId: chapter.id, content: first, source: 'ai', runId });
    const second = paragraphs(200, (index) =>
      index === 3 ? '前' : index === 150 || index === 152 ? '新' : '旧',
    );
    await saveFileContent(database.pool, { fileId: chapter.id, content: second, source: 'ai', runId });
    const created = await createFile(database.pool, {
      projectId,
      title: '番外',
      fileType: 'draft',
      content: '番外正文。',
      source: 'ai',
      runId,
    });

    const before = await getPreRunContents(database.pool, runId, [chapter.id, created.id, randomUUID()]);
    expect(before.get(chapter.id)).toBe(earlier);
    expect(before.get(created.id)).toBe('');
    expect(before.size).toBe(2);

    const prior = [
      result(0, 'writer', {
        files_written: [write(chapter.id, chapter.title, 3), write(created.id, '番外', 1)],
      }),
    ];
    const evidence = await loadReviewEvidence(
      database.pool,
      { project_id: projectId, run_id: runId },
      prior,
      false,
    );
    expect(evidence.unread).toEqual([]);
    expect(evidence.files.map((file) => file.id)).toEqual([chapter.id, created.id]);
    const text = reviewContent(evidence.files, 2000);
    expect(text).toContain('来源：《番外》');
    expect(text).toContain('以下是全文，不用再读取。\n番外正文。');
    expect(text).toContain(`第151段：${'新'.repeat(60)}`);
    expect(text).toContain(`第153段：${'新'.repeat(60)}`);
    // Not the head of the file, and not the earlier run's change.
    expect(text).not.toContain('第1段：');
    expect(text).not.toContain(`第4段：${'前'.repeat(60)}`);
    expect(text).toContain('只附了本请求改动的部分');
  });

  it('gives a revising writer the current text of the files the review cites, and only those', async () => {
    const runId = randomUUID();
    const cited = await createFile(database.pool, {
      projectId,
      title: '第八章',
      fileType: 'draft',
      content: '第八章的当前正文。',
      source: 'ai',
      runId,
    });
    const other = await createFile(database.pool, {
      projectId,
      title: '第九章',
      fileType: 'draft',
      content: '第九章的正文。',
      source: 'ai',
      runId,
    });
    const prior = [
      result(0, 'writer', { files_written: [write(cited.id, '第八章', 1), write(other.id, '第九章', 1)] }),
      result(1, 'quality_reviewer', {
        final_text: '《第八章》的对白太密，请返修。',
        handoff: { to_agent: 'writer', reason: '返修' },
      }),
    ];
    const evidence = await loadReviewEvidence(
      database.pool,
      { project_id: projectId, run_id: runId },
      prior,
      true,
    );
    expect(evidence.files.map((file) => file.id)).toEqual([cited.id]);
    const plan = planOf({}, { mode: 'quality' });
    const directive = buildDirective(
      plan,
      {
        step: 2,
        role: 'writer',
        kind: 'explicit',
        from: 'quality_reviewer',
        reason: '返修',
        inDelivery: false,
        revision: true,
        review: false,
        holdChat: false,
        readOnly: false,
        clarifyFirst: false,
        writerQuestions: [],
        remaining: [],
      },
      prior,
      evidence,
    );
    expect(directive).toContain(`[返修对象当前正文]\n来源：《第八章》 (id=${cited.id}`);
    expect(directive).toContain('第八章的当前正文。');
    expect(directive).not.toContain('第九章的正文。');
  });
});
