import {
  AcceptDraftBody,
  CreateFileBody,
  ProjectFileParams,
  ProjectFileVersionParams,
  ProjectIdParams,
  QuillError,
  RevertFileBody,
  UpdateFileBody,
} from '@quill/contracts';
import {
  type FileVersion,
  findDraftArtifact,
  getFile,
  getFileVersion,
  getProjectForUser,
  listFiles,
  listFileVersions,
  type ProjectFile,
  type User,
  withTransaction,
} from '@quill/db';
import {
  acceptArtifact,
  createFile,
  recordAiArtifact,
  saveFileContentIfVersion,
  setFileTitle,
  softDeleteFile,
} from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { reportSessionReviewed } from '../session-reviewed.ts';

/**
 * The author's own file API: list, read, create, save (an `author` version, optimistic with
 * `expected_version`), version history, revert (a new version) and delete. These are the author's
 * direct actions, so the chat-side protections (protected manuscripts) do not apply here; the
 * project ACL does: non-members get 404, viewers may read but not write (403).
 */
export function registerFileRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool' | 'bus' | 'settings'>,
): void {
  const { pool } = dependencies;

  app.get('/projects/:projectId/files', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProject(pool, requireUser(request), projectId, 'read');
    const files = await listFiles(pool, projectId);
    return { files: files.map((file) => fileBody(file, false)) };
  });

  app.post('/projects/:projectId/files', async (request, reply) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(CreateFileBody, request.body);
    await requireProject(pool, requireUser(request), projectId, 'write');
    const file = await createFile(pool, {
      projectId,
      title: body.title,
      fileType: body.file_type,
      folder: body.folder,
      content: body.content,
      source: 'author',
    });
    return reply.code(201).send({ file: fileBody(file, true) });
  });

  app.get('/projects/:projectId/files/:fileId', async (request) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    await requireProject(pool, requireUser(request), projectId, 'read');
    return { file: fileBody(await requireFile(pool, projectId, fileId), true) };
  });

  app.put('/projects/:projectId/files/:fileId', async (request) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    const body = parseInput(UpdateFileBody, request.body);
    await requireProject(pool, requireUser(request), projectId, 'write');
    await requireFile(pool, projectId, fileId);
    const saved = await withTransaction(pool, async (client) => {
      const version = await saveFileContentIfVersion(client, {
        projectId,
        fileId,
        content: body.content,
        expectedVersion: body.expected_version,
        source: 'author',
      });
      if (version !== null && body.title !== undefined) await setFileTitle(client, fileId, body.title);
      return version;
    });
    if (saved === null) throw new QuillError('version_conflict');
    return { file: fileBody(await requireFile(pool, projectId, fileId), true) };
  });

  app.get('/projects/:projectId/files/:fileId/versions', async (request) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    await requireProject(pool, requireUser(request), projectId, 'read');
    await requireFile(pool, projectId, fileId);
    return { versions: (await listFileVersions(pool, fileId)).map(versionBody) };
  });

  // The text of one version, for a diff against the current text (the list carries no text).
  app.get('/projects/:projectId/files/:fileId/versions/:version', async (request) => {
    const { projectId, fileId, version } = parseInput(ProjectFileVersionParams, request.params);
    await requireProject(pool, requireUser(request), projectId, 'read');
    await requireFile(pool, projectId, fileId);
    const found = await getFileVersion(pool, fileId, version);
    if (!found) throw new QuillError('not_found');
    return { version: { ...versionBody(found), content: found.content } };
  });

  app.post('/projects/:projectId/files/:fileId/revert', async (request) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    const body = parseInput(RevertFileBody, request.body);
    await requireProject(pool, requireUser(request), projectId, 'write');
    const current = await requireFile(pool, projectId, fileId);
    const target = await getFileVersion(pool, fileId, body.version);
    if (!target) throw new QuillError('not_found');
    const saved = await saveFileContentIfVersion(pool, {
      projectId,
      fileId,
      content: target.content,
      expectedVersion: body.expected_version ?? current.version,
      source: 'author',
    });
    if (saved === null) throw new QuillError('version_conflict');
    return { file: fileBody(await requireFile(pool, projectId, fileId), true), reverted_to: body.version };
  });

  // An AI draft is an artifact whose text sits next to its original (docs/kernel.md "Artifacts
  // and acceptance"): accepting it here is accepting that artifact, the one path for both routes.
  // The draft's text replaces the original as the author's own save, so the usual optimistic
  // check applies to the original; the draft goes away in the same transaction.
  app.post('/projects/:projectId/files/:fileId/accept-draft', async (request) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    const body = parseInput(AcceptDraftBody, request.body);
    const user = requireUser(request);
    await requireProject(pool, user, projectId, 'write');
    const draft = await requireFile(pool, projectId, fileId);
    if (draft.draftOf === null) throw new QuillError('not_found');
    const original = await requireFile(pool, projectId, draft.draftOf);
    const decision = await withTransaction(pool, async (client) => {
      // A draft that came in with an imported project has no artifact yet: it gets one now.
      if (!(await findDraftArtifact(client, draft.id))) {
        await recordAiArtifact(client, {
          projectId,
          runId: null,
          fileId: original.id,
          textFileId: draft.id,
          placement: 'draft',
          version: draft.version,
          baseVersion: null,
        });
      }
      const artifact = await findDraftArtifact(client, draft.id);
      return acceptArtifact(client, {
        projectId,
        artifactId: artifact!.id,
        userId: user.id,
        expectedVersion: body.expected_version,
      });
    });
    if (decision.kind !== 'decided') throw new QuillError('version_conflict');
    void reportSessionReviewed(dependencies, decision.artifact.runId, request.log);
    return {
      file: fileBody(await requireFile(pool, projectId, original.id), true),
      accepted_draft: draft.id,
    };
  });

  app.delete('/projects/:projectId/files/:fileId', async (request, reply) => {
    const { projectId, fileId } = parseInput(ProjectFileParams, request.params);
    await requireProject(pool, requireUser(request), projectId, 'write');
    if (!(await softDeleteFile(pool, projectId, fileId))) throw new QuillError('not_found');
    return reply.code(204).send();
  });
}

/** 404 for a project the caller cannot see (never leak existence), 403 for a viewer's write. */
async function requireProject(pool: Pool, user: User, projectId: string, access: 'read' | 'write') {
  const membership = await getProjectForUser(pool, projectId, user.id);
  if (!membership) throw new QuillError('not_found');
  if (access === 'write' && membership.memberRole === 'viewer') throw new QuillError('forbidden');
  return membership;
}

async function requireFile(pool: Pool, projectId: string, fileId: string): Promise<ProjectFile> {
  const file = await getFile(pool, projectId, fileId);
  if (!file) throw new QuillError('not_found');
  return file;
}

function fileBody(file: ProjectFile, withContent: boolean) {
  return {
    id: file.id,
    project_id: file.projectId,
    folder: file.folder,
    title: file.title,
    file_type: file.fileType,
    version: file.version,
    chars: file.content.length,
    author_saved: file.authorSaved,
    draft_of: file.draftOf,
    created_at: file.createdAt,
    updated_at: file.updatedAt,
    ...(withContent ? { content: file.content } : {}),
  };
}

function versionBody(version: FileVersion) {
  return {
    version: version.version,
    source: version.source,
    run_id: version.runId,
    chars: version.content.length,
    partial: version.partialReason !== null,
    partial_reason: version.partialReason,
    created_at: version.createdAt,
  };
}
