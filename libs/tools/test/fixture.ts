import type { AgentRole } from '@quill/contracts';
import { createProject, createSession, createUser } from '@quill/db/gateway';
import { createRun, startRun } from '@quill/db/router';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { testUrls } from '../../../test/support/urls.ts';
import { createToolRunState, executeTool, type ToolContext, type ToolResult } from '../src/index.ts';

/** One test database with a user, a project and a running run the tools write under. */
export interface ToolFixture {
  database: TestDatabase;
  userId: string;
  projectId: string;
  /** A fresh context on a new running run (epoch 0) with empty per-step state. */
  context(options?: { role?: AgentRole }): Promise<ToolContext>;
  call(context: ToolContext, name: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

export async function createToolFixture(): Promise<ToolFixture> {
  const database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, {
    email: `tools-${crypto.randomUUID()}@example.com`,
    displayName: 'Tools',
  });
  const project = await createProject(database.pool, { ownerId: user.id, title: '雨夜书店' });
  const session = await createSession(database.pool, { projectId: project.id, userId: user.id, title: 't' });
  return {
    database,
    userId: user.id,
    projectId: project.id,
    async context(options = {}) {
      const runId = crypto.randomUUID();
      await createRun(database.pool, {
        runId,
        sessionId: session.sessionId,
        projectId: project.id,
        userId: user.id,
        generationMode: 'fast',
      });
      await startRun(database.pool, runId);
      return {
        pool: database.pool,
        runId,
        epoch: 0,
        projectId: project.id,
        userId: user.id,
        role: options.role ?? 'writer',
        state: createToolRunState(),
      };
    },
    call(context, name, args) {
      return executeTool(name, JSON.stringify(args), context, (error) => {
        throw error;
      });
    },
    close: () => database.drop(),
  };
}

/** The data of an ok result; fails the test with the tool's message otherwise. */
export function okData(result: ToolResult): Record<string, unknown> {
  if (result.status !== 'ok') throw new Error(`expected ok, got ${result.error_type}: ${result.message}`);
  return result.data;
}

export function errorType(result: ToolResult): string | undefined {
  return result.status === 'error' ? result.error_type : undefined;
}
