import { type Bus, serveRequests } from '@quill/bus';
import {
  type BillingGrantReply,
  BillingGrantRequest,
  BillingGrantReply as GrantReply,
} from '@quill/contracts';
import { withTransaction } from '@quill/db';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

// The balance column is a Postgres integer; a grant that would pass it is refused, not wrapped.
const MAX_BALANCE = 2_147_483_647;

export type GrantResult = { ok: true; credits: number } | { ok: false; reason: 'no_such_user' | 'overflow' };

/**
 * Adds `credits` (> 0) to the user's balance, opening the account with `defaultCredits` first
 * when they have none, and records who granted it under `grantId`. Billing alone moves credits
 * (docs/architecture.md "What each service owns"); the gateway asks with `billing.grant`. The
 * grant id makes a retried request (a lost reply) add nothing the second time.
 */
export async function grantCredits(
  pool: Pool,
  input: { grantId: string; userId: string; credits: number; grantedBy: string; defaultCredits: number },
): Promise<GrantResult> {
  return withTransaction(pool, async (client): Promise<GrantResult> => {
    const user = await client.query('SELECT 1 FROM users WHERE id = $1', [input.userId]);
    if (user.rowCount !== 1) return { ok: false, reason: 'no_such_user' };
    const logged = await client.query(
      `INSERT INTO credit_grants (id, user_id, granted_by, credits) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO NOTHING`,
      [input.grantId, input.userId, input.grantedBy, input.credits],
    );
    if (logged.rowCount !== 1) {
      const { rows } = await client.query<{ credits: number }>(
        'SELECT credits FROM quota_accounts WHERE user_id = $1',
        [input.userId],
      );
      return { ok: true, credits: rows[0]?.credits ?? input.defaultCredits };
    }
    const { rows } = await client.query<{ credits: number }>(
      `INSERT INTO quota_accounts AS q (user_id, credits)
       SELECT $1, $3::integer + $2::integer WHERE $3::bigint + $2::bigint <= $4
       ON CONFLICT (user_id) DO UPDATE SET credits = q.credits + $2::integer, updated_at = now()
         WHERE q.credits::bigint + $2::bigint <= $4
       RETURNING q.credits`,
      [input.userId, input.credits, input.defaultCredits, MAX_BALANCE],
    );
    // Overflow: nothing added; throwing rolls the audit row back with it.
    if (!rows[0]) throw new GrantOverflow();
    return { ok: true, credits: rows[0].credits };
  }).catch((error: unknown): GrantResult => {
    if (error instanceof GrantOverflow) return { ok: false, reason: 'overflow' };
    throw error;
  });
}

class GrantOverflow extends Error {}

export function serveGrants(bus: Bus, pool: Pool, settings: { defaultCredits: number }, logger: Logger) {
  return serveRequests(
    bus,
    bus.names.billingGrant,
    { request: BillingGrantRequest, reply: GrantReply },
    {
      async handle(request): Promise<BillingGrantReply> {
        const result = await grantCredits(pool, {
          grantId: request.grant_id,
          userId: request.user_id,
          credits: request.credits,
          grantedBy: request.granted_by,
          defaultCredits: settings.defaultCredits,
        });
        if (result.ok) return { v: 1, ok: true, credits: result.credits };
        return { v: 1, ok: false, code: result.reason === 'no_such_user' ? 'not_found' : 'invalid_request' };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_request' },
      failureReply: { v: 1, ok: false, code: 'service_unavailable' },
    },
    logger,
  );
}
