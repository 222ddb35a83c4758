import { type Bus, publishFrame } from '@quill/bus';
import {
  type FrameOf,
  frame,
  msgIds,
  type RunStartEnvelope,
  replyLanguage,
  type UiLanguage,
} from '@quill/contracts';
import type { RoutingContext } from '@quill/db';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { createdFiles } from '../round-outcome.ts';
import { type RoutingDependencies, routeRun } from '../routing/route-run.ts';
import type { RoutingOutcomeRecord } from '../routing/routing-record.ts';
import type { RunState } from '../run-state.ts';
import type { FinishOutcome } from '../workflow.ts';
import { closingFor, type WorkflowAction } from './engine.ts';
import { loadReviewEvidence } from './evidence-reads.ts';
import { buildDirective } from './handoff-packet.ts';
import { buildReply, type HeldText, releasedText } from './held-text.ts';
import type { WorkflowPlan, WorkflowSettings } from './workflow-plan.ts';

export interface WorkflowRuntimeDependencies extends RoutingDependencies {
  bus: Bus;
  pool: Pool;
  settings: WorkflowSettings;
  maxIterations: number;
}

/** TaskEnvelope fields the workflow decides for a step. */
export interface TaskExtras {
  directive: string;
  read_only?: true;
  clarify_first?: true;
  hold_chat?: true;
  author_language?: UiLanguage;
}

export interface FinishExtras {
  /** The author-facing reply to store (held texts that were discarded left out). */
  reply?: string;
  /** Files the round created that a writer removes once the run ended when still empty. */
  blankFiles?: string[];
  /**
   * The routing outcome for the author's message: the finisher writes it in the statement that
   * ends the run (so a failed write leaves the run to a takeover that finishes it again, and a
   * run that ended has it).
   */
  routingOutcome?: { messageId: string; patch: { outcome: RoutingOutcomeRecord } };
}

/**
 * The workflow's side effects around the pure rules: routing a run, the frames the router
 * publishes between steps (released held text, handoff) and before the terminal frame
 * (clarification, the non-terminal read-only stop), the directive each task carries, and the
 * files a read-only request created, for removal. Every frame has a fixed msg id, so a takeover repeating these is harmless.
 */
export function createWorkflowRuntime(dependencies: WorkflowRuntimeDependencies) {
  const { bus, pool, settings, maxIterations } = dependencies;

  /** Routes the run; `stopped` (the run's stop signal) skips or aborts the router model call. */
  async function plan(
    start: RunStartEnvelope,
    logger: Logger,
    stopped?: AbortSignal,
    reads?: Promise<RoutingContext>,
  ): Promise<WorkflowPlan> {
    const routing = await routeRun(dependencies, start, logger, stopped, reads);
    return planOf(start, routing);
  }

  function planOf(start: RunStartEnvelope, routing: WorkflowPlan['routing']): WorkflowPlan {
    return { routing, message: start.message, generationMode: start.generation_mode, settings };
  }

  async function beforeDispatch(
    start: RunStartEnvelope,
    workflow: WorkflowPlan,
    state: RunState,
    action: Extract<WorkflowAction, { kind: 'dispatch' }>,
  ): Promise<TaskExtras> {
    await releaseHeld(start.run_id, action.release);
    if (action.handoff) {
      await publishFrame(
        bus,
        frame('handoff', start.run_id, {
          from_agent: action.handoff.from,
          to_agent: action.handoff.to,
          reason: action.handoff.reason,
        }),
        { msgId: msgIds.handoff(start.run_id, action.step) },
      );
    }
    const prior = [...state.results.values()]
      .filter((result) => result.step < action.step)
      .sort((a, b) => a.step - b.step);
    const { planned } = action;
    const evidence =
      planned.review || planned.revision
        ? await loadReviewEvidence(pool, start, prior, planned.revision)
        : undefined;
    return {
      directive: buildDirective(workflow, planned, prior, evidence),
      ...(planned.readOnly ? { read_only: true } : {}),
      ...(planned.clarifyFirst ? { clarify_first: true } : {}),
      ...(planned.holdChat ? { hold_chat: true } : {}),
      author_language: replyLanguage(start.message, start.ui_language),
    };
  }

  /** Runs right before the terminal frame, however the run ends (complete, stop, deadline, error). */
  async function beforeFinish(
    start: RunStartEnvelope,
    workflow: WorkflowPlan | undefined,
    state: RunState,
    outcome: FinishOutcome,
    logger: Logger,
  ): Promise<FinishExtras> {
    if (!workflow) return {};
    const closing = closingFor(state, workflow, maxIterations);
    await releaseHeld(start.run_id, closing.release);
    const waiting = outcome.terminal === 'stopped' && outcome.reason === 'waiting_user';
    const clarification = waiting ? closing.clarification : undefined;
    if (clarification) {
      await publishFrame(bus, frame('clarification_requested', start.run_id, clarification), {
        msgId: msgIds.clarification(start.run_id),
      });
    }
    if (closing.readOnlyBlocked) {
      // Non-terminal: it goes out right before the terminal frame (docs/agent-behaviour.md 「只读请求不改文件」).
      await publishFrame(
        bus,
        frame('workflow_stopped', start.run_id, { reason: 'read_only_handoff_blocked' }),
        {
          msgId: msgIds.readOnlyBlocked(start.run_id),
        },
      );
    }
    const record: RoutingOutcomeRecord = {
      reason: outcomeReason(outcome),
      ...(closing.lastAgent ? { last_agent: closing.lastAgent } : {}),
      ...(clarification ? { waiting_agent: clarification.agent, question: clarification.question } : {}),
    };
    // A read-only request leaves no empty file behind: the finisher hands them to a writer.
    const blankFiles = workflow.routing.read_only ? createdFiles(closing.results) : [];
    if (blankFiles.length > 0)
      logger.info({ files: blankFiles }, 'read-only run: its created files to roll back');
    return {
      reply: buildReply(closing.results, closing.discardedSteps, clarification),
      ...(blankFiles.length > 0 ? { blankFiles } : {}),
      routingOutcome: { messageId: start.message_id, patch: { outcome: record } },
    };
  }

  async function releaseHeld(runId: string, held: readonly HeldText[]): Promise<void> {
    for (const item of held) {
      const content = releasedText(item);
      if (!content) continue;
      const text: FrameOf<'text'> = frame('text', runId, { agent: item.role, content });
      await publishFrame(bus, text, { msgId: msgIds.heldText(runId, item.step) });
    }
  }

  return { plan, beforeDispatch, beforeFinish };
}

export type WorkflowRuntime = ReturnType<typeof createWorkflowRuntime>;

function outcomeReason(outcome: FinishOutcome): string {
  if (outcome.terminal === 'complete') return 'completed';
  if (outcome.terminal === 'stopped') return outcome.reason;
  return outcome.code;
}
