import {
  ProjectIdParams,
  ProjectInfoBody,
  QuillError,
  StateCommitsQuery,
  TaskBoardBody,
} from '@quill/contracts';
import { type CommitOutcome, listStateCommits, readState, type StateKey, withTransaction } from '@quill/db';
import { commitState } from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, requireProjectRole, WRITERS } from '../product/access.ts';

/**
 * The project's info and task board as the author reads and writes them, and the commit log of
 * every structured key (docs/kernel.md "Commits with rev"). Writes go through the one commit
 * path the agent's update_project uses: `expected_version` is the rev the author read; a stale
 * one is merged per key / per task, or refused with 409 `version_conflict` naming the conflicts
 * and carrying what stands — as the notes route does.
 */
export function registerProjectStateRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
): void {
  const { pool } = dependencies;
  // The wire name of each key's value, as the notes route answers `notes`.
  const fields = { info: 'info', task_board: 'tasks' } as const;

  const read = async (projectId: string, key: 'info' | 'task_board') => {
    const state = await readState(pool, projectId, key);
    if (!state) throw new QuillError('not_found');
    return { [fields[key]]: state.value, version: state.rev };
  };

  const write = async <K extends 'info' | 'task_board'>(
    userId: string,
    projectId: string,
    key: K,
    value: K extends 'info' ? Record<string, unknown> : unknown[],
    baseRev: number,
  ) => {
    const { memberRole } = await requireProjectRole(pool, userId, projectId, WRITERS);
    const outcome = (await withTransaction(pool, (client) =>
      commitState(client, {
        projectId,
        key: key as StateKey,
        baseRev,
        value,
        writer: { kind: 'author', userId, memberRole },
      }),
    )) as CommitOutcome<unknown>;
    if (outcome.kind === 'not_found') throw new QuillError('not_found');
    if (outcome.kind === 'forbidden') throw new QuillError('forbidden');
    if (outcome.kind === 'conflict') {
      throw new QuillError('version_conflict', {
        details: {
          current: { [fields[key]]: outcome.value, version: outcome.rev },
          conflicts: outcome.conflicts,
        },
      });
    }
    return { [fields[key]]: outcome.value, version: outcome.rev, merged: outcome.merged };
  };

  app.get('/projects/:projectId/info', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return read(projectId, 'info');
  });

  // The whole info, as the notes editor saves the whole notes: a key the author leaves out is
  // removed (a key only the agent changed meanwhile is merged in, not removed).
  app.put('/projects/:projectId/info', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(ProjectInfoBody, request.body);
    return write(requireUser(request).id, projectId, 'info', body.info, body.expected_version);
  });

  app.get('/projects/:projectId/task-board', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return read(projectId, 'task_board');
  });

  app.put('/projects/:projectId/task-board', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(TaskBoardBody, request.body);
    return write(requireUser(request).id, projectId, 'task_board', body.tasks, body.expected_version);
  });

  app.get('/projects/:projectId/commits', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const query = parseInput(StateCommitsQuery, request.query);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    const commits = await listStateCommits(pool, projectId, query.key ?? null, query.limit);
    return {
      commits: commits.map((commit) => ({
        key: commit.key,
        rev: commit.rev,
        base_rev: commit.baseRev,
        source: commit.source,
        merged: commit.merged,
        value: commit.value,
        created_at: new Date(commit.createdAt).toISOString(),
      })),
    };
  });
}
