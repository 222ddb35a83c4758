import { type Bus, decodeEnvelope, publishCore, runTraceContext } from '@quill/bus';
import {
  ControlEnvelope,
  WorkflowStoppedReason as ReasonSchema,
  type WorkflowStoppedReason,
} from '@quill/contracts';
import { getStopFlag, type RedisClient, type RedisKeys, setStopFlag } from '@quill/redis';
import { quillMetrics, withSpan } from '@quill/telemetry';

export interface StopWatch {
  /** Aborted when the run is stopped; passed to the model stream so it ends mid-token. */
  readonly signal: AbortSignal;
  /** Why the run was stopped, once it was. */
  reason(): WorkflowStoppedReason | undefined;
  close(): void;
}

/**
 * Follows a run's stop: the `stop:<runId>` flag (for stops that happened before this step began)
 * and the `run.<runId>.control` broadcast (for stops during it).
 */
export async function watchStop(
  bus: Bus,
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
): Promise<StopWatch> {
  const controller = new AbortController();
  let reason: WorkflowStoppedReason | undefined;
  const stop = (value: string) => {
    if (controller.signal.aborted) return;
    const parsed = ReasonSchema.safeParse(value);
    reason = parsed.success ? parsed.data : 'user_stopped';
    controller.abort(reason);
  };
  const subject = bus.names.control(runId);
  const subscription = bus.connection.subscribe(subject, {
    callback: (error, message) => {
      if (error) return;
      try {
        stop(decodeEnvelope(ControlEnvelope, subject, message.data).reason);
      } catch {
        // A malformed control message is not a stop.
      }
    },
  });
  // Subscribe first, then read the flag: a stop between the two is seen by one or the other.
  const flagged = await getStopFlag(redis, keys.stop(runId));
  if (flagged) stop(flagged);
  return {
    signal: controller.signal,
    reason: () => reason,
    close: () => subscription.unsubscribe(),
  };
}

/**
 * Stops a run from anywhere (a gateway replica, the disconnect watchdog, the router at the
 * deadline): the flag reaches steps that have not started yet, the broadcast reaches the ones
 * running now.
 */
export async function requestStop(
  bus: Bus,
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
  reason: WorkflowStoppedReason,
  flagTtlMs: number,
): Promise<void> {
  quillMetrics().stopRequests.add(1, { reason });
  // The request is its own trace (an HTTP call, a watchdog); the link leads to the run it stops.
  const runTrace = await runTraceContext(bus, runId);
  await withSpan(
    'run stop',
    {
      attributes: { 'quill.run_id': runId, 'quill.stop_reason': reason },
      ...(runTrace ? { links: [{ context: runTrace }] } : {}),
    },
    async () => {
      await setStopFlag(redis, keys.stop(runId), reason, flagTtlMs);
      publishCore(bus, bus.names.control(runId), ControlEnvelope, {
        v: 1,
        run_id: runId,
        action: 'stop',
        reason,
      });
      await bus.connection.flush();
    },
  );
}
