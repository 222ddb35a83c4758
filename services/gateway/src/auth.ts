import { QuillError } from '@quill/contracts';
import { findUserByApiKey, getUser, type User } from '@quill/db';
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import type { TokenService } from './tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user: User | undefined;
  }
}

/** The caller, or 401. */
export function requireUser(request: FastifyRequest): User {
  if (!request.user) throw new QuillError('unauthorized');
  return request.user;
}

const API_KEY_PREFIX = 'qk_';

/**
 * Bearer auth: an API key (stored hashed; the raw key is never logged) or a short-lived token
 * minted from one.
 */
export function createAuthenticator(pool: Pool, tokens: TokenService) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const credential = header ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
    if (!credential) throw new QuillError('unauthorized');
    let user: User | null = null;
    if (credential.startsWith(API_KEY_PREFIX)) {
      user = await findUserByApiKey(pool, credential);
    } else {
      const userId = await tokens.verify(credential);
      user = userId ? await getUser(pool, userId) : null;
    }
    if (!user) throw new QuillError('unauthorized');
    request.user = user;
  };
}
