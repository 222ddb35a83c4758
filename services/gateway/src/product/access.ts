import { QuillError } from '@quill/contracts';
import {
  getProjectForUser,
  getSessionForUser,
  type ProjectMembership,
  type ProjectRole,
  type Session,
} from '@quill/db';
import type { Pool } from 'pg';

/**
 * The project ACL (README "HTTP API"): a project the caller is not a member of is 404 (its
 * existence never leaks); a member whose role may not do this is 403.
 */
export async function requireProjectRole(
  pool: Pool,
  userId: string,
  projectId: string,
  allowed: readonly ProjectRole[],
  options: { includeDeleted?: boolean } = {},
): Promise<ProjectMembership> {
  const membership = await getProjectForUser(pool, projectId, userId, options);
  if (!membership) throw new QuillError('not_found');
  if (!allowed.includes(membership.memberRole)) throw new QuillError('forbidden');
  return membership;
}

export const ANY_MEMBER: readonly ProjectRole[] = ['owner', 'editor', 'viewer'];
export const WRITERS: readonly ProjectRole[] = ['owner', 'editor'];
export const OWNER: readonly ProjectRole[] = ['owner'];

/**
 * A session is its author's own: someone else's is 404, and so is one in a project the author
 * is no longer a member of (or that was deleted).
 */
export async function requireOwnSession(pool: Pool, userId: string, sessionId: string): Promise<Session> {
  const session = await getSessionForUser(pool, sessionId, userId);
  if (!session || !(await getProjectForUser(pool, session.projectId, userId)))
    throw new QuillError('not_found');
  return session;
}
