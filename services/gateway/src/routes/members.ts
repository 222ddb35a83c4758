import {
  AddMemberBody,
  ProjectIdParams,
  ProjectMemberParams,
  QuillError,
  UpdateMemberBody,
} from '@quill/contracts';
import {
  findUserByEmail,
  getProjectMember,
  getUser,
  listProjectMembers,
  type ProjectMember,
} from '@quill/db';
import { insertProjectMember, removeProjectMember, setProjectMemberRole } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, OWNER, requireProjectRole } from '../product/access.ts';

/**
 * A project's members (README "HTTP API"): the owner invites editors and viewers by user id or
 * e-mail, changes and removes them; a member may leave; the owner's own membership is fixed
 * (403), so a project always has its owner.
 */
export function registerMemberRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
): void {
  const { pool } = dependencies;

  app.get('/projects/:projectId/members', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return { members: (await listProjectMembers(pool, projectId)).map(memberView) };
  });

  app.post('/projects/:projectId/members', async (request, reply) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(AddMemberBody, request.body);
    await requireProjectRole(pool, requireUser(request).id, projectId, OWNER);
    const invitee = body.user_id
      ? await getUser(pool, body.user_id)
      : await findUserByEmail(pool, body.email!);
    if (!invitee) throw new QuillError('not_found');
    if (!(await insertProjectMember(pool, projectId, invitee.id, body.role)))
      throw new QuillError('member_exists');
    return reply
      .code(201)
      .send({ member: memberView((await getProjectMember(pool, projectId, invitee.id))!) });
  });

  app.patch('/projects/:projectId/members/:userId', async (request) => {
    const { projectId, userId } = parseInput(ProjectMemberParams, request.params);
    const { role } = parseInput(UpdateMemberBody, request.body);
    await requireProjectRole(pool, requireUser(request).id, projectId, OWNER);
    const target = await requireMember(pool, projectId, userId);
    if (target.role === 'owner') throw new QuillError('forbidden');
    await setProjectMemberRole(pool, projectId, userId, role);
    return { member: memberView((await getProjectMember(pool, projectId, userId))!) };
  });

  app.delete('/projects/:projectId/members/:userId', async (request, reply) => {
    const { projectId, userId } = parseInput(ProjectMemberParams, request.params);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, user.id === userId ? ANY_MEMBER : OWNER);
    const target = await requireMember(pool, projectId, userId);
    if (target.role === 'owner') throw new QuillError('forbidden');
    if (!(await removeProjectMember(pool, projectId, userId))) throw new QuillError('not_found');
    return reply.code(204).send();
  });
}

async function requireMember(pool: GatewayDependencies['pool'], projectId: string, userId: string) {
  const member = await getProjectMember(pool, projectId, userId);
  if (!member) throw new QuillError('not_found');
  return member;
}

function memberView(member: ProjectMember) {
  return { user_id: member.userId, email: member.email, display_name: member.displayName, role: member.role };
}
