import type { ProjectFile } from '@quill/db';
import { describe, expect, it } from 'vitest';
import { exportedFiles, type PendingText } from '../src/product/pending-text.ts';
import { renderManuscript } from '../src/product/project-archive.ts';

const file = (id: string, title: string, content: string, draftOf: string | null = null): ProjectFile => ({
  id,
  projectId: 'p',
  folder: '正文',
  title,
  fileType: 'draft',
  content,
  version: 2,
  authorSaved: false,
  deleted: false,
  visibility: 'all',
  draftOf,
  createdAt: '',
  updatedAt: '',
});

// What the export does with AI text the author has not accepted (docs/kernel.md "What the
// author sees of unaccepted text").
describe('exportedFiles and the manuscript label', () => {
  const files = [
    file('a', '第一章', '作者的第一章。'),
    file('b', '第二章', 'AI 改写的第二章。'),
    file('c', '第三章', 'AI 新写的第三章。'),
    file('d', '第一章（AI 草稿）', 'AI 草稿。', 'a'),
  ];
  const pending = new Map<string, PendingText>([
    ['b', { state: 'under_review', acceptedText: '作者的第二章。' }],
    ['c', { state: 'drafted', acceptedText: null }],
    ['d', { state: 'drafted', acceptedText: null }],
  ]);

  it('labels unaccepted text by its state, and the manuscript says so under the heading', () => {
    const labelled = exportedFiles(files, pending, false);
    expect(labelled.map((entry) => entry.acceptance)).toEqual([
      undefined,
      'under_review',
      'drafted',
      'drafted',
    ]);
    const manuscript = renderManuscript('书', labelled);
    expect(manuscript).toContain('## 第二章\n\n> 【AI 草稿，审阅中，待作者验收】\n\nAI 改写的第二章。');
    expect(manuscript).toContain('## 第一章\n\n作者的第一章。');
    expect(renderManuscript('Book', labelled, 'en')).toContain(
      '> [AI draft, not yet accepted by the author]',
    );
  });

  it('accepted only: the text an AI rewrite replaced, nothing of AI drafts or never-accepted files', () => {
    const strict = exportedFiles(files, pending, true);
    expect(strict.map((entry) => [entry.title, entry.content, entry.acceptance])).toEqual([
      ['第一章', '作者的第一章。', undefined],
      ['第二章', '作者的第二章。', undefined],
    ]);
  });
});
