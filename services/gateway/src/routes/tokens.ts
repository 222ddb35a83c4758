import { QuillError, TokenRequestBody } from '@quill/contracts';
import { findUserByApiKey } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { parseInput } from '../http-errors.ts';
import type { TokenService } from '../tokens.ts';

/** `POST /auth/token`: exchanges an API key for a short-lived bearer token. */
export function registerTokenRoutes(app: FastifyInstance, pool: Pool, tokens: TokenService): void {
  app.post('/auth/token', async (request) => {
    const { api_key: apiKey } = parseInput(TokenRequestBody, request.body);
    const user = await findUserByApiKey(pool, apiKey);
    if (!user) throw new QuillError('unauthorized');
    const { token, expiresIn } = await tokens.issue(user.id);
    return { access_token: token, token_type: 'Bearer', expires_in: expiresIn };
  });
}
