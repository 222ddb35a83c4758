import { QuillError } from '@quill/contracts';
import { findUserByApiKey, type User } from '@quill/db';
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';

declare module 'fastify' {
  interface FastifyRequest {
    user: User | undefined;
  }
}

/** The caller, or 401. Bearer API keys are stored hashed; the raw key is never logged. */
export function requireUser(request: FastifyRequest): User {
  if (!request.user) throw new QuillError('unauthorized');
  return request.user;
}

export function createAuthenticator(pool: Pool) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) throw new QuillError('unauthorized');
    const user = await findUserByApiKey(pool, match[1]!);
    if (!user) throw new QuillError('unauthorized');
    request.user = user;
  };
}
