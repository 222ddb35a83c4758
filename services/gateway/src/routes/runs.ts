import { QuillError, RunIdParams } from '@quill/contracts';
import { getRunForUser, listRunDefinitions, listRunSkillVersions, runAwaitsAcceptance } from '@quill/db';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/** Phases (docs/agent-behaviour.md) of the caller's runs; anything else is 404 (sessions: routes/sessions.ts). */
export function registerRunRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  app.get('/agent/runs/:runId', async (request) => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    const run = await getRunForUser(dependencies.pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    const [definitions, skills, awaitingAcceptance] = await Promise.all([
      listRunDefinitions(dependencies.pool, runId),
      listRunSkillVersions(dependencies.pool, runId),
      runAwaitsAcceptance(dependencies.pool, runId),
    ]);
    return {
      run_id: run.runId,
      session_id: run.sessionId,
      project_id: run.projectId,
      phase: run.phase,
      stop_reason: run.stopReason,
      error_code: run.errorCode,
      billing_decision: run.billingDecision,
      generation_mode: run.generationMode,
      model_calls: run.modelCalls,
      tool_calls: run.toolCalls,
      created_at: run.createdAt,
      ended_at: run.endedAt,
      // role → definition version the run used (docs/kernel.md "Definitions and pinning").
      definitions,
      // skill name → the version the run read (docs/kernel.md "Definitions and pinning").
      skills,
      // Artifacts of this run wait for the author's decision (docs/kernel.md).
      awaiting_acceptance: awaitingAcceptance,
    };
  });
}
