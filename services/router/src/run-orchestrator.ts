import { ack, type DeliveryContext, type Disposition, nak, publishEnvelope, term } from '@quill/bus';
import {
  type AgentRole,
  msgIds,
  type RunStartEnvelope,
  StepRecordEnvelope,
  TaskEnvelope,
} from '@quill/contracts';
import { requestStop, watchStop } from '@quill/run-control';
import type { Logger } from 'pino';
import type { CatchUpPace } from './catch-up-pace.ts';
import { readRouting } from './routing/route-run.ts';
import { findRunBegin } from './run-begin.ts';
import { type FinisherDependencies, finishRunWith, publishDone } from './run-finisher.ts';
import type { RunKeepAlive } from './run-keep-alive.ts';
import type { RunLeases } from './run-leases.ts';
import { createStepLogPace, openStepLog } from './step-log.ts';
import { nextAction } from './workflow/engine.ts';
import type { WorkflowPlan } from './workflow/workflow-plan.ts';
import type { TaskExtras, WorkflowRuntime } from './workflow/workflow-runtime.ts';
import type { FinishOutcome } from './workflow.ts';

export interface OrchestratorDependencies extends FinisherDependencies {
  logger: Logger;
  /** Routing, handoffs, held text and directives; the rules themselves are pure. */
  workflow: WorkflowRuntime;
  leases: RunLeases;
  /** The delivery's in-progress acks and the session lock and user slot, renewed per process. */
  keepAlive: RunKeepAlive;
  /** The step logs' budget of catch-ups, one per process (catch-up-pace.ts); default one made here. */
  catchUps?: CatchUpPace;
  settings: {
    maxIterations: number;
    wallClockMs: number;
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
  // The process's runs share one budget of step-log catch-ups (catch-up-pace.ts).
  const catchUps = dependencies.catchUps ?? createStepLogPace();

  return async function handleRunStart(
    start: RunStartEnvelope,
    delivery: DeliveryContext,
  ): Promise<Disposition> {
    const log = dependencies.logger.child({ run_id: start.run_id, session_id: start.session_id });
    // One round on the way to the first token: the run is taken (run and session → `running`,
    // one statement that also reads the row) and its lease held while the stop watch, the step
    // log and the routing reads open. A run that turns out to be over gives the lease back.
    const routingReads = readRouting(pool, start);
    // Awaited by the routing below; a run that goes no further leaves it unread.
    routingReads.catch(() => undefined);
    const leasing = dependencies.leases.hold(start.run_id, delivery.ackSubject, log);
    leasing.catch(() => undefined);
    const taking = dependencies.phases.takeRun(start.run_id);
    // Where the run's record begins, looked up while the run is taken (run-begin.ts).
    const runBegin = findRunBegin(bus, start);
    const [takeRead, stopRead, stepsRead] = await Promise.allSettled([
      taking,
      watchStop(bus, redis, keys, start.run_id),
      // Only a run taken before (a takeover) can have step records stored already.
      openStepLog(bus, start.run_id, log, {
        pace: catchUps,
        storedBefore: taking.then((taken) => taken.run.kind !== 'applied'),
        // A takeover reads the records from the run's start, not the stream's
        // (docs/decisions/0076, 0077).
        startAfter: async () => ((await runBegin.find()) ?? 1) - 1,
      }),
    ]);
    const closeOpened = async () => {
      await leasing.then(
        (held) => held.release(),
        () => undefined,
      );
      if (stopRead.status === 'fulfilled') stopRead.value.close();
      if (stepsRead.status === 'fulfilled') await stepsRead.value.close();
    };
    if (takeRead.status === 'rejected' || stopRead.status === 'rejected' || stepsRead.status === 'rejected') {
      await closeOpened();
      throw [takeRead, stopRead, stepsRead].find((read) => read.status === 'rejected')!.reason;
    }
    const taken = takeRead.value;
    const stopWatch = stopRead.value;
    const steps = stepsRead.value;
    const run =
      taken.found && taken.run.kind === 'applied'
        ? { ...taken.found, phase: 'running' as const }
        : taken.found;
    if (run?.phase !== 'running') {
      await closeOpened();
      if (!run) return term('unknown run');
      // Ended already; the router that ended it may have died before its last frame.
      await publishDone(bus, start.run_id, [...steps.state.results.values()]);
      return ack;
    }
    // A run found already `running` was taken before (by a router that died, froze or handed it
    // back): this delivery takes it over. The row says so, not JetStream's delivery count, which
    // can read 1 on a redelivery (seen after a peer handed a killed router's run back).
    if (taken.run.kind !== 'applied' || delivery.deliveryCount > 1)
      log.warn({ delivery: delivery.deliveryCount }, 'taking over run');
    else log.info('run taken');
    let lease: { release(): Promise<void> };
    try {
      lease = await leasing;
    } catch (error) {
      if (stopRead.status === 'fulfilled') stopRead.value.close();
      await steps.close();
      throw error;
    }

    const stopKeepingAlive = dependencies.keepAlive.keep({
      runId: start.run_id,
      sessionId: start.session_id,
      userId: start.user_id,
      working: () => delivery.message.working(),
      log,
    });
    const deadline = Date.parse(run.createdAt) + settings.wallClockMs;
    const epoch = run.epoch;
    let plan: WorkflowPlan | undefined;
    const finish = async (outcome: FinishOutcome) => {
      const closing = await dependencies.workflow.beforeFinish(start, plan, steps.state, outcome, log);
      const startedSeq = await runBegin.known();
      await finishRunWith(dependencies, start, steps.state, outcome, log, { ...closing, startedSeq });
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
          steps.stored(await dispatch(start, action.step, action.role, epoch, extras));
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
      stopKeepingAlive();
      stopWatch.close();
      await steps.close();
      await lease.release().catch((error: unknown) => log.warn({ err: error }, 'run lease release failed'));
    }
  };

  async function dispatch(
    start: RunStartEnvelope,
    step: number,
    role: AgentRole,
    epoch: number,
    extras: TaskExtras,
  ): Promise<number> {
    // Dispatched goes out first on the same connection, so the server stores it before the task:
    // a takeover that sees it waits for the result instead of dispatching again (and the task's
    // msg id would drop a second copy anyway). Both are awaited together, one round trip. The
    // task carries what its context is compiled from, not the compiled prompt: the worker asks
    // the context service itself (docs/decisions/0033-dispatch-by-reference.md). Returns where
    // the dispatched record is stored, for the step log's catch-ups.
    const [dispatched] = await Promise.all([
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
    return dispatched.seq;
  }
}
