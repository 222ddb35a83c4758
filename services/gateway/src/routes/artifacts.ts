import {
  AcceptArtifactBody,
  ArtifactListQuery,
  type ArtifactView,
  ProjectArtifactParams,
  ProjectIdParams,
  ProjectSettingsBody,
  QuillError,
  RejectArtifactBody,
  RequestRevisionBody,
  RunIdParams,
} from '@quill/contracts';
import {
  type Artifact,
  type ArtifactDecision,
  getArtifact,
  getArtifactAcceptance,
  getFile,
  getRun,
  getRunForUser,
  listArtifacts,
  runAwaitsAcceptance,
  withTransaction,
} from '@quill/db';
import {
  acceptArtifact,
  linkRevisionRun,
  rejectArtifact,
  requestArtifactRevision,
  setArtifactAcceptance,
  undoArtifactDecision,
} from '@quill/db/gateway';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { ANY_MEMBER, requireProjectRole, WRITERS } from '../product/access.ts';
import { modelRouteLimit } from '../rate-limit.ts';
import { createRunLauncher } from '../run-launcher.ts';
import { reportSessionReviewed } from '../session-reviewed.ts';

/**
 * Artifacts and acceptance (docs/kernel.md): list a project's or a run's artifacts, accept,
 * reject, request a revision (which starts a revision run), and the project's acceptance
 * setting. Members read; owners and editors decide; viewers get 403, strangers 404.
 */
export function registerArtifactRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  const { pool } = dependencies;
  const launch = createRunLauncher(dependencies);

  app.get('/projects/:projectId/artifacts', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const query = parseInput(ArtifactListQuery, request.query);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    const artifacts = await listArtifacts(pool, { projectId, openOnly: query.state === 'open' });
    return { artifacts: artifacts.map(artifactView) };
  });

  app.get('/agent/runs/:runId/artifacts', async (request) => {
    const { runId } = parseInput(RunIdParams, request.params);
    const run = await getRunForUser(pool, runId, requireUser(request).id);
    if (!run) throw new QuillError('not_found');
    const [artifacts, awaiting] = await Promise.all([
      listArtifacts(pool, { runId }),
      runAwaitsAcceptance(pool, runId),
    ]);
    return { artifacts: artifacts.map(artifactView), awaiting_acceptance: awaiting };
  });

  app.post('/projects/:projectId/artifacts/:artifactId/accept', async (request) => {
    const { projectId, artifactId } = parseInput(ProjectArtifactParams, request.params);
    const body = parseInput(AcceptArtifactBody, request.body);
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, WRITERS);
    const decision = await withTransaction(pool, (client) =>
      acceptArtifact(client, {
        projectId,
        artifactId,
        userId: user.id,
        expectedVersion: body.expected_version,
      }),
    );
    const artifact = decided(decision);
    void reportSessionReviewed(dependencies, artifact.runId, request.log);
    return { artifact: artifactView(artifact) };
  });

  app.post('/projects/:projectId/artifacts/:artifactId/reject', async (request) => {
    const { projectId, artifactId } = parseInput(ProjectArtifactParams, request.params);
    const body = parseInput(RejectArtifactBody, request.body ?? {});
    const user = requireUser(request);
    await requireProjectRole(pool, user.id, projectId, WRITERS);
    const decision = await withTransaction(pool, (client) =>
      rejectArtifact(client, {
        projectId,
        artifactId,
        userId: user.id,
        ...(body.comment ? { comment: body.comment } : {}),
      }),
    );
    const artifact = decided(decision);
    void reportSessionReviewed(dependencies, artifact.runId, request.log);
    return { artifact: artifactView(artifact) };
  });

  // The revision run is an ordinary run (credits, session lock, one terminal frame). The request
  // is recorded first, so the run's context already shows the text as sent back; a refused start
  // (busy session, no credits) puts the artifact back as it was.
  app.post(
    '/projects/:projectId/artifacts/:artifactId/request-revision',
    modelRouteLimit,
    async (request, reply) => {
      const { projectId, artifactId } = parseInput(ProjectArtifactParams, request.params);
      const body = parseInput(RequestRevisionBody, request.body);
      const user = requireUser(request);
      await requireProjectRole(pool, user.id, projectId, WRITERS);
      const before = await getArtifact(pool, projectId, artifactId);
      const decision = await withTransaction(pool, (client) =>
        requestArtifactRevision(client, { projectId, artifactId, userId: user.id, comment: body.comment }),
      );
      const artifact = decided(decision);
      const origin = artifact.runId ? await getRun(pool, artifact.runId) : null;
      const file = await getFile(pool, projectId, artifact.textFileId);
      let run: { runId: string; sessionId: string };
      try {
        run = await launch(
          user,
          {
            project_id: projectId,
            ...(origin && origin.userId === user.id ? { session_id: origin.sessionId } : {}),
            message: revisionMessage(file?.title ?? '', artifact.textFileId, body.comment),
            ...(file ? { focus_file_id: file.id } : {}),
            attached_file_ids: [],
            generation_mode: origin?.generationMode ?? 'fast',
            ui_language: 'zh',
          },
          request.log,
          { apiKeyId: request.apiKeyId },
        );
      } catch (error) {
        if (before) await undoArtifactDecision(pool, before);
        throw error;
      }
      await linkRevisionRun(pool, artifactId, run.runId);
      request.log.info({ artifact_id: artifactId, run_id: run.runId }, 'revision run started');
      return reply.code(202).send({
        artifact: artifactView({ ...artifact, revisionRunId: run.runId }),
        run_id: run.runId,
        session_id: run.sessionId,
      });
    },
  );

  app.get('/projects/:projectId/settings', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    await requireProjectRole(pool, requireUser(request).id, projectId, ANY_MEMBER);
    return { artifact_acceptance: await getArtifactAcceptance(pool, projectId) };
  });

  app.put('/projects/:projectId/settings', async (request) => {
    const { projectId } = parseInput(ProjectIdParams, request.params);
    const body = parseInput(ProjectSettingsBody, request.body);
    await requireProjectRole(pool, requireUser(request).id, projectId, WRITERS);
    await setArtifactAcceptance(pool, projectId, body.artifact_acceptance);
    return { artifact_acceptance: body.artifact_acceptance };
  });
}

/** The message of a revision run: which text, and the author's own words. */
export function revisionMessage(title: string, fileId: string, comment: string): string {
  return `请按作者的返修意见修改《${title || '无题'}》(id=${fileId})，改完写回同一个文件。作者的意见：${comment}`;
}

/** The decided artifact, or the catalog error the outcome stands for. */
export function decided(decision: ArtifactDecision): Artifact {
  if (decision.kind === 'decided') return decision.artifact;
  if (decision.kind === 'not_found') throw new QuillError('not_found');
  if (decision.kind === 'not_open') throw new QuillError('artifact_not_open');
  if (decision.kind === 'expected_version_required') {
    throw new QuillError('invalid_request', {
      details: { fields: { expected_version: ["a draft's acceptance names the original's version"] } },
    });
  }
  throw new QuillError('version_conflict', {
    details: { current: { version: decision.currentVersion } },
  });
}

export function artifactView(artifact: Artifact): ArtifactView {
  return {
    id: artifact.id,
    project_id: artifact.projectId,
    run_id: artifact.runId,
    step: artifact.step,
    file_id: artifact.fileId,
    text_file_id: artifact.textFileId,
    placement: artifact.placement,
    version: artifact.version,
    base_version: artifact.baseVersion,
    state: artifact.state,
    decided_by: artifact.decidedBy,
    comment: artifact.comment,
    findings: artifact.findings,
    revision_run_id: artifact.revisionRunId,
    created_at: artifact.createdAt,
    decided_at: artifact.decidedAt,
  };
}
