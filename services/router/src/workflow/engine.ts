import type { AgentRole, StepResult } from '@quill/contracts';
import type { RunState } from '../run-state.ts';
import type { FinishOutcome } from '../workflow.ts';
import type { HeldText } from './held-text.ts';
import { repeatsTask } from './repeated-task.ts';
import { type Cursor, initialCursor, type PlannedStep } from './steps.ts';
import { afterStep, type HandoffNote, type Transition } from './transitions.ts';
import type { WorkflowPlan } from './workflow-plan.ts';

/**
 * The workflow as a fold over the step log: the same results always give the same next action,
 * so a router that takes a run over lands exactly where the previous one was (STYLE 6).
 */
export type WorkflowAction =
  | {
      kind: 'dispatch';
      step: number;
      role: AgentRole;
      planned: PlannedStep;
      /** Held texts to release, and the handoff frame to emit, before this step starts. */
      release: HeldText[];
      handoff?: HandoffNote;
    }
  | { kind: 'wait'; step: number }
  | { kind: 'finish'; outcome: FinishOutcome };

interface Walk {
  cursor: Cursor;
  transitions: Transition[];
  results: StepResult[];
}

export function walkWorkflow(state: RunState, plan: WorkflowPlan, maxIterations: number): Walk {
  const results = [...state.results.values()].sort((a, b) => a.step - b.step);
  let cursor = initialCursor(plan);
  const transitions: Transition[] = [];
  for (const result of results) {
    if (result.step !== cursor.current.step) break;
    const transition = afterStep(plan, cursor, result, maxIterations);
    transitions.push(transition);
    if (transition.kind === 'finish') break;
    cursor = transition.cursor;
  }
  return { cursor, transitions, results };
}

export function nextAction(state: RunState, plan: WorkflowPlan, maxIterations: number): WorkflowAction {
  const { cursor, transitions } = walkWorkflow(state, plan, maxIterations);
  const last = transitions.at(-1);
  if (last?.kind === 'finish') return { kind: 'finish', outcome: last.outcome };
  const planned = cursor.current;
  if (state.dispatched.has(planned.step)) return { kind: 'wait', step: planned.step };
  if (planned.step >= maxIterations) {
    return { kind: 'finish', outcome: { terminal: 'stopped', reason: 'collaboration_cap' } };
  }
  // A ping-pong that wrote nothing ends instead of going round again (docs/agent-behaviour.md 预算).
  if (repeatsTask(state.results, planned)) {
    return { kind: 'finish', outcome: { terminal: 'stopped', reason: 'repeated_task' } };
  }
  return {
    kind: 'dispatch',
    step: planned.step,
    role: planned.role,
    planned,
    release: last?.release ?? [],
    ...(last?.handoff ? { handoff: last.handoff } : {}),
  };
}

/** What the router does right before the terminal frame, however the run ends. */
export interface WorkflowClosing {
  release: HeldText[];
  discardedSteps: Set<number>;
  clarification?: { agent: AgentRole; question: string };
  readOnlyBlocked: boolean;
  /** The agent to resume with after an exhaustion stop: the one cut off, else the last that ran. */
  lastAgent: AgentRole | undefined;
  results: StepResult[];
}

/**
 * The closing also covers runs ended from outside the fold (stop, deadline): every held text
 * whose fate is still open is released, and a discard only stands if the reviewer it made way
 * for was really dispatched.
 */
export function closingFor(state: RunState, plan: WorkflowPlan, maxIterations: number): WorkflowClosing {
  const { cursor, transitions, results } = walkWorkflow(state, plan, maxIterations);
  const discardedSteps = new Set<number>();
  for (const transition of transitions) {
    if (transition.kind === 'next' && state.dispatched.has(transition.next.step)) {
      for (const held of transition.discard) discardedSteps.add(held.step);
    }
  }
  const last = transitions.at(-1);
  const lastAgent = results.at(-1)?.role ?? [...state.dispatched.values()].at(-1);
  if (last?.kind === 'finish') {
    return {
      release: last.release,
      discardedSteps,
      ...(last.clarification ? { clarification: last.clarification } : {}),
      readOnlyBlocked: last.readOnlyBlocked,
      lastAgent: last.cutOff ?? last.lastAgent,
      results,
    };
  }
  const undispatched = last?.kind === 'next' && !state.dispatched.has(last.next.step) ? last : undefined;
  const release = undispatched
    ? [...undispatched.release, ...undispatched.discard, ...cursor.held]
    : cursor.held;
  return {
    release: release.sort((a, b) => a.step - b.step),
    discardedSteps,
    readOnlyBlocked: cursor.readOnlyBlocked,
    lastAgent,
    results,
  };
}
