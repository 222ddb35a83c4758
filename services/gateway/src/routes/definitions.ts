import { QuillError, SessionIdParams } from '@quill/contracts';
import { getSessionForUser, sessionDefinitions, sessionSkillVersions, withTransaction } from '@quill/db';
import { upgradeSessionDefinitions, upgradeSessionSkills } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/**
 * Definitions and skill versions a session is pinned to, and the explicit upgrade to the current
 * ones (docs/kernel.md "Definitions and pinning"). A session is its owner's only: others get 404.
 */
export function registerDefinitionRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
) {
  const { pool } = dependencies;

  app.get('/sessions/:sessionId/definitions', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    if (!(await getSessionForUser(pool, sessionId, requireUser(request).id)))
      throw new QuillError('not_found');
    return sessionView(sessionId);
  });

  // Role definitions take effect from the session's next step (a step already running keeps what
  // it started with), skill versions from its next run (a run reads the versions it launched with).
  app.post('/sessions/:sessionId/definitions/upgrade', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    if (!(await getSessionForUser(pool, sessionId, requireUser(request).id)))
      throw new QuillError('not_found');
    await withTransaction(pool, async (client) => {
      await upgradeSessionDefinitions(client, sessionId);
      await upgradeSessionSkills(client, sessionId);
    });
    return sessionView(sessionId);
  });

  async function sessionView(sessionId: string) {
    const [definitions, skills] = await Promise.all([
      sessionDefinitions(pool, sessionId),
      sessionSkillVersions(pool, sessionId),
    ]);
    return { ...definitions, skills };
  }
}
