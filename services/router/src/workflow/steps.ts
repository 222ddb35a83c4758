import type { AgentRole } from '@quill/contracts';
import type { HeldText } from './held-text.ts';
import { isWriteCapable, remainingPlan, type WorkflowPlan } from './workflow-plan.ts';

/** How a step came to run (docs/agent-behaviour.md: the three handoff kinds plus the router's own rounds). */
export type StepKind =
  | 'initial'
  | 'planned'
  | 'explicit'
  | 'review_gate'
  | 'continuation'
  | 'summary'
  | 'outline_correction';

/** One step as the workflow plans it, before it is dispatched. */
export interface PlannedStep {
  step: number;
  role: AgentRole;
  kind: StepKind;
  /** The agent that handed over, and why (author-facing, in the handoff frame and the directive). */
  from?: AgentRole;
  reason: string;
  /** Its successful body writes count toward the review gate of this delivery. */
  inDelivery: boolean;
  /** A writer revising after review: its draft is not sent to review again automatically. */
  revision: boolean;
  /** A quality_reviewer round (counts toward MAX_REVIEW_ROUNDS). */
  review: boolean;
  holdChat: boolean;
  readOnly: boolean;
  clarifyFirst: boolean;
  /** The content writer's questions for the author, carried to the reviewer / revising writer. */
  writerQuestions: string[];
  /** The planned agents still to come after this step. */
  remaining: AgentRole[];
}

/** What the workflow carries from step to step; rebuilt by folding the step results. */
export interface Cursor {
  current: PlannedStep;
  deliveryBodyChars: number;
  reviewRounds: number;
  /** Held texts whose fate is not decided yet (deferred along the plan prefix / continuation). */
  held: HeldText[];
  readOnlyBlocked: boolean;
  summaryUsed: boolean;
  /** The planner's outline correction round already ran (once per run). */
  outlineCorrected: boolean;
}

export type StepSpec = Pick<
  PlannedStep,
  'role' | 'kind' | 'reason' | 'inDelivery' | 'revision' | 'review'
> & {
  from?: AgentRole;
  remaining: AgentRole[];
  writerQuestions?: string[];
};

export function planStep(
  plan: WorkflowPlan,
  step: number,
  reviewRounds: number,
  spec: StepSpec,
): PlannedStep {
  const { routing } = plan;
  const readOnly = routing.read_only;
  const clarifyFirst = routing.clarify_first;
  // Seed 000 「只给作者一份总结」: only a non-fast, non-revision writing step that may still go to
  // review holds its chat text back.
  const mayGoToReview = (routing.auto_review && spec.inDelivery) || spec.remaining[0] === 'quality_reviewer';
  const holdChat =
    plan.generationMode === 'quality' &&
    isWriteCapable(spec.role) &&
    !readOnly &&
    !clarifyFirst &&
    !spec.revision &&
    spec.kind !== 'summary' &&
    routing.write_content !== false &&
    reviewRounds < plan.settings.maxReviewRounds &&
    mayGoToReview;
  return {
    step,
    role: spec.role,
    kind: spec.kind,
    ...(spec.from ? { from: spec.from } : {}),
    reason: spec.reason,
    inDelivery: spec.inDelivery,
    revision: spec.revision,
    review: spec.review,
    holdChat,
    readOnly,
    clarifyFirst,
    writerQuestions: spec.writerQuestions ?? [],
    remaining: spec.remaining,
  };
}

export function initialCursor(plan: WorkflowPlan): Cursor {
  const role = plan.routing.current_agent;
  const current = planStep(plan, 0, 0, {
    role,
    kind: 'initial',
    reason: '',
    inDelivery: isWriteCapable(role),
    revision: false,
    review: role === 'quality_reviewer',
    remaining: remainingPlan(plan.routing),
  });
  return {
    current,
    deliveryBodyChars: 0,
    reviewRounds: current.review ? 1 : 0,
    held: [],
    readOnlyBlocked: false,
    summaryUsed: false,
    outlineCorrected: false,
  };
}
