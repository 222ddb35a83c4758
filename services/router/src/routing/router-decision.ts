import {
  type AgentRole,
  AgentRole as AgentRoleSchema,
  type WorkflowPlanName,
  WorkflowPlanName as WorkflowPlanSchema,
} from '@quill/contracts';
import { z } from 'zod';

/**
 * The router's decision (docs/agent-behaviour.md 「Router」) and the plans it picks from. The model's JSON is
 * normalised here: a missing plan is inferred from the agent and vice versa, `workflow_agents`
 * is always recomputed from the plan and the author's scope (never trusted from the model), and
 * the scope is cut at MAX_SCOPE_CHARS whatever the model wrote.
 */
export const MAX_SCOPE_CHARS = 80;

/** The plan sequence that may follow the initial agent (docs/agent-behaviour.md `WORKFLOW_AGENTS`). */
export const WORKFLOW_AGENTS: Readonly<Record<WorkflowPlanName, readonly AgentRole[]>> = {
  quick: ['writer'],
  standard: ['planner', 'writer'],
  full: ['planner', 'hook_designer', 'writer'],
  hook_focus: ['hook_designer', 'writer'],
  review_only: ['quality_reviewer'],
};

const PLAN_OF_AGENT: Readonly<Record<AgentRole, WorkflowPlanName>> = {
  writer: 'quick',
  planner: 'standard',
  hook_designer: 'hook_focus',
  quality_reviewer: 'review_only',
};

export interface RouterDecision {
  current_agent: AgentRole;
  workflow_plan: WorkflowPlanName;
  /** The plan trimmed by the author's scope. */
  workflow_agents: AgentRole[];
  /** null: the model did not say (older answers); treated as "may write". */
  write_content: boolean | null;
  read_only: boolean;
  scope: string;
  requested_file_types: string[];
}

/** What the model may answer; every field is optional so that normalisation can fill gaps. */
const RouterAnswer = z.object({
  current_agent: AgentRoleSchema.optional(),
  workflow_plan: WorkflowPlanSchema.optional(),
  write_content: z.boolean().nullable().optional(),
  read_only: z.boolean().optional(),
  scope: z.string().optional(),
  requested_file_types: z.array(z.string()).optional(),
});

/** The safe default when routing fails or is off: the writer alone. */
export function defaultDecision(scope = ''): RouterDecision {
  return {
    current_agent: 'writer',
    workflow_plan: 'quick',
    workflow_agents: [...WORKFLOW_AGENTS.quick],
    write_content: null,
    read_only: false,
    scope: clipScope(scope),
    requested_file_types: [],
  };
}

/** Seed 000 `plan_workflow_agents`: write_content=false drops writer, read_only empties the plan. */
export function planWorkflowAgents(
  plan: WorkflowPlanName,
  scope: { write_content: boolean | null; read_only: boolean },
): AgentRole[] {
  if (scope.read_only) return [];
  const agents = [...WORKFLOW_AGENTS[plan]];
  return scope.write_content === false ? agents.filter((agent) => agent !== 'writer') : agents;
}

export function clipScope(scope: string): string {
  const trimmed = scope.trim().replace(/\s+/g, ' ');
  return [...trimmed].slice(0, MAX_SCOPE_CHARS).join('');
}

export type ParsedDecision = { ok: true; decision: RouterDecision } | { ok: false; problem: string };

/** Parses the router model's answer; anything unusable is reported, never thrown. */
export function parseRouterAnswer(text: string): ParsedDecision {
  const json = extractJsonObject(text);
  if (json === undefined) return { ok: false, problem: 'no JSON object in the answer' };
  const parsed = RouterAnswer.safeParse(json);
  if (!parsed.success) {
    return { ok: false, problem: parsed.error.issues.map((issue) => issue.path.join('.')).join(', ') };
  }
  const answer = parsed.data;
  if (!answer.current_agent && !answer.workflow_plan) return { ok: false, problem: 'no agent and no plan' };
  const workflowPlan = answer.workflow_plan ?? PLAN_OF_AGENT[answer.current_agent!];
  const currentAgent = answer.current_agent ?? WORKFLOW_AGENTS[workflowPlan][0]!;
  const writeContent = answer.write_content ?? null;
  const readOnly = answer.read_only ?? false;
  return {
    ok: true,
    decision: {
      current_agent: currentAgent,
      workflow_plan: workflowPlan,
      workflow_agents: planWorkflowAgents(workflowPlan, { write_content: writeContent, read_only: readOnly }),
      write_content: writeContent,
      read_only: readOnly,
      scope: clipScope(answer.scope ?? ''),
      requested_file_types: [...new Set(answer.requested_file_types ?? [])].slice(0, 8),
    },
  };
}

/** The first balanced JSON object in the text: models wrap JSON in fences or prose. */
function extractJsonObject(text: string): unknown {
  const start = text.indexOf('{');
  if (start === -1) return undefined;
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) {
      try {
        return JSON.parse(text.slice(start, index + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
