import { ApiKeyParams, CreateApiKeyBody, CreateUserBody, QuillError } from '@quill/contracts';
import { type ApiKeySummary, listApiKeys, PG_ERROR, pgErrorCode, type User } from '@quill/db';
import { createApiKey, createUser, revokeApiKey } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import type { CredentialCache } from '../credential-cache.ts';
import { parseInput } from '../http-errors.ts';

/**
 * Accounts and self-service API keys (README "HTTP API"): an admin creates users; a user mints
 * keys (the secret is in the creation response only, the table keeps its hash and a prefix),
 * lists them by prefix and revokes them. A revoked key stops working at once on every gateway
 * (`credentials.revoked`).
 */
export function registerAccountRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
  credentials: CredentialCache,
): void {
  const { pool } = dependencies;

  app.get('/me', async (request) => ({ user: userView(requireUser(request)) }));

  app.post('/admin/users', async (request, reply) => {
    const caller = requireUser(request);
    if (caller.role !== 'admin') throw new QuillError('forbidden');
    const body = parseInput(CreateUserBody, request.body);
    try {
      const user = await createUser(pool, {
        email: body.email,
        displayName: body.display_name,
        role: body.role,
      });
      request.log.info({ user_id: user.id, by: caller.id, role: user.role }, 'user created');
      return reply.code(201).send({ user: userView(user) });
    } catch (error) {
      if (pgErrorCode(error) === PG_ERROR.uniqueViolation)
        throw new QuillError('email_taken', { cause: error });
      throw error;
    }
  });

  app.get('/me/api-keys', async (request) => {
    const user = requireUser(request);
    return { api_keys: (await listApiKeys(pool, user.id)).map(keyView) };
  });

  app.post('/me/api-keys', async (request, reply) => {
    const user = requireUser(request);
    const { name } = parseInput(CreateApiKeyBody, request.body);
    const created = await createApiKey(pool, user.id, name);
    const stored = (await listApiKeys(pool, user.id)).find((key) => key.id === created.id)!;
    request.log.info({ key_id: created.id, prefix: stored.prefix }, 'api key created');
    return reply.code(201).send({ api_key: keyView(stored), secret: created.key });
  });

  app.delete('/me/api-keys/:keyId', async (request, reply) => {
    const user = requireUser(request);
    const { keyId } = parseInput(ApiKeyParams, request.params);
    if (!(await revokeApiKey(pool, user.id, keyId))) throw new QuillError('not_found');
    credentials.revoked(keyId);
    request.log.info({ key_id: keyId }, 'api key revoked');
    return reply.code(204).send();
  });
}

function userView(user: User) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    role: user.role,
    created_at: user.createdAt,
  };
}

function keyView(key: ApiKeySummary) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    usage: {
      runs: key.usage.runs,
      charged_runs: key.usage.chargedRuns,
      total_tokens: key.usage.totalTokens,
      today_tokens: key.usage.todayTokens,
    },
  };
}
