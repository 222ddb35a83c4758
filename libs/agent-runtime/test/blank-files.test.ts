import { randomUUID } from 'node:crypto';
import { ack, type DeliveryContext } from '@quill/bus';
import { getFile } from '@quill/db';
import { createFile, createProject, createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { saveFileContent } from '@quill/db/workers';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createBlankFilesHandler } from '../src/blank-files.ts';

// The writer's half of a refunded round's (or a read-only request's) blank files: the router
// names them once the run ended (services/router/test/run-finisher.test.ts), a writer removes them.
let database: TestDatabase;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, { email: 'blank@example.com', displayName: 'blank' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: 'blank' })).id;
});
afterAll(async () => {
  await database?.drop();
});

const delivery = (deliveryCount: number) => ({ deliveryCount }) as unknown as DeliveryContext;

describe('blank files of an ended run', () => {
  it('removes the files still empty at version 0 and keeps every file someone wrote', async () => {
    const blank = await createFile(database.pool, { projectId, title: '空白占位章', fileType: 'draft' });
    const written = await createFile(database.pool, { projectId, title: '写过的', fileType: 'draft' });
    await saveFileContent(database.pool, { fileId: written.id, content: '作者写的。', source: 'author' });
    const handle = createBlankFilesHandler({
      pool: database.pool,
      logger: pino({ level: 'silent' }),
      writeRetryMs: 0,
      maxDeliver: 3,
    });
    const task = {
      v: 1 as const,
      kind: 'blank_files' as const,
      run_id: randomUUID(),
      project_id: projectId,
      file_ids: [blank.id, written.id],
      reason: 'refunded_round' as const,
    };
    expect(await handle(task, delivery(1))).toBe(ack);
    // Redelivered (the ack was lost): nothing more happens.
    expect(await handle(task, delivery(2))).toBe(ack);
    expect(await getFile(database.pool, projectId, blank.id)).toBeNull();
    expect((await getFile(database.pool, projectId, written.id))?.content).toBe('作者写的。');
  });
});
