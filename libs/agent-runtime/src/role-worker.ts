import { ack, type Bus, type DeliveryContext, type Disposition, nak, publishEnvelope } from '@quill/bus';
import {
  type ErrorCode,
  msgIds,
  StepRecordEnvelope,
  type StepResult,
  type TaskEnvelope,
} from '@quill/contracts';
import { RunFencedError, retryTransient, type StepStart } from '@quill/db';
import { bumpRunEpoch } from '@quill/db/workers';
import type { LlmClient } from '@quill/llm';
import type { RedisClient, RedisKeys } from '@quill/redis';
import { watchStop } from '@quill/run-control';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { EmitterSettings } from './frame-emitter.ts';
import { reportLastDeliveryFailed } from './last-delivery.ts';
import { attachOwnFindings } from './review-findings.ts';
import type { AppliedDefinition } from './role-definition.ts';
import { compileStepContext } from './step-context.ts';
import { readStepJournal } from './step-journal.ts';
import { runStepTurns, type StepRun } from './step-runner.ts';
import { markStepSpan } from './step-span.ts';

export interface RoleWorkerDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  llm: LlmClient;
  logger: Logger;
  instanceId: string;
  /**
   * The step's start, in one statement: the run's phase and write epoch, and what the step runs
   * with, from its session's pinned role definition (docs/kernel.md "Definitions and pinning"):
   * `prompt` is the whole directive, sent as the run's last input message
   * (docs/agent-behaviour.md step 4); the tool set, the model and output cap per provider, the
   * tool-turn cap, the output continuations and the skill budget. One attempt: the worker
   * retries transient database faults.
   */
  stepStart(task: TaskEnvelope): Promise<{ run: StepStart['run']; definition: AppliedDefinition }>;
  settings: EmitterSettings & {
    heartbeatMs: number;
    /** AGENT_RUN_MAX_MODEL_CALLS, counted run-wide in Redis; the counter expires after ttl. */
    maxRunModelCalls: number;
    modelCallCounterTtlSeconds: number;
    /** AGENT_RUN_MAX_TOKENS: prompt + completion tokens per run, counted like the model calls. */
    maxRunTokens: number;
    /** DATABASE_WRITE_RETRY_MS: how long a fenced write retries transient database faults. */
    writeRetryMs: number;
    /** WORKER_DRAIN_MS: on shutdown, how long a step may finish before it is handed back. */
    drainMs: number;
    /** The task consumer's max_deliver: a failure on that delivery is reported, not retried. */
    maxDeliver: number;
    /** NATS_REQUEST_TIMEOUT_MS / NATS_REQUEST_DEADLINE_MS for the step's `context.compile`. */
    requestTimeoutMs: number;
    requestDeadlineMs: number;
  };
}

/**
 * Handles one `task.<role>.<runId>` delivery: runs the role's model/tool loop, streams frames,
 * persists files under the run's write fence and reports a step result the router folds in.
 */
export function createRoleTaskHandler(dependencies: RoleWorkerDependencies) {
  const { bus, pool, logger } = dependencies;

  return async function handleTask(task: TaskEnvelope, delivery: DeliveryContext): Promise<Disposition> {
    try {
      return await handleDelivery(task, delivery);
    } catch (error) {
      // Earlier deliveries are naked and retried; after the last one JetStream drops the task
      // silently, so the step is reported failed first (README "Fault tolerance").
      if (delivery.deliveryCount < dependencies.settings.maxDeliver) throw error;
      await reportLastDeliveryFailed(dependencies, task, delivery, error);
      return ack;
    }
  };

  async function handleDelivery(task: TaskEnvelope, delivery: DeliveryContext): Promise<Disposition> {
    const log = logger.child({ run_id: task.run_id, session_id: task.session_id, step: task.step });
    // The stop watch opens while the run row is read: both are on the way to the first token.
    // A first delivery has no journal to read; a redelivery continues from the one it finds.
    const redelivered = delivery.deliveryCount > 1;
    // The delivery is kept from the start, not from the first turn: a set-up that waits for the
    // database (retrying below) must not outlive TASK_ACK_WAIT_S and be delivered again meanwhile.
    const heartbeat = setInterval(() => delivery.message.working(), dependencies.settings.heartbeatMs);
    // Set-up reads retry transient database faults (out of connection slots, a dropped
    // connection) like fenced writes do: a handler that threw instead was naked and redelivered
    // within a second, and after the task's few deliveries JetStream dropped it while the router
    // kept waiting for its result until the wall clock (README "Fault tolerance").
    const settled = <T>(read: () => Promise<T>) =>
      retryTransient(read, {
        maxMs: dependencies.settings.writeRetryMs,
        onRetry: (error, attempt) => log.warn({ err: error, attempt }, 'step set-up retries the database'),
      });
    // Dispatch by reference (docs/decisions/0033-dispatch-by-reference.md): the step's context
    // is compiled for this delivery while the run's phase and epoch with the role definition
    // (one statement, docs/decisions/0070-a-steps-start-in-one-statement.md), the stop flag and
    // the journal are read; a redelivery gets the context its first delivery ran with.
    const compiling = compileStepContext({ bus, logger: log, ...dependencies.settings }, task, redelivered);
    const [startRead, stopRead, journalRead] = await Promise.allSettled([
      settled(() => dependencies.stepStart(task)),
      watchStop(bus, dependencies.redis, dependencies.keys, task.run_id),
      redelivered ? settled(() => readStepJournal(pool, task.run_id, task.step)) : Promise.resolve(null),
    ]);
    if (stopRead.status === 'rejected') {
      clearInterval(heartbeat);
      throw stopRead.reason;
    }
    const stopWatch = stopRead.value;
    try {
      if (startRead.status === 'rejected') throw startRead.reason;
      if (journalRead.status === 'rejected') throw journalRead.reason;
      const { run, definition } = startRead.value;
      const journal = journalRead.value === 'invalid' ? null : journalRead.value;
      if (journalRead.value === 'invalid') log.warn('step journal unreadable; the step starts over');
      if (run?.phase !== 'running') {
        log.info({ phase: run?.phase }, 'task for a run that is not running; dropped');
        return ack;
      }
      // A redelivered task means the previous holder may still be alive: take the write lease so
      // its late writes are fenced out.
      const epoch = redelivered ? await settled(() => bumpRunEpoch(pool, task.run_id)) : run.epoch;
      if (epoch === null) return ack;
      // A step that had finished needs neither: its journaled result only has to be published.
      let prepared: Pick<StepRun, 'messages' | 'definition' | 'historyCompacted'> | undefined;
      if (!journal?.result) {
        const context = await compiling;
        if ('failure' in context) {
          // No context, no step: reported failed with the code, so the router ends the run with
          // one error frame (what it did when it compiled the context itself).
          await publishResult(task, failedBeforeStart(task, dependencies.instanceId, context.failure));
          return ack;
        }
        prepared = {
          messages: context.messages,
          definition,
          ...(context.compacted === undefined ? {} : { historyCompacted: context.compacted }),
        };
      }
      log.info(
        { role: task.role, delivery: delivery.deliveryCount, resumed_turn: journal?.turn },
        'step started',
      );
      const handBack = drainWindow(delivery.shutdown, dependencies.settings.drainMs);
      try {
        // The step had finished: its result only has to reach the router (the publish is deduplicated).
        const result =
          journal?.result ??
          (await runStep({
            task,
            ...prepared!,
            epoch,
            attempt: delivery.deliveryCount,
            log,
            stopWatch,
            journal,
            handBack: handBack.signal,
          }));
        // Shutting down: the journal holds the step's progress; another worker takes it now.
        if (result === 'handed_back') {
          log.info('step handed back on shutdown');
          return nak(0);
        }
        if (!result) return ack;
        try {
          await attachOwnFindings(
            pool,
            { runId: task.run_id, epoch, retryMs: dependencies.settings.writeRetryMs },
            task,
            result,
          );
        } catch (error) {
          // The run moved on (a takeover holds it, or it ended): its holder reports the step.
          if (!(error instanceof RunFencedError)) throw error;
          log.info({ err: error }, 'review findings fenced out; result left to the run holder');
          return ack;
        }
        await publishResult(task, result);
        return ack;
      } finally {
        handBack.close();
      }
    } finally {
      clearInterval(heartbeat);
      stopWatch.close();
    }
  }

  async function publishResult(task: TaskEnvelope, result: StepResult): Promise<void> {
    markStepSpan(result);
    await publishEnvelope(
      bus,
      bus.names.steps(task.run_id),
      StepRecordEnvelope,
      { v: 1, kind: 'result', run_id: task.run_id, result },
      { msgId: msgIds.stepResult(task.run_id, task.step) },
    );
  }

  async function runStep(run: StepRun): Promise<StepResult | 'handed_back' | undefined> {
    const stoppedBefore = run.stopWatch.reason();
    if (stoppedBefore) {
      return {
        step: run.task.step,
        role: run.task.role,
        worker_instance: dependencies.instanceId,
        files_written: [],
        model_calls: 0,
        tool_calls: 0,
        final_text: '',
        outcome: 'stopped',
        stop_reason: stoppedBefore,
      };
    }
    return await runStepTurns(dependencies, run);
  }
}

function failedBeforeStart(task: TaskEnvelope, instance: string, code: ErrorCode): StepResult {
  return {
    step: task.step,
    role: task.role,
    worker_instance: instance,
    outcome: 'failed',
    stop_reason: 'error',
    error_code: code,
    final_text: '',
    files_written: [],
    model_calls: 0,
    tool_calls: 0,
  };
}

/**
 * Fires `drainMs` after the replica starts shutting down (at once with 0): the step in flight
 * then stops where its journal stands and is handed back.
 */
function drainWindow(shutdown: AbortSignal, drainMs: number): { signal: AbortSignal; close(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const start = () => {
    timer = setTimeout(() => controller.abort(new Error('handed back on shutdown')), drainMs);
  };
  if (shutdown.aborted) start();
  else shutdown.addEventListener('abort', start, { once: true });
  return {
    signal: controller.signal,
    close() {
      clearTimeout(timer);
      shutdown.removeEventListener('abort', start);
    },
  };
}
