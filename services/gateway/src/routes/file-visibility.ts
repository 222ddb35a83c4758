import { FileVisibilityBody, ProjectFileParams, QuillError } from '@quill/contracts';
import { getProjectForUser } from '@quill/db';
import { setFileVisibility } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/**
 * Sets which agent roles may see a file (docs/agent-behaviour.md): `all`, `author_only` or
 * `private_to:<role>[,<role>…]`. The context compiler and query_files enforce it. Members who may
 * write the project may change it; viewers get 403, non-members 404.
 */
export function registerFileVisibilityRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
) {
  app.put('/projects/:projectId/files/:fileId/visibility', async (request) => {
    const user = requireUser(request);
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    const { visibility } = parseInput(FileVisibilityBody, request.body);
    const access = await getProjectForUser(dependencies.pool, projectId, user.id);
    if (!access) throw new QuillError('not_found');
    if (access.memberRole === 'viewer') throw new QuillError('forbidden');
    if (!(await setFileVisibility(dependencies.pool, projectId, fileId, visibility)))
      throw new QuillError('not_found');
    return { file_id: fileId, visibility };
  });
}
