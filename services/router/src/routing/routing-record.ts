import { AgentRole, WorkflowPlanName } from '@quill/contracts';
import { z } from 'zod';

/**
 * What is persisted in `messages.routing` of the author's message: the decision, how it was
 * reached, and (once the run ends) how the run ended. The next turn reads it back as
 * 「[上一轮路由]」 and for the deterministic continuations; a takeover router reuses it instead of
 * routing again, so one run is routed once.
 */
export const ROUTING_SOURCES = ['llm', 'fallback', 'off', 'resume', 'clarify_first', 'inherited'] as const;
export type RoutingSource = (typeof ROUTING_SOURCES)[number];

export const RoutingOutcomeRecord = z.object({
  reason: z.string(),
  last_agent: AgentRole.optional(),
  /** Set when the run ended waiting for the author: who asked, and what. */
  waiting_agent: AgentRole.optional(),
  question: z.string().optional(),
});
export type RoutingOutcomeRecord = z.infer<typeof RoutingOutcomeRecord>;

export const RoutingRecord = z.object({
  v: z.literal(1),
  current_agent: AgentRole,
  workflow_plan: WorkflowPlanName,
  workflow_agents: z.array(AgentRole),
  write_content: z.boolean().nullable(),
  read_only: z.boolean(),
  scope: z.string(),
  requested_file_types: z.array(z.string()),
  source: z.enum(ROUTING_SOURCES),
  /** The author's first message in this work (docs/agent-behaviour.md first-turn rules). */
  first_message: z.boolean(),
  /** A vague edit request: the writer asks first and may not write (docs/agent-behaviour.md 「笼统要求先问清楚」). */
  clarify_first: z.boolean(),
  /** quality mode, not the first message, not read-only: the auto review gate is on. */
  auto_review: z.boolean(),
  outcome: RoutingOutcomeRecord.optional(),
});
export type RoutingRecord = z.infer<typeof RoutingRecord>;

/** A stored routing JSON, or undefined when absent or from an incompatible version. */
export function readRoutingRecord(value: unknown): RoutingRecord | undefined {
  const parsed = RoutingRecord.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The one-line JSON the router model sees as 「[上一轮路由]」: the decision, not the bookkeeping. */
export function routingLine(record: RoutingRecord): string {
  return JSON.stringify({
    current_agent: record.current_agent,
    workflow_plan: record.workflow_plan,
    workflow_agents: record.workflow_agents,
    write_content: record.write_content,
    read_only: record.read_only,
    scope: record.scope,
    requested_file_types: record.requested_file_types,
    ...(record.outcome ? { outcome: record.outcome.reason } : {}),
  });
}
