import { z } from 'zod';

export const AGENT_ROLES = ['planner', 'hook_designer', 'writer', 'quality_reviewer'] as const;
export const AgentRole = z.enum(AGENT_ROLES);
export type AgentRole = z.infer<typeof AgentRole>;

/** Roles whose tool set can change project files; served by the writer service. */
export const WRITE_CAPABLE_ROLES: readonly AgentRole[] = ['planner', 'hook_designer', 'writer'];

/** Seed 000 `WORKFLOW_AGENTS`: the plans a routing decision picks from. */
export const WORKFLOW_PLAN_NAMES = ['quick', 'standard', 'full', 'hook_focus', 'review_only'] as const;
export const WorkflowPlanName = z.enum(WORKFLOW_PLAN_NAMES);
export type WorkflowPlanName = z.infer<typeof WorkflowPlanName>;

export const GenerationMode = z.enum(['fast', 'quality']);
export type GenerationMode = z.infer<typeof GenerationMode>;

export const UiLanguage = z.enum(['zh', 'en']);
export type UiLanguage = z.infer<typeof UiLanguage>;

/** Seed 004 §3.4: the phase machine shared by sessions and runs. */
export const Phase = z.enum(['idle', 'running', 'waiting_user', 'done', 'error']);
export type Phase = z.infer<typeof Phase>;
