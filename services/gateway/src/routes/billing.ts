import { randomUUID } from 'node:crypto';
import { BusRequestError, requestReply } from '@quill/bus';
import {
  BillingGrantReply,
  BillingGrantRequest,
  GrantCreditsBody,
  type GrantCreditsResponse,
  isReplicaFailure,
  QuillError,
  type QuotaResponse,
  type UsageTodayResponse,
  UserIdParams,
} from '@quill/contracts';
import { getQuotaAccount, tokensUsedToday, usageTodayByModel } from '@quill/db';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/**
 * Quota and usage for the caller, and the admin credit grant.
 *
 * The reads go to Postgres directly rather than asking billing over `billing.balance`: they are
 * single-statement reads of the ledger billing writes (usage_records, quota_accounts), the
 * gateway already holds a pool for auth and ACL, and a NATS hop would add a failure mode (no
 * billing replica → the author cannot even see their balance) without adding a guarantee. The
 * grant moves credits, so it is billing's (`billing.grant`, docs/architecture.md "What each
 * service owns"); one grant id per admin request keeps a retried request from granting twice.
 */
export function registerBillingRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  const { pool } = dependencies;
  const defaultCredits = dependencies.settings.defaultCredits;

  app.get('/usage/today', async (request): Promise<UsageTodayResponse> => {
    const user = requireUser(request);
    const rows = await usageTodayByModel(pool, user.id);
    const byModel = rows.map((row) => ({
      provider: row.provider,
      model: row.model,
      calls: row.calls,
      estimated_calls: row.estimatedCalls,
      prompt_tokens: row.promptTokens,
      completion_tokens: row.completionTokens,
      total_tokens: row.totalTokens,
    }));
    const sum = (key: 'calls' | 'estimated_calls' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens') =>
      byModel.reduce((total, row) => total + row[key], 0);
    return {
      day: new Date().toISOString().slice(0, 10),
      total: {
        calls: sum('calls'),
        estimated_calls: sum('estimated_calls'),
        prompt_tokens: sum('prompt_tokens'),
        completion_tokens: sum('completion_tokens'),
        total_tokens: sum('total_tokens'),
      },
      by_model: byModel,
    };
  });

  app.get('/quota', async (request): Promise<QuotaResponse> => {
    const user = requireUser(request);
    const [account, usedToday] = await Promise.all([
      getQuotaAccount(pool, user.id),
      tokensUsedToday(pool, user.id),
    ]);
    // No account yet: the first reservation opens one with the default balance.
    return {
      credits: account?.credits ?? defaultCredits,
      daily_token_cap: account?.dailyTokenCap ?? null,
      used_today_tokens: usedToday,
    };
  });

  app.post('/admin/users/:userId/credits', async (request): Promise<GrantCreditsResponse> => {
    const admin = requireUser(request);
    // Checked before the input, so a non-admin learns nothing about users or body rules.
    if (admin.role !== 'admin') throw new QuillError('forbidden');
    const { userId } = parseInput(UserIdParams, request.params);
    const { credits } = parseInput(GrantCreditsBody, request.body);
    const result = await requestReply(
      dependencies.bus,
      dependencies.bus.names.billingGrant,
      { request: BillingGrantRequest, reply: BillingGrantReply },
      { v: 1, grant_id: randomUUID(), user_id: userId, credits, granted_by: admin.id },
      {
        timeoutMs: dependencies.settings.requestTimeoutMs,
        deadlineMs: dependencies.settings.requestDeadlineMs,
        retryReply: isReplicaFailure,
      },
    ).catch((error: unknown) => {
      if (error instanceof BusRequestError) throw new QuillError('service_unavailable', { cause: error });
      throw error;
    });
    if (!result.ok) {
      if (result.code === 'not_found') throw new QuillError('not_found');
      if (result.code === 'invalid_request')
        throw new QuillError('invalid_request', {
          details: { fields: { credits: ['the balance would exceed the largest storable amount'] } },
        });
      throw new QuillError('service_unavailable');
    }
    request.log.info({ user_id: userId, granted: credits, credits: result.credits }, 'credits granted');
    return { user_id: userId, credits: result.credits };
  });
}
