import {
  CreateSnapshotBody,
  ListSnapshotsQuery,
  ProjectIdParams,
  ProjectSnapshotParams,
  QuillError,
  RestoreBody,
  RunIdParams,
  SnapshotDiffQuery,
} from '@quill/contracts';
import {
  currentProjectState,
  fileTextAt,
  getRunForUser,
  getSnapshot,
  listSnapshotsPage,
  type RestoreOutcome,
  type SnapshotState,
} from '@quill/db';
import { restoreSnapshot, takeSnapshot, undoRun } from '@quill/db/gateway';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, requireOwnSession, requireProjectRole, WRITERS } from '../product/access.ts';
import { decodeTimeCursor, page } from '../product/pagination.ts';
import {
  diffStates,
  restoredView,
  sendRestoreConflict,
  snapshotDetailView,
  snapshotView,
} from '../product/restore-views.ts';
import { filePatch } from '../text-patch.ts';

/**
 * Snapshots and undo (README "Snapshots, undo and branches", docs/kernel.md): any member lists,
 * reads and diffs a project's snapshots; owners and editors take and restore them; a run is undone
 * by its own author while still an owner or editor of the project. Restores never rewrite history:
 * every file comes back as a new author version.
 */
export function registerSnapshotRoutes(
  app: FastifyInstance,
  dependencies: Pick<GatewayDependencies, 'pool'>,
): void {
  const { pool } = dependencies;

  app.get('/projects/:projectId/snapshots', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const query = parseInput(ListSnapshotsQuery, request.query);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    const before = decodeTimeCursor(query.cursor);
    const rows = await listSnapshotsPage(pool, projectId, {
      limit: query.limit + 1,
      ...(before ? { before } : {}),
    });
    const { items, next_cursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
    return { snapshots: items.map(snapshotView), next_cursor };
  });

  app.post('/projects/:projectId/snapshots', async (request, reply) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(CreateSnapshotBody, request.body);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, WRITERS);
    const snapshot = await takeSnapshot(pool, {
      projectId,
      kind: 'manual',
      label: body.label,
      createdBy: user.id,
    });
    if (!snapshot) throw new QuillError('not_found');
    return reply.code(201).send({ snapshot: snapshotDetailView(snapshot) });
  });

  app.get('/projects/:projectId/snapshots/:snapshotId', async (request) => {
    const { projectId, snapshotId } = parseInput(ProjectSnapshotParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return { snapshot: snapshotDetailView(await requireSnapshot(pool, projectId, snapshotId)) };
  });

  app.get('/projects/:projectId/snapshots/:snapshotId/diff', async (request) => {
    const { projectId, snapshotId } = parseInput(ProjectSnapshotParams, request.params);
    const query = parseInput(SnapshotDiffQuery, request.query);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    const from = (await requireSnapshot(pool, projectId, snapshotId)).state;
    const to: SnapshotState | null =
      query.against === 'current'
        ? await currentProjectState(pool, projectId)
        : ((await getSnapshot(pool, projectId, query.against))?.state ?? null);
    if (!to) throw new QuillError('not_found');
    const files = diffStates(from, to);
    const body = { from: snapshotId, to: query.against, files, notes_changed: from.notes !== to.notes };
    if (query.file_id === undefined) return body;
    return { ...body, text_diff: await textDiff(pool, query.file_id, from, to) };
  });

  app.post('/projects/:projectId/snapshots/:snapshotId/restore', async (request, reply) => {
    const { projectId, snapshotId } = parseInput(ProjectSnapshotParams, request.params);
    const { force } = parseInput(RestoreBody, request.body);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, WRITERS);
    const snapshot = await requireSnapshot(pool, projectId, snapshotId);
    return answer(reply, await restoreSnapshot(pool, { projectId, snapshot, userId: user.id, force }));
  });

  app.post('/agent/runs/:runId/undo', async (request, reply) => {
    const { runId } = parseInput(RunIdParams, request.params);
    const { force } = parseInput(RestoreBody, request.body);
    const user = requireUser(request);
    const run = await getRunForUser(pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    await requireOwnSession(pool, user.id, run.sessionId);
    await requireProjectRole(pool, user.id, run.projectId, WRITERS);
    // A run still writing would keep changing what is being undone.
    if (run.phase === 'running') throw new QuillError('session_busy');
    return answer(reply, await undoRun(pool, { projectId: run.projectId, runId, userId: user.id, force }));
  });
}

function answer(reply: FastifyReply, outcome: RestoreOutcome) {
  if (outcome.kind === 'not_found') throw new QuillError('not_found');
  if (outcome.kind === 'conflict') return sendRestoreConflict(reply, outcome.conflicts);
  return restoredView(outcome);
}

async function requireSnapshot(pool: Pool, projectId: string, snapshotId: string) {
  const snapshot = await getSnapshot(pool, projectId, snapshotId);
  if (!snapshot) throw new QuillError('not_found');
  return snapshot;
}

/** A unified diff of one file's text between two states ('' where the file is absent). */
async function textDiff(pool: Pool, fileId: string, from: SnapshotState, to: SnapshotState): Promise<string> {
  const before = from.files.find((file) => file.id === fileId);
  const after = to.files.find((file) => file.id === fileId);
  if (!before && !after) throw new QuillError('not_found');
  const [oldText, newText] = await Promise.all([
    before ? fileTextAt(pool, fileId, before.version) : '',
    after ? fileTextAt(pool, fileId, after.version) : '',
  ]);
  return filePatch(
    before ? `${before.title}@${before.version}` : '/dev/null',
    after ? `${after.title}@${after.version}` : '/dev/null',
    oldText ?? '',
    newText ?? '',
  );
}
