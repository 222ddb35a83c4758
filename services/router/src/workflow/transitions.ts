import type { AgentRole, StepResult } from '@quill/contracts';
import type { FinishOutcome } from '../workflow.ts';
import { outcomeOfUnfinished } from '../workflow.ts';
import { authorLanguage, plannedHandoffReason, reviewGateReason } from './author-facing.ts';
import { type HeldText, heldTextOf, questionsIn } from './held-text.ts';
import { needsOutlineCorrection } from './outline-correction.ts';
import { type Cursor, type PlannedStep, planStep, type StepSpec } from './steps.ts';
import { BODY_FILE_TYPES, isWriteCapable, type WorkflowPlan } from './workflow-plan.ts';

/**
 * What happens after one step result (docs/agent-behaviour.md 「多 Agent 协作」), as a pure function. In order:
 * the step failed or stopped → finish; it asked the author → finish waiting; an explicit handoff
 * that the scope allows; a file-stream continuation; the planner's outline correction; the next
 * planned agent; the auto review
 * gate; the first message's summary round; otherwise the run is complete.
 */
export interface HandoffNote {
  from: AgentRole;
  to: AgentRole;
  reason: string;
}

export type Transition =
  | {
      kind: 'next';
      next: PlannedStep;
      cursor: Cursor;
      /** Held texts to publish before the next agent starts. */
      release: HeldText[];
      /** Held texts dropped because the delivery really goes to review. */
      discard: HeldText[];
      handoff?: HandoffNote;
    }
  | {
      kind: 'finish';
      outcome: FinishOutcome;
      release: HeldText[];
      clarification?: { agent: AgentRole; question: string };
      readOnlyBlocked: boolean;
      lastAgent: AgentRole;
      /** The agent the collaboration cap kept from running: 「继续」 resumes with it. */
      cutOff?: AgentRole;
    };

type HandoffVerdict = 'allow' | 'blocked_read_only' | 'dropped_first_message' | 'dropped';

export function afterStep(
  plan: WorkflowPlan,
  cursor: Cursor,
  result: StepResult,
  maxIterations: number,
): Transition {
  const step = cursor.current;
  const heldNow = heldTextOf(result);
  const held = heldNow ? [...cursor.held, heldNow] : cursor.held;
  const bodyChars = cursor.deliveryBodyChars + (step.inDelivery ? bodyCharsWritten(result) : 0);
  let readOnlyBlocked = cursor.readOnlyBlocked;
  const finish = (outcome: FinishOutcome, extra: Partial<Extract<Transition, { kind: 'finish' }>> = {}) =>
    ({ kind: 'finish', outcome, release: held, readOnlyBlocked, lastAgent: result.role, ...extra }) as const;

  if (result.outcome !== 'completed') return finish(outcomeOfUnfinished(result));
  if (result.clarification) {
    return finish(
      { terminal: 'stopped', reason: 'waiting_user' },
      { clarification: { agent: result.role, question: result.clarification.question } },
    );
  }

  const base: Cursor = { ...cursor, held, deliveryBodyChars: bodyChars };
  const nextIndex = result.step + 1;
  const fits = nextIndex < maxIterations;
  const advance = (spec: StepSpec, changes: Partial<Cursor> = {}): Transition => {
    if (!fits) return finish({ terminal: 'stopped', reason: 'collaboration_cap' }, { cutOff: spec.role });
    return moveTo(plan, { ...base, readOnlyBlocked, ...changes }, step, spec, nextIndex);
  };
  const language = authorLanguage(plan.message);

  let droppedFirstMessageReview = false;
  if (result.handoff) {
    const verdict = judgeHandoff(plan, cursor, step, result.handoff.to_agent);
    if (verdict === 'blocked_read_only') readOnlyBlocked = true;
    if (verdict === 'dropped_first_message') droppedFirstMessageReview = true;
    if (verdict === 'allow') {
      const target = result.handoff.to_agent;
      const alongPlan = step.remaining[0] === target;
      return advance({
        role: target,
        kind: alongPlan ? 'planned' : 'explicit',
        from: step.role,
        reason: result.handoff.reason,
        // Out-of-plan jumps do not add to the delivery (docs/agent-behaviour.md 「计划外跳转不累计」).
        inDelivery: alongPlan && isWriteCapable(target) && !step.revision,
        // Back from review to a writing role outside the plan is a revision (not re-reviewed
        // automatically); back along the plan the delivery simply goes on.
        revision: isWriteCapable(target) && !alongPlan && (step.role === 'quality_reviewer' || step.revision),
        review: target === 'quality_reviewer',
        remaining: alongPlan ? step.remaining.slice(1) : step.remaining,
        writerQuestions: step.writerQuestions,
      });
    }
  }

  if (fits && !result.handoff && continues(step, result)) {
    return advance({ ...specOf(step), kind: 'continuation', from: step.role, reason: '' });
  }

  if (fits && !result.handoff && needsOutlineCorrection(plan, cursor, step, result)) {
    return advance(
      { ...specOf(step), kind: 'outline_correction', from: step.role, reason: '' },
      { outlineCorrected: true },
    );
  }

  const planned = step.remaining[0];
  if (planned) {
    return advance({
      role: planned,
      kind: 'planned',
      from: step.role,
      reason: plannedHandoffReason(planned, language),
      inDelivery: isWriteCapable(planned) && !step.revision,
      revision: false,
      review: planned === 'quality_reviewer',
      remaining: step.remaining.slice(1),
    });
  }

  if (fits && reviewGateReached(plan, cursor, step, bodyChars)) {
    return advance({
      role: 'quality_reviewer',
      kind: 'review_gate',
      from: step.role,
      reason: reviewGateReason(bodyChars, language),
      inDelivery: false,
      revision: false,
      review: true,
      remaining: [],
    });
  }

  // Seed 000 「作品第一条消息不送审」: the writer's own review handoff was dropped and it told the
  // author nothing, so the same writer writes its delivery note once.
  if (
    fits &&
    droppedFirstMessageReview &&
    step.role === 'writer' &&
    !cursor.summaryUsed &&
    !result.final_text.trim()
  ) {
    return advance(
      { ...specOf(step), kind: 'summary', from: step.role, reason: '', inDelivery: false },
      { summaryUsed: true },
    );
  }
  return finish({ terminal: 'complete' });
}

/** Successfully persisted body chars (draft / script) of one step. */
export function bodyCharsWritten(result: StepResult): number {
  return result.files_written
    .filter((write) => BODY_FILE_TYPES.includes(write.file_type))
    .reduce((sum, write) => sum + write.body_chars, 0);
}

function judgeHandoff(
  plan: WorkflowPlan,
  cursor: Cursor,
  step: PlannedStep,
  target: AgentRole,
): HandoffVerdict {
  if (target === step.role || step.clarifyFirst) return 'dropped';
  if (plan.routing.read_only && isWriteCapable(target)) return 'blocked_read_only';
  if (target === 'quality_reviewer') {
    if (plan.routing.first_message && step.role === 'writer') return 'dropped_first_message';
    if (cursor.reviewRounds >= plan.settings.maxReviewRounds) return 'dropped';
  }
  return 'allow';
}

/** Seed 000 「写完 </file> 就结束 run 时同一 agent 续写」. */
function continues(step: PlannedStep, result: StepResult): boolean {
  return (
    isWriteCapable(step.role) &&
    !step.readOnly &&
    !step.clarifyFirst &&
    step.kind !== 'summary' &&
    result.ended_on_file_block === true &&
    result.files_written.length > 0
  );
}

function reviewGateReached(
  plan: WorkflowPlan,
  cursor: Cursor,
  step: PlannedStep,
  bodyChars: number,
): boolean {
  return (
    plan.routing.auto_review &&
    step.role === 'writer' &&
    step.inDelivery &&
    !step.revision &&
    bodyChars > 0 &&
    bodyChars >= plan.settings.autoReviewThresholdChars &&
    cursor.reviewRounds < plan.settings.maxReviewRounds
  );
}

function specOf(step: PlannedStep): StepSpec {
  return {
    role: step.role,
    kind: step.kind,
    reason: step.reason,
    inDelivery: step.inDelivery,
    revision: step.revision,
    review: step.review,
    remaining: step.remaining,
    writerQuestions: step.writerQuestions,
  };
}

/** Builds the next step and decides the fate of the held texts for it. */
function moveTo(
  plan: WorkflowPlan,
  cursor: Cursor,
  from: PlannedStep,
  spec: StepSpec,
  index: number,
): Transition {
  const reviewRounds = cursor.reviewRounds + (spec.review ? 1 : 0);
  let release: HeldText[] = [];
  let discard: HeldText[] = [];
  let pending: HeldText[] = [];
  let writerQuestions = spec.writerQuestions ?? [];
  const next = (questions: string[]) =>
    planStep(plan, index, cursor.reviewRounds, { ...spec, writerQuestions: questions });
  if (spec.review) {
    discard = cursor.held;
    writerQuestions = [...writerQuestions, ...questionsIn(cursor.held)];
  } else {
    const candidate = next(writerQuestions);
    // Along the plan prefix (or a continuation) the delivery may still reach review: keep holding.
    const defer =
      spec.kind === 'continuation' ||
      spec.kind === 'outline_correction' ||
      (spec.kind === 'planned' && candidate.holdChat);
    if (defer) pending = cursor.held;
    else release = cursor.held;
  }
  const planned = next(writerQuestions);
  return {
    kind: 'next',
    next: planned,
    cursor: { ...cursor, current: planned, reviewRounds, held: pending },
    release,
    discard,
    ...(planned.role !== from.role
      ? { handoff: { from: from.role, to: planned.role, reason: spec.reason } }
      : {}),
  };
}
