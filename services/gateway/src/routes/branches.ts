import {
  CreateBranchBody,
  QuillError,
  RegenerateBody,
  RestoreBody,
  SessionBranchParams,
  SessionIdParams,
} from '@quill/contracts';
import {
  activePathMessages,
  forkSnapshotRun,
  getBranch,
  getRunStartSnapshot,
  getSnapshot,
  listBranches,
  type User,
} from '@quill/db';
import { restoreSnapshot, setActiveBranch } from '@quill/db/gateway';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { type SwitchOutcome, type SwitchTarget, switchBranch } from '../branch-switch.ts';
import { parseInput } from '../http-errors.ts';
import { requireOwnSession, requireProjectRole, WRITERS } from '../product/access.ts';
import { branchView, NOTHING_RESTORED, restoredView, sendRestoreConflict } from '../product/restore-views.ts';
import { modelRouteLimit } from '../rate-limit.ts';
import { createRunLauncher } from '../run-launcher.ts';

/**
 * Branches of a session (README "Snapshots, undo and branches", docs/kernel.md "Branches"): list
 * them, fork after any message on the active path, switch between them (files follow), and
 * regenerate the last reply as a new run on a new branch, the old reply kept on its own. A
 * session is its author's own (404 for anyone else); changing branches needs owner or editor.
 */
export function registerBranchRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  const { pool } = dependencies;
  const launch = createRunLauncher(dependencies);
  const switching = {
    pool,
    redis: dependencies.redis,
    keys: dependencies.keys,
    sessionLockTtlMs: dependencies.settings.sessionLockTtlMs,
  };

  async function writableSession(user: User, sessionId: string) {
    const session = await requireOwnSession(pool, user.id, sessionId);
    await requireProjectRole(pool, user.id, session.projectId, WRITERS);
    return session;
  }

  async function switched(reply: FastifyReply, sessionId: string, outcome: SwitchOutcome, status: number) {
    if (outcome.kind === 'conflict') return sendRestoreConflict(reply, outcome.restore.conflicts);
    const branch = (await getBranch(pool, sessionId, outcome.branchId))!;
    const restored = outcome.restore?.kind === 'restored' ? restoredView(outcome.restore) : NOTHING_RESTORED;
    return reply.code(status).send({ branch: branchView(branch), restored });
  }

  app.get('/sessions/:sessionId/branches', async (request) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    await requireOwnSession(pool, requireUser(request).id, sessionId);
    return { branches: (await listBranches(pool, sessionId)).map(branchView) };
  });

  app.post('/sessions/:sessionId/branches', async (request, reply) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const body = parseInput(CreateBranchBody, request.body);
    const user = requireUser(request);
    const session = await writableSession(user, sessionId);
    const path = await activePathMessages(pool, sessionId);
    let forkSeq = 0;
    if (body.after_message_id !== null) {
      const message = path.find((entry) => entry.id === body.after_message_id);
      if (!message)
        throw new QuillError('invalid_request', {
          details: { fields: { after_message_id: ['not a message on the active branch of this session'] } },
        });
      forkSeq = message.seq;
    }
    const outcome = await switchBranch(switching, {
      sessionId,
      projectId: session.projectId,
      userId: user.id,
      force: body.force,
      branch: { forkSeq, baseSnapshotId: await forkBase(path, forkSeq) },
    });
    return switched(reply, sessionId, outcome, 201);
  });

  app.post('/sessions/:sessionId/branches/:branchId/activate', async (request, reply) => {
    const { sessionId, branchId } = parseInput(SessionBranchParams, request.params);
    const { force } = parseInput(RestoreBody, request.body);
    const user = requireUser(request);
    const session = await writableSession(user, sessionId);
    const outcome = await switchBranch(switching, {
      sessionId,
      projectId: session.projectId,
      userId: user.id,
      force,
      branch: { existing: branchId },
    });
    return switched(reply, sessionId, outcome, 200);
  });

  // The last reply again: the files go back to where its run started, a new branch forks just
  // before its prompt, and the prompt is sent again on it through the same launch path as
  // `/agent/stream`; the client follows the run with GET /agent/runs/:runId/stream.
  app.post('/sessions/:sessionId/regenerate', modelRouteLimit, async (request, reply) => {
    const { sessionId } = parseInput(SessionIdParams, request.params);
    const body = parseInput(RegenerateBody, request.body);
    const user = requireUser(request);
    const session = await writableSession(user, sessionId);
    const path = await activePathMessages(pool, sessionId);
    const lastPrompt = path.findLastIndex((message) => message.role === 'user');
    const prompt = path[lastPrompt];
    if (!prompt)
      throw new QuillError('invalid_request', {
        details: { fields: { sessionId: ['this session has no message to regenerate'] } },
      });
    const forkSeq = lastPrompt > 0 ? path[lastPrompt - 1]!.seq : 0;
    const target: SwitchTarget = {
      sessionId,
      projectId: session.projectId,
      userId: user.id,
      force: body.force,
      branch: { forkSeq, baseSnapshotId: await forkBase(path, forkSeq) },
    };
    const outcome = await switchBranch(switching, target);
    if (outcome.kind === 'conflict') return sendRestoreConflict(reply, outcome.restore.conflicts);
    let run: Awaited<ReturnType<typeof launch>>;
    try {
      run = await launch(
        user,
        {
          project_id: session.projectId,
          session_id: sessionId,
          message: prompt.content,
          attached_file_ids: [],
          generation_mode: body.generation_mode,
          ui_language: body.ui_language,
        },
        request.log,
        { apiKeyId: request.apiKeyId },
      );
    } catch (error) {
      await switchBack(outcome.previousBranchId, target, request.log);
      throw error;
    }
    request.log.info({ run_id: run.runId, branch_id: outcome.branchId }, 'reply regenerated on a new branch');
    const branch = (await getBranch(pool, sessionId, outcome.branchId))!;
    return reply.code(201).send({
      run_id: run.runId,
      session_id: sessionId,
      branch: branchView(branch),
      previous_branch_id: outcome.previousBranchId,
    });
  });

  /** Where a fork after `forkSeq` starts its files: the start snapshot of the next run on the path. */
  async function forkBase(
    path: Parameters<typeof forkSnapshotRun>[0],
    forkSeq: number,
  ): Promise<string | null> {
    const runId = forkSnapshotRun(path, forkSeq);
    return runId ? ((await getRunStartSnapshot(pool, runId))?.id ?? null) : null;
  }

  /**
   * A regenerate whose run could not start (busy, no credits) goes back to the branch it left,
   * with the files that branch had (its head was just recorded; nothing the author wrote since
   * is in between, the session lock kept runs out and the head is the latest state).
   */
  async function switchBack(previousBranchId: string, target: SwitchTarget, logger: FastifyBaseLogger) {
    try {
      const previous = await getBranch(pool, target.sessionId, previousBranchId);
      const head = previous?.headSnapshotId
        ? await getSnapshot(pool, target.projectId, previous.headSnapshotId)
        : null;
      if (head)
        await restoreSnapshot(pool, {
          projectId: target.projectId,
          snapshot: head,
          userId: target.userId,
          force: true,
        });
      await setActiveBranch(pool, target.sessionId, previousBranchId);
    } catch (error) {
      logger.error({ err: error, session_id: target.sessionId }, 'could not return to the previous branch');
    }
  }
}
