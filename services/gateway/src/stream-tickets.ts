import { createHash, randomBytes } from 'node:crypto';
import { STREAM_TICKET_TTL_S } from '@quill/contracts';
import type { RedisClient, RedisKeys } from '@quill/redis';
import { z } from 'zod';

const Grant = z.object({ userId: z.string(), runId: z.string() });

export interface StreamTickets {
  /** A ticket that lets its holder open one stream of `runId` as `userId`, once, for a minute. */
  mint(userId: string, runId: string): Promise<{ ticket: string; expiresIn: number }>;
  /** The user a ticket was minted for, when it is for this run; the ticket is spent either way. */
  redeem(ticket: string, runId: string): Promise<string | undefined>;
}

const hash = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

/**
 * Stream tickets (README "Browser streaming"): a native EventSource cannot send a bearer header,
 * so the page mints a ticket with its token and puts the ticket in the stream URL. Unlike a
 * token in a URL, a ticket is scoped to one run, lives a minute and is spent on first use
 * (GETDEL), so a URL that ends up in a log or the browser history opens nothing. Kept in Redis so
 * any replica can redeem what another minted.
 */
export function createStreamTickets(redis: RedisClient, keys: RedisKeys): StreamTickets {
  return {
    async mint(userId, runId) {
      const ticket = randomBytes(32).toString('base64url');
      await redis.set(
        keys.streamTicket(hash(ticket)),
        JSON.stringify({ userId, runId }),
        'EX',
        STREAM_TICKET_TTL_S,
      );
      return { ticket, expiresIn: STREAM_TICKET_TTL_S };
    },
    async redeem(ticket, runId) {
      const stored = await redis.getdel(keys.streamTicket(hash(ticket)));
      if (!stored) return undefined;
      const grant = Grant.parse(JSON.parse(stored));
      return grant.runId === runId ? grant.userId : undefined;
    },
  };
}
