import { randomUUID } from 'node:crypto';
import type { AgentRole, ContextCompileRequest, ContextTrace } from '@quill/contracts';
import { listContextTraces } from '@quill/db';
import { appendMessage, createSession, createUser } from '@quill/db/gateway';
import type { TestDatabase } from '@quill/db/testing';
import { createLlmClient, type LlmClient } from '@quill/llm';
import pino from 'pino';
import { type CompilerSettings, createContextCompiler } from '../src/compiler.ts';

export const DEFAULT_SETTINGS: CompilerSettings = {
  contextTokens: 32_000,
  historyTokens: 32_000,
  ledgerCeiling: 128_000,
  skillTokens: 16_000,
  workingSet: { maxFiles: 8, maxChars: 60_000 },
  compactionEnabled: true,
};

export const silentLogger = pino({ level: 'silent' });

export async function createUserIn(database: TestDatabase, label = 'author'): Promise<string> {
  const user = await createUser(database.pool, {
    email: `${label}-${randomUUID()}@quill.test`,
    displayName: label,
  });
  return user.id;
}

export function fakeLlmClient(url: string): LlmClient {
  return createLlmClient({
    provider: {
      name: 'primary',
      baseUrl: url,
      apiKey: 'test',
      model: 'quill-fake-1',
      maxInputTokens: 128_000,
    },
    timeoutMs: 10_000,
  });
}

export function compilerFor(
  database: TestDatabase,
  settings: Partial<CompilerSettings> = {},
  llm: LlmClient | null = null,
) {
  const compile = createContextCompiler({
    pool: database.pool,
    llm,
    logger: silentLogger,
    settings: { ...DEFAULT_SETTINGS, ...settings },
  });
  // The reply does not wait for the Context Trace; tests read it right after.
  return async (request: ContextCompileRequest) => {
    const reply = await compile(request);
    await compile.settled();
    return reply;
  };
}

export interface TurnFixture {
  projectId: string;
  userId: string;
  sessionId: string;
}

export async function newSession(database: TestDatabase, projectId: string, userId: string): Promise<string> {
  return (await createSession(database.pool, { projectId, userId, title: 'test' })).sessionId;
}

/** Stores the author's message of a new run, as the gateway does, and returns the compile request. */
export async function startTurn(
  database: TestDatabase,
  fixture: TurnFixture,
  message: string,
  options: {
    role?: AgentRole;
    focus?: string | null;
    attached?: string[];
    step?: number;
    runId?: string;
  } = {},
): Promise<ContextCompileRequest> {
  const runId = options.runId ?? randomUUID();
  if (!options.runId) {
    await appendMessage(database.pool, {
      sessionId: fixture.sessionId,
      runId,
      role: 'user',
      content: message,
    });
  }
  return {
    v: 1,
    run_id: runId,
    session_id: fixture.sessionId,
    project_id: fixture.projectId,
    user_id: fixture.userId,
    role: options.role ?? 'writer',
    message,
    focus_file_id: options.focus ?? null,
    attached_file_ids: options.attached ?? [],
    ui_language: 'zh',
    step: options.step ?? 0,
  };
}

export async function traceOf(
  database: TestDatabase,
  runId: string,
  role?: AgentRole,
): Promise<ContextTrace> {
  const traces = await listContextTraces(database.pool, runId);
  const found = traces.filter((trace) => role === undefined || trace.role === role).at(-1);
  if (!found) throw new Error(`no trace for ${runId}`);
  return found.trace as ContextTrace;
}
