import { QuillError, StreamTicket } from '@quill/contracts';
import type { User } from '@quill/db';
import { userForExternalIdentity } from '@quill/db/gateway';
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import type { CredentialCache } from './credential-cache.ts';
import type { StreamTickets } from './stream-tickets.ts';
import type { TokenService } from './tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user: User | undefined;
    /** The API key the caller authenticated with (per-key usage); unset for other credentials. */
    apiKeyId: string | undefined;
  }
  interface FastifyContextConfig {
    /** The route also accepts a stream ticket for its `:runId` in `?ticket=` (EventSource). */
    streamTicket?: boolean;
  }
}

/** The caller, or 401. */
export function requireUser(request: FastifyRequest): User {
  if (!request.user) throw new QuillError('unauthorized');
  return request.user;
}

const API_KEY_PREFIX = 'qk_';

/**
 * Bearer auth: an API key (stored hashed; the raw key is never logged), a short-lived token
 * minted from one, or an external identity provider's token (its user made on first sign-in).
 * On a route marked `streamTicket`, without a bearer: a stream ticket for that run
 * (stream-tickets.ts). Who an API key or a user id names comes from `credentials`, which
 * remembers it briefly (credential-cache.ts).
 */
export function createAuthenticator(
  pool: Pool,
  credentials: CredentialCache,
  tokens: TokenService,
  tickets: StreamTickets,
) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const credential = header ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
    let user: User | null = null;
    if (!credential) {
      const presented = ticketOf(request);
      if (!presented) throw new QuillError('unauthorized');
      const userId = await tickets.redeem(presented.ticket, presented.runId);
      user = userId ? await credentials.user(userId) : null;
    } else if (credential.startsWith(API_KEY_PREFIX)) {
      const found = await credentials.keyHolder(credential);
      user = found?.user ?? null;
      request.apiKeyId = found?.keyId;
    } else {
      const verified = await tokens.verify(credential);
      if (verified?.kind === 'local') user = await credentials.user(verified.userId);
      else if (verified?.kind === 'external') user = await userForExternalIdentity(pool, verified.identity);
    }
    if (!user) throw new QuillError('unauthorized');
    request.user = user;
  };
}

function ticketOf(request: FastifyRequest): { ticket: string; runId: string } | undefined {
  if (!request.routeOptions.config.streamTicket) return undefined;
  const ticket = StreamTicket.safeParse((request.query as Record<string, unknown> | undefined)?.ticket);
  const runId = (request.params as Record<string, unknown> | undefined)?.runId;
  return ticket.success && typeof runId === 'string' ? { ticket: ticket.data, runId } : undefined;
}
