import {
  ack,
  type DeliveryContext,
  type Disposition,
  nak,
  publishEnvelope,
  requestReply,
  term,
} from '@quill/bus';
import {
  type AgentRole,
  ContextCompileReply,
  ContextCompileRequest,
  msgIds,
  type RunStartEnvelope,
  StepRecordEnvelope,
  TaskEnvelope,
} from '@quill/contracts';
import { getRun } from '@quill/db';
import { getStopFlag, renewSessionLock } from '@quill/redis';
import type { Logger } from 'pino';
import { type FinisherDependencies, finishRunWith } from './run-finisher.ts';
import { openStepLog } from './step-log.ts';
import { type FinishOutcome, nextAction, planFor } from './workflow.ts';

export interface OrchestratorDependencies extends FinisherDependencies {
  logger: Logger;
  settings: {
    maxIterations: number;
    wallClockMs: number;
    heartbeatMs: number;
    sessionLockTtlMs: number;
  };
}

/**
 * Handles one `runs.start.<runId>` delivery for the whole life of the run. The message stays
 * un-acked (kept alive with in-progress acks) until the run is finished, so if this replica dies
 * JetStream redelivers it and another router takes the run over from its step log.
 */
export function createRunHandler(dependencies: OrchestratorDependencies) {
  const { bus, pool, redis, keys, settings } = dependencies;

  return async function handleRunStart(
    start: RunStartEnvelope,
    delivery: DeliveryContext,
  ): Promise<Disposition> {
    const log = dependencies.logger.child({ run_id: start.run_id, session_id: start.session_id });
    const run = await getRun(pool, start.run_id);
    if (!run) return term('unknown run');
    if (run.phase !== 'running') return ack;
    if (delivery.deliveryCount > 1) log.warn({ delivery: delivery.deliveryCount }, 'taking over run');

    const lockKey = keys.sessionLock(start.session_id);
    const keepAlive = setInterval(() => {
      delivery.message.working();
      void renewSessionLock(redis, lockKey, start.run_id, settings.sessionLockTtlMs).catch((error: unknown) =>
        log.warn({ err: error }, 'session lock renewal failed'),
      );
    }, settings.heartbeatMs);
    const deadline = Date.parse(run.createdAt) + settings.wallClockMs;
    const steps = await openStepLog(bus, start.run_id, log);
    try {
      const plan = planFor(start);
      for (;;) {
        if (delivery.shutdown.aborted) return nak();
        const action = nextAction(steps.state, plan, settings.maxIterations);
        if (action.kind === 'finish') {
          await finishRunWith(dependencies, start, steps.state, action.outcome, log);
          return ack;
        }
        if (action.kind === 'dispatch') {
          const stopped = await getStopFlag(redis, keys.stop(start.run_id));
          if (stopped) {
            await finishRunWith(dependencies, start, steps.state, stoppedOutcome(stopped), log);
            return ack;
          }
          const failure = await dispatch(start, action.step, action.role, run.epoch);
          if (failure) {
            await finishRunWith(dependencies, start, steps.state, failure, log);
            return ack;
          }
        }
        const step = action.step;
        if (!(await steps.waitForResult(step, deadline, delivery.shutdown))) {
          if (delivery.shutdown.aborted) return nak();
          await finishRunWith(
            dependencies,
            start,
            steps.state,
            { terminal: 'error', code: 'run_timeout' },
            log,
          );
          return ack;
        }
      }
    } finally {
      clearInterval(keepAlive);
      await steps.close();
    }
  };

  async function dispatch(
    start: RunStartEnvelope,
    step: number,
    role: AgentRole,
    epoch: number,
  ): Promise<FinishOutcome | undefined> {
    let compiled: ContextCompileReply;
    try {
      compiled = await requestReply(
        bus,
        bus.names.contextCompile,
        { request: ContextCompileRequest, reply: ContextCompileReply },
        {
          v: 1,
          run_id: start.run_id,
          session_id: start.session_id,
          project_id: start.project_id,
          user_id: start.user_id,
          role,
          message: start.message,
          focus_file_id: start.focus_file_id,
          attached_file_ids: start.attached_file_ids,
          ui_language: start.ui_language,
        },
        { timeoutMs: dependencies.requestTimeoutMs },
      );
    } catch (error) {
      dependencies.logger.error({ err: error, run_id: start.run_id }, 'context compile failed');
      return { terminal: 'error', code: 'context_unavailable' };
    }
    if (!compiled.ok) return { terminal: 'error', code: compiled.code };
    // Dispatched is recorded first: a takeover that sees it waits for the result instead of
    // dispatching again (the task's msg id would drop a second copy anyway).
    await publishEnvelope(
      bus,
      bus.names.steps(start.run_id),
      StepRecordEnvelope,
      { v: 1, kind: 'dispatched', run_id: start.run_id, step, role },
      { msgId: msgIds.dispatched(start.run_id, step) },
    );
    await publishEnvelope(
      bus,
      bus.names.task(role, start.run_id),
      TaskEnvelope,
      {
        v: 1,
        run_id: start.run_id,
        session_id: start.session_id,
        project_id: start.project_id,
        user_id: start.user_id,
        step,
        role,
        epoch,
        generation_mode: start.generation_mode,
        messages: compiled.messages,
      },
      { msgId: msgIds.task(start.run_id, step) },
    );
    return undefined;
  }
}

function stoppedOutcome(reason: string): FinishOutcome {
  return {
    terminal: 'stopped',
    reason: reason === 'client_disconnected' ? 'client_disconnected' : 'user_stopped',
  };
}
