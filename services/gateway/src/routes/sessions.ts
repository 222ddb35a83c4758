import { PageQuery, ProjectIdParams, QuillError, SessionIdParams, UpdateSessionBody } from '@quill/contracts';
import {
  getActiveRunForSession,
  getSessionForUser,
  listSessionMessagesPage,
  listSessionRunsPage,
  listSessionsPage,
} from '@quill/db';
import { renameSession, softDeleteSession } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, requireOwnSession, requireProjectRole } from '../product/access.ts';
import { decodeSeqCursor, decodeTimeCursor, page } from '../product/pagination.ts';
import { messageView, runSummaryView, sessionView } from '../product/views.ts';

/**
 * Sessions and their history (README "HTTP API"). A session is its author's own conversation:
 * every route here is 404 for anyone else, project co-members included.
 */
export function registerSessionRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
): void {
  const { pool } = dependencies;

  app.get('/projects/:projectId/sessions', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const query = parseInput(PageQuery, request.query);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, ANY_MEMBER);
    const after = decodeTimeCursor(query.cursor);
    const rows = await listSessionsPage(pool, projectId, user.id, {
      limit: query.limit + 1,
      ...(after ? { after } : {}),
    });
    const { items, next_cursor } = page(rows, query.limit, (row) => ({
      at: row.updatedAt,
      id: row.sessionId,
    }));
    return { sessions: items.map(sessionView), next_cursor };
  });

  // The flat fields are what this route answered before `session` was added; kept for clients.
  app.get('/sessions/:sessionId', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const view = sessionView(await requireOwnSession(pool, requireUser(request).id, sessionId));
    return { ...view, session: view };
  });

  app.patch('/sessions/:sessionId', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const { title } = parseInput(UpdateSessionBody, request.body);
    const user = requireUser(request);
    await requireOwnSession(pool, user.id, sessionId);
    if (!(await renameSession(pool, sessionId, title))) throw new QuillError('not_found');
    return { session: sessionView((await getSessionForUser(pool, sessionId, user.id))!) };
  });

  app.delete('/sessions/:sessionId', async (request, reply) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    await requireOwnSession(pool, requireUser(request).id, sessionId);
    if (await getActiveRunForSession(pool, sessionId)) throw new QuillError('session_busy');
    if (!(await softDeleteSession(pool, sessionId))) throw new QuillError('not_found');
    return reply.code(204).send();
  });

  app.get('/sessions/:sessionId/messages', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const query = parseInput(PageQuery, request.query);
    await requireOwnSession(pool, requireUser(request).id, sessionId);
    const afterSeq = decodeSeqCursor(query.cursor);
    const rows = await listSessionMessagesPage(pool, sessionId, {
      limit: query.limit + 1,
      ...(afterSeq !== undefined ? { afterSeq } : {}),
    });
    const { items, next_cursor } = page(rows, query.limit, (row) => ({ seq: row.seq }));
    return { messages: items.map(messageView), next_cursor };
  });

  app.get('/sessions/:sessionId/runs', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const query = parseInput(PageQuery, request.query);
    await requireOwnSession(pool, requireUser(request).id, sessionId);
    const after = decodeTimeCursor(query.cursor);
    const rows = await listSessionRunsPage(pool, sessionId, {
      limit: query.limit + 1,
      ...(after ? { after } : {}),
    });
    const { items, next_cursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.runId }));
    return { runs: items.map(runSummaryView), next_cursor };
  });
}
