import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createUser, setFileTitle } from '../src/gateway/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { saveFileContent } from '../src/workers/index.ts';

let database: TestDatabase;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, { email: 'chars@example.com', displayName: 'Chars' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: 'Chars' })).id;
});
afterAll(async () => {
  await database.drop();
});

const stored = async (fileId: string) =>
  (
    await database.pool.query<{ chars: number; counted: number }>(
      'SELECT chars, char_length(content) AS counted FROM files WHERE id = $1',
      [fileId],
    )
  ).rows[0]!;

describe("a file's stored length", () => {
  it('is its text in characters from the first write on, whoever writes it', async () => {
    // One character outside the BMP: one character to PostgreSQL, two UTF-16 units to JavaScript.
    const file = await createFile(database.pool, {
      projectId,
      title: '第一章',
      fileType: 'draft',
      content: '𠀀林晚',
    });
    expect(await stored(file.id)).toEqual({ chars: 3, counted: 3 });
    await saveFileContent(database.pool, {
      fileId: file.id,
      content: '雨夜，铜铃响了一声。',
      source: 'author',
    });
    expect(await stored(file.id)).toEqual({ chars: 10, counted: 10 });
    await saveFileContent(database.pool, { fileId: file.id, content: '', source: 'ai', runId: null });
    expect(await stored(file.id)).toEqual({ chars: 0, counted: 0 });
  });

  it('cannot be written apart from the text, and a rename leaves it', async () => {
    const file = await createFile(database.pool, {
      projectId,
      title: '人物',
      fileType: 'character',
      content: '温言',
    });
    await database.pool.query('UPDATE files SET chars = 99 WHERE id = $1', [file.id]);
    expect(await stored(file.id)).toEqual({ chars: 2, counted: 2 });
    await setFileTitle(database.pool, file.id, '人物：温言');
    expect(await stored(file.id)).toEqual({ chars: 2, counted: 2 });
  });
});
