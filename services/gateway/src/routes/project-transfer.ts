import { ExportQuery, PROJECT_ZIP_LIMITS, ProjectIdParams, QuillError } from '@quill/contracts';
import { getProjectWorkspace, listFiles } from '@quill/db';
import { importProject } from '@quill/db/gateway';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, requireProjectRole } from '../product/access.ts';
import { exportedFiles, pendingTexts } from '../product/pending-text.ts';
import {
  ProjectArchiveError,
  parseArchive,
  renderArchive,
  renderManuscript,
} from '../product/project-archive.ts';
import { projectView } from '../product/views.ts';
import { SkillPackageError } from '../skills/skill-package-error.ts';
import { readZipEntries } from '../skills/zip-reader.ts';
import { writeZip } from '../skills/zip-writer.ts';

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

/**
 * Export and import (README "HTTP API"): a project as a zip any member may download, the
 * manuscript as one Markdown file, and a zip imported as a new project of the caller's, read with
 * the skill zip reader's safety rules. A plugin so that the zip body parser stays inside it.
 */
export function projectTransferRoutes(dependencies: Pick<GatewayDependencies, 'pool'>): FastifyPluginAsync {
  const { pool } = dependencies;
  // Unaccepted AI text is labelled, or with accepted_only left out (docs/kernel.md "Artifacts
  // and acceptance").
  const filesToExport = async (projectId: string, acceptedOnly: boolean) => {
    const files = await listFiles(pool, projectId);
    return exportedFiles(files, await pendingTexts(pool, projectId, files), acceptedOnly);
  };
  return async (app: FastifyInstance) => {
    app.addContentTypeParser(
      ZIP_TYPES,
      { parseAs: 'buffer', bodyLimit: PROJECT_ZIP_LIMITS.maxZipBytes },
      (_request, body, done) => done(null, body),
    );

    app.get('/projects/:projectId/export', async (request, reply) => {
      const { projectId } = parseInput(ProjectIdParams, request.params);
      const query = parseInput(ExportQuery, request.query);
      const { project } = await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
      const workspace = await getProjectWorkspace(pool, projectId);
      const files = await filesToExport(projectId, query.accepted_only);
      const zip = await writeZip(renderArchive({ ...project, info: workspace?.info ?? {} }, files));
      return attachment(reply, 'application/zip', `project-${projectId}.zip`).send(zip);
    });

    app.get('/projects/:projectId/manuscript.md', async (request, reply) => {
      const { projectId } = parseInput(ProjectIdParams, request.params);
      const query = parseInput(ExportQuery, request.query);
      const { project } = await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
      const files = await filesToExport(projectId, query.accepted_only);
      const text = renderManuscript(project.title, files, project.language);
      return attachment(reply, 'text/markdown; charset=utf-8', `manuscript-${projectId}.md`).send(text);
    });

    app.post('/projects/import', async (request, reply) => {
      const user = requireUser(request);
      if (!Buffer.isBuffer(request.body)) {
        throw new QuillError('invalid_request', {
          details: { fields: { zip: ['send the zip as application/zip'] } },
        });
      }
      try {
        const archive = parseArchive(await readZipEntries(request.body, PROJECT_ZIP_LIMITS));
        const project = await importProject(pool, user.id, { ...archive.project, files: archive.files });
        request.log.info({ project_id: project.id, files: archive.files.length }, 'project imported');
        return reply.code(201).send({ project: projectView({ project, memberRole: 'owner' }) });
      } catch (error) {
        if (!(error instanceof SkillPackageError || error instanceof ProjectArchiveError)) throw error;
        request.log.warn({ rule: error.rule, path: error.path }, 'project zip refused');
        throw new QuillError('invalid_request', {
          details: { fields: { zip: [`${error.rule}: ${error.message}`] } },
        });
      }
    });
  };
}

function attachment(reply: FastifyReply, type: string, filename: string): FastifyReply {
  return reply
    .header('content-type', type)
    .header('content-disposition', `attachment; filename="${filename}"`);
}
