import {
  GrantCreditsBody,
  type GrantCreditsResponse,
  QuillError,
  type QuotaResponse,
  type UsageTodayResponse,
  UserIdParams,
} from '@quill/contracts';
import { getQuotaAccount, grantCredits, tokensUsedToday, usageTodayByModel } from '@quill/db';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/**
 * Quota and usage for the caller, and the admin credit grant.
 *
 * These read Postgres directly rather than asking billing over `billing.balance`: they are
 * single-statement reads of the ledger billing writes (usage_records, quota_accounts), the
 * gateway already holds a pool for auth and ACL, and a NATS hop would add a failure mode (no
 * billing replica → the author cannot even see their balance) without adding a guarantee. The
 * grant is one atomic UPDATE that can never drive a balance negative, so it needs no
 * coordination with reserve/settle either. Money that depends on a run still moves only in billing.
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
    const result = await grantCredits(pool, { userId, credits, grantedBy: admin.id, defaultCredits });
    if (!result.ok) {
      if (result.reason === 'no_such_user') throw new QuillError('not_found');
      throw new QuillError('invalid_request', {
        details: { fields: { credits: ['the balance would exceed the largest storable amount'] } },
      });
    }
    request.log.info({ user_id: userId, granted: credits, credits: result.credits }, 'credits granted');
    return { user_id: userId, credits: result.credits };
  });
}
