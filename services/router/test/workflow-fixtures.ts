import type { AgentRole, StepResult } from '@quill/contracts';
import { defaultDecision, planWorkflowAgents, type RouterDecision } from '../src/routing/router-decision.ts';
import type { RoutingRecord } from '../src/routing/routing-record.ts';
import { applyStepRecord, emptyRunState, type RunState } from '../src/run-state.ts';
import { nextAction, type WorkflowAction } from '../src/workflow/engine.ts';
import type { WorkflowPlan } from '../src/workflow/workflow-plan.ts';

/** Builders for the pure workflow tests: a plan from a routing, results, and a run driven step by step. */
export function planOf(
  decision: Partial<RouterDecision>,
  options: Partial<Pick<RoutingRecord, 'first_message' | 'clarify_first' | 'auto_review'>> & {
    mode?: 'fast' | 'quality';
    threshold?: number;
    message?: string;
  } = {},
): WorkflowPlan {
  const merged = { ...defaultDecision(), ...decision };
  const mode = options.mode ?? 'fast';
  const routing: RoutingRecord = {
    v: 1,
    ...merged,
    workflow_agents: decision.workflow_agents ?? planWorkflowAgents(merged.workflow_plan, merged),
    source: 'llm',
    first_message: options.first_message ?? false,
    clarify_first: options.clarify_first ?? false,
    auto_review: options.auto_review ?? (mode === 'quality' && !options.first_message && !merged.read_only),
  };
  return {
    routing,
    message: options.message ?? '写第一章',
    generationMode: mode,
    settings: { autoReviewThresholdChars: options.threshold ?? 500, maxReviewRounds: 2 },
  };
}

export function result(step: number, role: AgentRole, fields: Partial<StepResult> = {}): StepResult {
  return {
    step,
    role,
    worker_instance: `${role === 'quality_reviewer' ? 'reviewer' : 'writer'}-1`,
    outcome: 'completed',
    stop_reason: 'stop',
    final_text: '',
    files_written: [],
    model_calls: 1,
    tool_calls: 0,
    ...fields,
  };
}

export function draft(chars: number, fileType = 'draft') {
  return {
    file_id: `f-${chars}-${fileType}`,
    title: '第一章',
    file_type: fileType,
    version: 1,
    body_chars: chars,
  };
}

export function stateOf(results: StepResult[], dispatchedExtra: number[] = []): RunState {
  let state = emptyRunState;
  let seq = 0;
  for (const item of results) {
    state = applyStepRecord(
      state,
      { v: 1, kind: 'dispatched', run_id: 'r', step: item.step, role: item.role },
      ++seq,
    );
    state = applyStepRecord(state, { v: 1, kind: 'result', run_id: 'r', result: item }, ++seq);
  }
  for (const step of dispatchedExtra) {
    state = applyStepRecord(state, { v: 1, kind: 'dispatched', run_id: 'r', step, role: 'writer' }, ++seq);
  }
  return state;
}

/**
 * Drives a run: `respond` answers each dispatched step; returns every action taken in order, ending
 * with the finish.
 */
export function drive(
  plan: WorkflowPlan,
  respond: (action: Extract<WorkflowAction, { kind: 'dispatch' }>) => Partial<StepResult>,
  maxIterations = 12,
): { actions: WorkflowAction[]; results: StepResult[]; state: RunState } {
  const results: StepResult[] = [];
  const actions: WorkflowAction[] = [];
  for (let guard = 0; guard < 50; guard++) {
    const action = nextAction(stateOf(results), plan, maxIterations);
    actions.push(action);
    if (action.kind !== 'dispatch') break;
    results.push(result(action.step, action.role, respond(action)));
  }
  return { actions, results, state: stateOf(results) };
}

export function dispatchedRoles(actions: WorkflowAction[]): AgentRole[] {
  return actions.flatMap((action) => (action.kind === 'dispatch' ? [action.role] : []));
}
