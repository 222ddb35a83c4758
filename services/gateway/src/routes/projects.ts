import {
  CreateProjectBody,
  ListProjectsQuery,
  PROJECT_NOTES_MAX_CHARS,
  ProjectIdParams,
  ProjectNotesBody,
  QuillError,
  UpdateProjectBody,
} from '@quill/contracts';
import { listProjectsPage, withTransaction } from '@quill/db';
import {
  commitProjectNotes,
  createProject,
  restoreProject,
  softDeleteProject,
  updateProject,
} from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, OWNER, requireProjectRole, WRITERS } from '../product/access.ts';
import { decodeTimeCursor, page } from '../product/pagination.ts';
import { projectView } from '../product/views.ts';

/**
 * The author's projects (README "HTTP API"): create, list, read, rename, archive, delete (soft,
 * restorable for PROJECT_RESTORE_DAYS) and the notes the agent keeps with update_project.
 * Editors change a project; archiving, deleting and restoring it are the owner's.
 */
export function registerProjectRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool' | 'settings'>,
): void {
  const { pool } = dependencies;

  app.get('/projects', async (request) => {
    const user = requireUser(request);
    const query = parseInput(ListProjectsQuery, request.query);
    const after = decodeTimeCursor(query.cursor);
    const rows = await listProjectsPage(pool, user.id, {
      archived: query.archived,
      limit: query.limit + 1,
      ...(after ? { after } : {}),
    });
    const { items, next_cursor } = page(rows, query.limit, (row) => ({
      at: row.project.updatedAt,
      id: row.project.id,
    }));
    return { projects: items.map(projectView), next_cursor };
  });

  app.post('/projects', async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(CreateProjectBody, request.body);
    const project = await createProject(pool, {
      ownerId: user.id,
      title: body.title,
      projectType: body.project_type,
      language: body.language,
      artifactAcceptance: body.artifact_acceptance,
    });
    return reply.code(201).send({ project: projectView({ project, memberRole: 'owner' }) });
  });

  app.get('/projects/:projectId', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    return {
      project: projectView(await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER)),
    };
  });

  app.patch('/projects/:projectId', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(UpdateProjectBody, request.body);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, body.archived === undefined ? WRITERS : OWNER);
    const project = await updateProject(pool, projectId, {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.project_type !== undefined ? { projectType: body.project_type } : {}),
      ...(body.language !== undefined ? { language: body.language } : {}),
      ...(body.archived !== undefined ? { archived: body.archived } : {}),
    });
    if (!project) throw new QuillError('not_found');
    return { project: projectView(await requireProjectRole(pool, user.id, projectId, ANY_MEMBER)) };
  });

  app.delete('/projects/:projectId', async (request, reply) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, OWNER);
    if (!(await softDeleteProject(pool, projectId))) throw new QuillError('not_found');
    request.log.info({ project_id: projectId }, 'project deleted (restorable)');
    return reply.code(204).send();
  });

  // Restoring a project that is not deleted is a no-op that answers it; past the restore period
  // it is gone for good (404).
  app.post('/projects/:projectId/restore', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const user = requireUser(request);
    const membership = await requireProjectRole(pool, user.id, projectId, OWNER, { includeDeleted: true });
    if (membership.project.deletedAt !== null) {
      const restored = await restoreProject(pool, projectId, dependencies.settings.projectRestoreDays);
      if (!restored) throw new QuillError('not_found');
    }
    return { project: projectView(await requireProjectRole(pool, user.id, projectId, OWNER)) };
  });

  app.get('/projects/:projectId/notes', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const { project } = await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return { notes: project.notes, version: project.notesVersion };
  });

  // The author's editor saves the whole field: what they save is theirs, markers included. It is
  // a commit with rev (docs/kernel.md "Commits with rev"): `expected_version` is the rev the
  // author read; a stale one whose change is disjoint from the newer one (an agent update, a
  // co-author) is merged, an overlapping one is 409 `version_conflict` with the notes that stand.
  app.put('/projects/:projectId/notes', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(ProjectNotesBody, request.body);
    const user = requireUser(request);
    const { memberRole } = await requireProjectRole(pool, user.id, projectId, WRITERS);
    const outcome = await withTransaction(pool, (client) =>
      commitProjectNotes(client, {
        projectId,
        baseRev: body.expected_version,
        value: body.notes,
        writer: { kind: 'author', userId: user.id, memberRole },
        maxChars: PROJECT_NOTES_MAX_CHARS,
      }),
    );
    if (outcome.kind === 'not_found') throw new QuillError('not_found');
    if (outcome.kind === 'forbidden') throw new QuillError('forbidden');
    if (outcome.kind === 'conflict') {
      throw new QuillError('version_conflict', {
        details: { current: { notes: outcome.value, version: outcome.rev } },
      });
    }
    return { notes: outcome.value, version: outcome.rev };
  });
}
