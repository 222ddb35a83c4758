import { type Bus, runTraceContext } from '@quill/bus';
import { quillMetrics, withSpan } from '@quill/telemetry';
import type { FastifyInstance } from 'fastify';

const STEER_ROUTE = '/api/v1/agent/steer';

/**
 * Steering's metric and trace link, kept beside the route rather than in it: a queued steer
 * (202) counts as `queued` and gets a `run steer` span in the request's trace, linked to the
 * run's trace, as a stop does (docs/operations.md "Traces"); a refused one counts as `refused`.
 */
export function installSteerTelemetry(app: FastifyInstance, bus: Bus): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'POST' || request.routeOptions.url !== STEER_ROUTE) return payload;
    const queued = reply.statusCode === 202;
    quillMetrics().steeringMessages.add(1, { stage: queued ? 'queued' : 'refused' });
    const runId = queued ? runIdOf(payload) : undefined;
    const otel = request.opentelemetry();
    if (!runId || !otel.enabled) return payload;
    const runTrace = await runTraceContext(bus, runId);
    await withSpan(
      'run steer',
      {
        parent: otel.context,
        attributes: { 'quill.run_id': runId },
        ...(runTrace ? { links: [{ context: runTrace }] } : {}),
      },
      () => undefined,
    );
    return payload;
  });
}

function runIdOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const body = JSON.parse(payload) as { run_id?: unknown };
    return typeof body.run_id === 'string' ? body.run_id : undefined;
  } catch {
    return undefined;
  }
}
