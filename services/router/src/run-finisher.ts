import { type Bus, publishFrame, requestReply } from '@quill/bus';
import {
  type BillingDecision,
  BillingSettleReply,
  BillingSettleRequest,
  errorFrame,
  frame,
  isReplicaFailure,
  mergeSources,
  msgIds,
  type RunStartEnvelope,
  type SettledRunRecord,
  type SseFrame,
  type StepResult,
  type UiLanguage,
} from '@quill/contracts';
import { type RedisClient, type RedisKeys, releaseRunSlots } from '@quill/redis';
import { quillMetrics, SpanStatusCode, trace } from '@quill/telemetry';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { breadcrumbsFor } from './breadcrumbs.ts';
import type { PhaseWriter } from './phases/phase-writer.ts';
import { archiveRun, type PublishedFrame, settledRecordCopy } from './phases/run-archive.ts';
import { createdFiles, requestBlankFileRemoval } from './round-outcome.ts';
import type { RunState } from './run-state.ts';
import type { FinishExtras } from './workflow/workflow-runtime.ts';
import { assistantReply, type FinishOutcome, toRunOutcome } from './workflow.ts';

export interface FinisherDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  requestTimeoutMs: number;
  /** All attempts of one bus request together (README "Fault tolerance"). */
  requestDeadlineMs: number;
  /** The only writer of run and session phases. */
  phases: PhaseWriter;
}

/**
 * Ends a run. Every step is idempotent and ordered so that a router dying anywhere in here can
 * be replaced by another that redoes it: frames carry fixed msg ids (JetStream stores each once),
 * settlement is once per run in billing, and the run row only transitions from running once.
 */
export async function finishRunWith(
  dependencies: FinisherDependencies,
  start: RunStartEnvelope,
  state: RunState,
  outcome: FinishOutcome,
  logger: Logger,
  extras: Pick<FinishExtras, 'reply' | 'blankFiles' | 'routingOutcome'> & {
    /** The sequence of the run's `run_started`, when known (run-begin.ts). */
    startedSeq?: number | undefined;
  } = {},
): Promise<void> {
  const { bus, pool } = dependencies;
  // A clarification ends the run waiting for the author (docs/agent-behaviour.md): run and session rest in
  // waiting_user and `clarification_pending` tells the next turn to inherit the routing.
  const waiting = outcome.terminal === 'stopped' && outcome.reason === 'waiting_user';
  const runId = start.run_id;
  await publishFrame(bus, terminalFrame(runId, outcome, start.ui_language), {
    msgId: msgIds.terminal(runId),
  });
  recordOutcome(outcome);

  let billingDecision: BillingDecision | undefined;
  // What the settlement read of the run, and the frames stored after it: the archive's copy.
  let settledRecord: SettledRunRecord | undefined;
  const storedAfter: PublishedFrame[] = [];
  const launched = launchedAt(start);
  try {
    const settlement = await requestReply(
      bus,
      bus.names.billingSettle,
      { request: BillingSettleRequest, reply: BillingSettleReply },
      {
        v: 1,
        run_id: runId,
        user_id: start.user_id,
        outcome: toRunOutcome(outcome),
        // Where billing's read of the run begins: at its `run_started`, or shortly before its
        // launch time when that was not found (docs/decisions/0075, 0077).
        ...(extras.startedSeq ? { started_seq: extras.startedSeq } : {}),
        ...(launched ? { launched_at: launched } : {}),
      },
      // Asked again until a billing replica answers (settling is once per run, so a repeat is
      // harmless); past the deadline the billing reconciler settles it (README "Fault tolerance").
      {
        timeoutMs: dependencies.requestTimeoutMs,
        deadlineMs: dependencies.requestDeadlineMs,
        retryReply: isReplicaFailure,
      },
    );
    if (settlement.ok) {
      billingDecision = settlement.decision;
      settledRecord = settlement.record;
      if (settlement.credits_refunded > 0) {
        const refunded = frame('quota_refunded', runId, { credits: settlement.credits_refunded });
        const stored = await publishFrame(bus, refunded, { msgId: msgIds.refund(runId) });
        storedAfter.push({ seq: stored.seq, frame: refunded, duplicate: stored.duplicate });
      }
    } else {
      quillMetrics().billingSettlementFailures.add(1, { kind: 'refused' });
      logger.error({ code: settlement.code }, 'settlement refused');
    }
  } catch (error) {
    quillMetrics().billingSettlementFailures.add(1, { kind: 'unanswered' });
    // `done` must still follow the terminal frame; the run row keeps billing_decision null,
    // which is what the billing reconciler looks for.
    logger.error({ err: error }, 'settlement failed; left to reconciliation');
  }

  const results = [...state.results.values()];
  const refunded =
    billingDecision === 'refund' && outcome.terminal !== 'complete' ? createdFiles(results) : [];
  const blank = [...(extras.blankFiles ?? []), ...refunded];
  if (
    await requestBlankFileRemoval(
      bus,
      start,
      blank,
      extras.blankFiles?.length ? 'read_only' : 'refunded_round',
    )
  ) {
    logger.info({ files: blank }, 'blank files of the round handed to a writer for removal');
  }
  const reply = extras.reply ?? assistantReply(state);
  // What the run did to files, for the next turn's history and working set.
  const breadcrumbs = breadcrumbsFor(results);
  // One statement: the run and session rows, the routing outcome on the author's message and the
  // round's reply (the author's next run inherits the one and finds the other in its history),
  // and whether AI output now waits for the author's acceptance. Should it fail, the run is
  // still `running`, so the router that takes it over finishes it again, all of it included
  // (the frames and the settlement it repeats are stored and made once).
  const ended = await dependencies.phases.endRun(
    { runId, sessionId: start.session_id },
    {
      phase: outcome.terminal === 'error' ? 'error' : waiting ? 'waiting_user' : 'done',
      stopReason:
        outcome.terminal === 'stopped'
          ? outcome.reason
          : outcome.terminal === 'complete'
            ? 'completed'
            : 'error',
      ...(outcome.terminal === 'error' ? { errorCode: outcome.code } : {}),
      ...(billingDecision ? { billingDecision } : {}),
      modelCalls: results.reduce((sum, result) => sum + result.model_calls, 0),
      toolCalls: results.reduce((sum, result) => sum + result.tool_calls, 0),
    },
    {
      ...(waiting ? { clarificationPending: true } : {}),
      ...(reply || breadcrumbs ? { reply: { content: reply, breadcrumbs } } : {}),
      ...(extras.routingOutcome ? { routing: extras.routingOutcome } : {}),
      acceptance: !waiting && outcome.terminal !== 'error',
    },
  );
  // AI output of this session left for the author to accept: the session waits for them, the run
  // is over (docs/architecture.md "Phases", docs/kernel.md "Artifacts and acceptance"). Before the
  // lock goes: the author's next run must find the session's phase. Only an end that moved the
  // run reads it.
  if (ended.awaitsAcceptance) {
    await dependencies.phases.sessionAwaitsAcceptance({ runId, sessionId: start.session_id });
  }
  await releaseRunSlots(
    dependencies.redis,
    {
      sessionLock: dependencies.keys.sessionLock(start.session_id),
      userSemaphore: dependencies.keys.userSemaphore(start.user_id),
    },
    runId,
  );
  // `done` goes last: a client that sees it may start its next run at once, so the session lock
  // and the run slot must already be free. A router dying before this line is replaced by one
  // that finds the run ended and sends `done` (publishDone).
  storedAfter.push(await publishDone(bus, runId, [...state.results.values()]));
  logger.info({ outcome, billing_decision: billingDecision }, 'run finished');
  // The stream is complete: copy it to the archive (docs/architecture.md "Run archive"), from the
  // settlement's read when its reply carried it (a long run's does not: the archive reads it). A
  // failure here is left to the router's sweep, which archives every ended run it finds unarchived.
  const known = settledRecord ? settledRecordCopy(settledRecord, storedAfter) : undefined;
  await archiveRun(bus, pool, runId, known, { startedSeq: extras.startedSeq, launchedAt: launched }).catch(
    (error: unknown) => logger.warn({ err: error }, 'run archive deferred to the sweep'),
  );
}

/** The run's launch time, when its start envelope holds one the settle request accepts. */
function launchedAt(start: RunStartEnvelope): string | undefined {
  const parsed = BillingSettleRequest.shape.launched_at.safeParse(start.created_at);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The run's metric, and ERROR on the router's run span (the active one) for a run that ended in
 * an error, with the code, so a failed run reads as failed in Jaeger (docs/operations.md "Traces").
 */
function recordOutcome(outcome: FinishOutcome): void {
  const reason =
    outcome.terminal === 'error'
      ? outcome.code
      : outcome.terminal === 'stopped'
        ? outcome.reason
        : 'completed';
  quillMetrics().runsFinished.add(1, { terminal: outcome.terminal, reason });
  const span = trace.getActiveSpan();
  span?.setAttribute('quill.run.terminal', outcome.terminal);
  if (outcome.terminal === 'error') {
    span?.setAttribute('error.type', outcome.code);
    span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
  } else if (outcome.terminal === 'stopped') span?.setAttribute('quill.stop_reason', outcome.reason);
}

/**
 * `done` carries a fixed msg id: sending it again after a takeover stores nothing new. Returns
 * the frame with its stream sequence (the one already stored, for a repeat, marked so).
 */
export async function publishDone(
  bus: Bus,
  runId: string,
  results: readonly StepResult[] = [],
): Promise<PublishedFrame> {
  // The run's sources, as its tools reported them (docs/protocol.md, sources), once each.
  const sources = mergeSources(
    ...[...results].sort((a, b) => a.step - b.step).map((result) => result.sources),
  );
  const done = frame('done', runId, sources.length > 0 ? { sources } : {});
  const stored = await publishFrame(bus, done, { msgId: msgIds.done(runId) });
  return { seq: stored.seq, frame: done, duplicate: stored.duplicate };
}

function terminalFrame(runId: string, outcome: FinishOutcome, language: UiLanguage): SseFrame {
  if (outcome.terminal === 'complete') return frame('workflow_complete', runId, {});
  if (outcome.terminal === 'stopped') return frame('workflow_stopped', runId, { reason: outcome.reason });
  return errorFrame(runId, outcome.code, language);
}
