import { type Bus, publishEnvelope } from '@quill/bus';
import { msgIds, type TaskEnvelope, UsageEnvelope } from '@quill/contracts';
import { type LlmAttempt, MAX_PROVIDER_ATTEMPTS } from '@quill/llm';
import type { Logger } from 'pino';

export interface UsageReporter {
  /** The model client's accounting hook for one call (turn) of this step. */
  hookFor(turn: number): (attempt: LlmAttempt) => void;
  /** Waits until every report so far is stored; throws the first publish error. */
  flush(): Promise<void>;
  /** Provider switches seen in this step (an attempt on another provider than the one before it). */
  readonly failovers: number;
}

/**
 * Publishes one `UsageEnvelope` per provider attempt (failed ones too: docs/agent-behaviour.md invariant 3,
 * docs/agent-behaviour.md `usage_hooks`) on `run.<runId>.usage`, which the billing ledger records.
 *
 * `attempt` has to be unique per (run, call index) across task redeliveries and failovers, so
 * it packs both: (delivery − 1) × MAX_PROVIDER_ATTEMPTS + the attempt's index within the call.
 * The first delivery's primary attempt is 0, its failover 1; a redelivery continues at 2.
 */
export function createUsageReporter(
  bus: Bus,
  task: TaskEnvelope,
  deliveryAttempt: number,
  logger: Logger,
): UsageReporter {
  const inFlight: Promise<unknown>[] = [];
  let failovers = 0;
  return {
    hookFor(turn) {
      const callIndex = task.step * 1000 + turn;
      // A retry of the same provider is another attempt but no switch.
      let previousProvider: string | undefined;
      return (attempt) => {
        if (previousProvider !== undefined && attempt.provider !== previousProvider) failovers++;
        previousProvider = attempt.provider;
        const packed = (deliveryAttempt - 1) * MAX_PROVIDER_ATTEMPTS + attempt.index;
        inFlight.push(
          publishEnvelope(
            bus,
            bus.names.usage(task.run_id),
            UsageEnvelope,
            {
              v: 1,
              run_id: task.run_id,
              user_id: task.user_id,
              call_index: callIndex,
              attempt: packed,
              role: task.role,
              provider: attempt.provider,
              model: attempt.model,
              usage: attempt.usage,
            },
            { msgId: msgIds.usage(task.run_id, callIndex, packed), quiet: true },
          ),
        );
        if (attempt.index > 0 || attempt.outcome === 'failed') {
          logger.info(
            {
              call_index: callIndex,
              provider: attempt.provider,
              attempt: attempt.index,
              outcome: attempt.outcome,
              error_kind: attempt.errorKind,
              status: attempt.status,
            },
            'model call attempt',
          );
        }
      };
    },
    async flush() {
      const pending = inFlight.splice(0);
      const results = await Promise.allSettled(pending);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
    get failovers() {
      return failovers;
    },
  };
}
