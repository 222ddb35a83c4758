import { ContextTrace, type ContextTraceResponse, QuillError, RunIdParams } from '@quill/contracts';
import { getProject, getRun, listContextTraces } from '@quill/db';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';

/**
 * The Context Trace of a run (docs/agent-behaviour.md / §7): per compile, what each role was given, from
 * where, at which tier, how much of it, and what was withheld and why. It names files some roles
 * may not see, so only the project owner gets it; anyone else gets the same 404 as for a run
 * that does not exist.
 */
export function registerContextTraceRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  app.get('/agent/runs/:runId/context-trace', async (request): Promise<ContextTraceResponse> => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    const run = await getRun(dependencies.pool, runId);
    const project = run ? await getProject(dependencies.pool, run.projectId) : null;
    if (!run || project?.ownerId !== user.id) throw new QuillError('not_found');
    const stored = await listContextTraces(dependencies.pool, runId);
    return {
      run_id: runId,
      traces: stored.flatMap((row) => {
        const trace = ContextTrace.safeParse(row.trace);
        return trace.success
          ? [{ role: trace.data.role, step: row.step, created_at: row.createdAt, trace: trace.data }]
          : [];
      }),
    };
  });
}
