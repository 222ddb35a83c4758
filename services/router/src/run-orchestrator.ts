import { ack, type DeliveryContext, type Disposition, nak, publishEnvelope, term } from '@quill/bus';
import {
  type AgentRole,
  msgIds,
  type RunStartEnvelope,
  StepRecordEnvelope,
  TaskEnvelope,
} from '@quill/contracts';
import { getRun } from '@quill/db';
import { renewSemaphore, renewSessionLock } from '@quill/redis';
import { requestStop, watchStop } from '@quill/run-control';
import type { Logger } from 'pino';
import { readRouting } from './routing/route-run.ts';
import { type FinisherDependencies, finishRunWith, publishDone } from './run-finisher.ts';
import type { RunLeases } from './run-leases.ts';
import { openStepLog } from './step-log.ts';
import { nextAction } from './workflow/engine.ts';
import type { WorkflowPlan } from './workflow/workflow-plan.ts';
import type { TaskExtras, WorkflowRuntime } from './workflow/workflow-runtime.ts';
import type { FinishOutcome } from './workflow.ts';

export interface OrchestratorDependencies extends FinisherDependencies {
  logger: Logger;
  /** Routing, handoffs, held text and directives; the rules themselves are pure. */
  workflow: WorkflowRuntime;
  leases: RunLeases;
  settings: {
    maxIterations: number;
    wallClockMs: number;
    heartbeatMs: number;
    sessionLockTtlMs: number;
    stopGraceMs: number;
    stopFlagTtlMs: number;
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
    // The stop watch, the step log and the routing reads are opened while the run row is read:
    // all four are on the way to the first token.
    const routingReads = readRouting(pool, start);
    // Awaited by the routing below; a run that goes no further leaves it unread.
    routingReads.catch(() => undefined);
    const [runRead, stopRead, stepsRead] = await Promise.allSettled([
      getRun(pool, start.run_id),
      watchStop(bus, redis, keys, start.run_id),
      openStepLog(bus, start.run_id, log),
    ]);
    const closeOpened = async () => {
      if (stopRead.status === 'fulfilled') stopRead.value.close();
      if (stepsRead.status === 'fulfilled') await stepsRead.value.close();
    };
    if (runRead.status === 'rejected' || stopRead.status === 'rejected' || stepsRead.status === 'rejected') {
      await closeOpened();
      throw [runRead, stopRead, stepsRead].find((read) => read.status === 'rejected')!.reason;
    }
    let run = runRead.value;
    const stopWatch = stopRead.value;
    const steps = stepsRead.value;
    // The run lease is taken while the run is: both are on the way to the first token, and a run
    // that turns out to be over gives it back at once.
    const leasing =
      run?.phase === 'idle' || run?.phase === 'running'
        ? dependencies.leases.hold(start.run_id, delivery.ackSubject, log)
        : undefined;
    leasing?.catch(() => undefined);
    const releaseLeasing = async () => {
      await leasing?.then(
        (held) => held.release(),
        () => undefined,
      );
    };
    // Admitted by the gateway (`idle`): this router takes it, run and session → `running`.
    if (run?.phase === 'idle') {
      const taken = await dependencies.phases.startRun(run).catch(async (error: unknown) => {
        await releaseLeasing();
        await closeOpened();
        throw error;
      });
      if (taken.kind === 'applied') run = { ...run, phase: 'running' };
      else run = await getRun(pool, start.run_id);
    }
    if (run?.phase !== 'running') {
      await releaseLeasing();
      await closeOpened();
      if (!run) return term('unknown run');
      // Ended already; the router that ended it may have died before its last frame.
      await publishDone(bus, start.run_id, [...steps.state.results.values()]);
      return ack;
    }
    if (delivery.deliveryCount > 1) log.warn({ delivery: delivery.deliveryCount }, 'taking over run');
    else log.info('run taken');
    let lease: { release(): Promise<void> };
    try {
      lease = await (leasing ?? dependencies.leases.hold(start.run_id, delivery.ackSubject, log));
    } catch (error) {
      await closeOpened();
      throw error;
    }

    const keepAlive = setInterval(() => {
      delivery.message.working();
      void renewRunLeases(start).catch((error: unknown) => log.warn({ err: error }, 'lease renewal failed'));
    }, settings.heartbeatMs);
    const deadline = Date.parse(run.createdAt) + settings.wallClockMs;
    const epoch = run.epoch;
    let plan: WorkflowPlan | undefined;
    const finish = async (outcome: FinishOutcome) => {
      const closing = await dependencies.workflow.beforeFinish(start, plan, steps.state, outcome, log);
      await finishRunWith(dependencies, start, steps.state, outcome, log, closing);
      return ack;
    };
    try {
      const workflowPlan = await dependencies.workflow.plan(start, log, stopWatch.signal, routingReads);
      plan = workflowPlan;
      let stopSeenAt: number | undefined;
      for (;;) {
        if (delivery.shutdown.aborted) return nak();
        const stopReason = stopWatch.reason();
        stopSeenAt ??= stopReason ? Date.now() : undefined;
        const action = nextAction(steps.state, workflowPlan, settings.maxIterations);
        if (action.kind === 'finish') return await finish(action.outcome);
        if (action.kind === 'dispatch') {
          if (stopReason) return await finish({ terminal: 'stopped', reason: stopReason });
          const extras = await dependencies.workflow.beforeDispatch(start, workflowPlan, steps.state, action);
          await dispatch(start, action.step, action.role, epoch, extras);
        }
        // After a stop the worker still gets a moment to save what it captured and report.
        const waitUntil = stopSeenAt ? Math.min(deadline, stopSeenAt + settings.stopGraceMs) : deadline;
        const interrupt = stopReason
          ? delivery.shutdown
          : AbortSignal.any([delivery.shutdown, stopWatch.signal]);
        if (await steps.waitForResult(action.step, waitUntil, interrupt)) continue;
        if (delivery.shutdown.aborted) return nak();
        if (!stopReason && stopWatch.reason()) continue;
        if (stopReason) return await finish({ terminal: 'stopped', reason: stopReason });
        // The deadline: the timeout terminal goes out first, then producers are told to wind down.
        await finish({ terminal: 'stopped', reason: 'wall_clock_timeout' });
        await requestStop(bus, redis, keys, start.run_id, 'wall_clock_timeout', settings.stopFlagTtlMs);
        return ack;
      }
    } finally {
      clearInterval(keepAlive);
      stopWatch.close();
      await steps.close();
      await lease.release().catch((error: unknown) => log.warn({ err: error }, 'run lease release failed'));
    }
  };

  async function renewRunLeases(start: RunStartEnvelope): Promise<void> {
    await renewSessionLock(
      redis,
      keys.sessionLock(start.session_id),
      start.run_id,
      settings.sessionLockTtlMs,
    );
    await renewSemaphore(redis, keys.userSemaphore(start.user_id), start.run_id, settings.sessionLockTtlMs);
  }

  async function dispatch(
    start: RunStartEnvelope,
    step: number,
    role: AgentRole,
    epoch: number,
    extras: TaskExtras,
  ): Promise<void> {
    // Dispatched goes out first on the same connection, so the server stores it before the task:
    // a takeover that sees it waits for the result instead of dispatching again (and the task's
    // msg id would drop a second copy anyway). Both are awaited together, one round trip. The
    // task carries what its context is compiled from, not the compiled prompt: the worker asks
    // the context service itself (docs/decisions/0033-dispatch-by-reference.md).
    await Promise.all([
      publishEnvelope(
        bus,
        bus.names.steps(start.run_id),
        StepRecordEnvelope,
        { v: 1, kind: 'dispatched', run_id: start.run_id, step, role },
        { msgId: msgIds.dispatched(start.run_id, step) },
      ),
      publishEnvelope(
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
          context: {
            message: start.message,
            focus_file_id: start.focus_file_id,
            attached_file_ids: start.attached_file_ids,
            ui_language: start.ui_language,
          },
          ...extras,
        },
        { msgId: msgIds.task(start.run_id, step) },
      ),
    ]);
  }
}
