import { randomUUID } from 'node:crypto';
import { publishEnvelope } from '@quill/bus';
import {
  AgentSuggestBody,
  type AgentSuggestResponse,
  msgIds,
  QuillError,
  UsageEnvelope,
} from '@quill/contracts';
import {
  getProjectForUser,
  getQuotaAccount,
  getSessionForUser,
  listFiles,
  listMessages,
  tokensUsedToday,
  type User,
} from '@quill/db';
import { collectChat, type LlmAttempt, LlmCallError, quillErrorCodeFor } from '@quill/llm';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { modelRouteLimit } from '../rate-limit.ts';
import { buildSuggestionMessages, parseSuggestions } from '../suggestions.ts';

/**
 * `POST /agent/suggest`: next-step suggestions. Like every endpoint that can trigger a model call
 * (docs/agent-behaviour.md 请求与流 1) it has auth (the scope it is registered in), project access (404; a
 * viewer 403), the per-user rate limit and the daily cost cap; the call goes through the same
 * failover client as the workers, and each attempt's usage is published to the ledger like a run's.
 */
export function registerSuggestRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  const { pool } = dependencies;

  app.post('/agent/suggest', modelRouteLimit, async (request): Promise<AgentSuggestResponse> => {
    const user = requireUser(request);
    const body = parseInput(AgentSuggestBody, request.body);
    const access = await getProjectForUser(pool, body.project_id, user.id);
    if (!access) throw new QuillError('not_found');
    // Viewers may read a project but not spend its model budget, as with runs.
    if (access.memberRole === 'viewer') throw new QuillError('forbidden');
    const session = body.session_id ? await getSessionForUser(pool, body.session_id, user.id) : undefined;
    if (session === null || (session && session.projectId !== body.project_id))
      throw new QuillError('not_found');
    await assertUnderCostCap(dependencies, user);
    const llm = dependencies.llm;
    if (!llm) throw new QuillError('service_unavailable');

    const [files, history] = await Promise.all([
      listFiles(pool, body.project_id),
      session ? listMessages(pool, session.sessionId, { limit: 6 }) : Promise.resolve([]),
    ]);
    // A suggestion call has no run; its own id keys its usage records and the fake LLM's scripts.
    const callId = randomUUID();
    const attempts: LlmAttempt[] = [];
    try {
      const result = await collectChat(
        llm.streamChat({
          messages: buildSuggestionMessages({ projectTitle: access.project.title, files, history }),
          role: 'suggest',
          runId: callId,
          ...(session ? { sessionId: session.sessionId } : {}),
          onAttempt: (attempt) => attempts.push(attempt),
        }),
      );
      return { suggestions: parseSuggestions(result.text) };
    } catch (error) {
      if (error instanceof LlmCallError) throw new QuillError(quillErrorCodeFor(error), { cause: error });
      throw error;
    } finally {
      await publishUsage(dependencies, user, callId, attempts, request.log);
    }
  });
}

async function assertUnderCostCap(dependencies: GatewayDependencies, user: User): Promise<void> {
  const account = await getQuotaAccount(dependencies.pool, user.id);
  if (account?.dailyTokenCap === null || account?.dailyTokenCap === undefined) return;
  if ((await tokensUsedToday(dependencies.pool, user.id)) >= account.dailyTokenCap) {
    throw new QuillError('cost_cap_reached');
  }
}

async function publishUsage(
  dependencies: GatewayDependencies,
  user: User,
  callId: string,
  attempts: readonly LlmAttempt[],
  logger: FastifyBaseLogger,
): Promise<void> {
  const { bus } = dependencies;
  for (const attempt of attempts) {
    await publishEnvelope(
      bus,
      bus.names.usage(callId),
      UsageEnvelope,
      {
        v: 1,
        run_id: callId,
        user_id: user.id,
        call_index: 0,
        attempt: attempt.index,
        role: 'suggest',
        provider: attempt.provider,
        model: attempt.model,
        usage: attempt.usage,
      },
      { msgId: msgIds.usage(callId, 0, attempt.index), quiet: true },
    ).catch((error: unknown) => logger.error({ err: error, call_id: callId }, 'suggest usage report failed'));
  }
}
