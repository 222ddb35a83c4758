import {
  QuillError,
  SKILL_ZIP_LIMITS,
  SkillNameParams,
  SkillPatchBody,
  type SkillView,
} from '@quill/contracts';
import { getSkill, listSkillResourceContents, listSkills, type SkillSummary } from '@quill/db';
import { deleteSkill, saveSkillPackage, setSkillEnabled } from '@quill/db/gateway';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { buildSkillPackage, renderSkillMarkdown, SKILL_FILE } from '../skills/skill-package.ts';
import { SkillPackageError } from '../skills/skill-package-error.ts';
import { readZipEntries } from '../skills/zip-reader.ts';
import { writeZip } from '../skills/zip-writer.ts';

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

/**
 * The caller's skills: import a zip (checked before anything is stored), list, enable or
 * disable, export as a zip, delete. A plugin so that the raw zip body parser stays inside it.
 */
export function skillRoutes(dependencies: GatewayDependencies): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.addContentTypeParser(
      ZIP_TYPES,
      { parseAs: 'buffer', bodyLimit: SKILL_ZIP_LIMITS.maxZipBytes },
      (_request, body, done) => done(null, body),
    );

    app.get('/skills', async (request) => {
      const user = requireUser(request);
      return { skills: (await listSkills(dependencies.pool, user.id)).map(view) };
    });

    app.post('/skills/import', async (request, reply) => {
      const user = requireUser(request);
      if (!Buffer.isBuffer(request.body)) {
        throw new QuillError('invalid_request', {
          details: { fields: { zip: ['send the zip as application/zip'] } },
        });
      }
      try {
        const skillPackage = buildSkillPackage(await readZipEntries(request.body));
        const skill = await saveSkillPackage(dependencies.pool, user.id, skillPackage);
        request.log.info({ skill: skill.name, resources: skill.resourceCount }, 'skill imported');
        return reply.code(201).send({ skill: view(skill) });
      } catch (error) {
        if (!(error instanceof SkillPackageError)) throw error;
        request.log.warn({ rule: error.rule, path: error.path }, 'skill zip refused');
        throw new QuillError('invalid_request', {
          details: { fields: { zip: [`${error.rule}: ${error.message}`] } },
        });
      }
    });

    app.patch('/skills/:name', async (request) => {
      const user = requireUser(request);
      const { name } = parseInput(SkillNameParams, request.params);
      const { enabled } = parseInput(SkillPatchBody, request.body);
      if (!(await setSkillEnabled(dependencies.pool, user.id, name, enabled)))
        throw new QuillError('not_found');
      return { skill: view((await getSkill(dependencies.pool, user.id, name))!) };
    });

    app.get('/skills/:name/export', async (request, reply) => {
      const user = requireUser(request);
      const { name } = parseInput(SkillNameParams, request.params);
      const skill = await getSkill(dependencies.pool, user.id, name);
      if (!skill) throw new QuillError('not_found');
      const resources = await listSkillResourceContents(dependencies.pool, skill.id);
      const zip = await writeZip([
        { path: `${skill.name}/${SKILL_FILE}`, content: renderSkillMarkdown(skill.metadata, skill.content) },
        ...resources.map((resource) => ({
          path: `${skill.name}/${resource.path}`,
          content: resource.content,
        })),
      ]);
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="${skill.name}.zip"`)
        .send(zip);
    });

    app.delete('/skills/:name', async (request, reply) => {
      const user = requireUser(request);
      const { name } = parseInput(SkillNameParams, request.params);
      if (!(await deleteSkill(dependencies.pool, user.id, name))) throw new QuillError('not_found');
      return reply.code(204).send();
    });
  };
}

function view(skill: SkillSummary): SkillView {
  return {
    name: skill.name,
    description: skill.description,
    enabled: skill.enabled,
    resource_count: skill.resourceCount,
    updated_at: skill.updatedAt,
    version: skill.version,
  };
}
