import { type AgentRole, type GenerationMode, WRITE_CAPABLE_ROLES } from '@quill/contracts';
import type { RoutingRecord } from '../routing/routing-record.ts';

/**
 * Everything the pure workflow rules read besides the step results: the run's routing, the
 * author's words and the budgets. Built once per run; a takeover builds the same one from the
 * stored routing.
 */
export interface WorkflowPlan {
  routing: RoutingRecord;
  message: string;
  generationMode: GenerationMode;
  settings: WorkflowSettings;
}

export interface WorkflowSettings {
  /** AGENT_AUTO_REVIEW_THRESHOLD_CHARS: body chars in one delivery that send it to review. */
  autoReviewThresholdChars: number;
  maxReviewRounds: number;
}

/** Seed 000 `MAX_REVIEW_ROUNDS`: one review and one requested re-review at most. */
export const MAX_REVIEW_ROUNDS = 2;

/** File types whose body counts as 正文 for the review gate (docs/agent-behaviour.md `body_writes.py`). */
export const BODY_FILE_TYPES: readonly string[] = ['draft', 'script'];

/** Roles that plan rather than write the body; they get the "hand to writer" line. */
export const PLANNING_AGENTS: readonly AgentRole[] = ['planner', 'hook_designer'];

export function isWriteCapable(role: AgentRole): boolean {
  return WRITE_CAPABLE_ROLES.includes(role);
}

/** The planned agents after the initial one: the sequence after its first occurrence. */
export function remainingPlan(
  routing: Pick<RoutingRecord, 'current_agent' | 'workflow_agents'>,
): AgentRole[] {
  const agents = routing.workflow_agents;
  const index = agents.indexOf(routing.current_agent);
  return index >= 0 ? agents.slice(index + 1) : agents.filter((agent) => agent !== routing.current_agent);
}
