import { defaultDecision, planWorkflowAgents, type RouterDecision } from './router-decision.ts';
import type { RoutingRecord, RoutingSource } from './routing-record.ts';
import { proposedSingleChange } from './single-proposal.ts';

/**
 * The deterministic routes that run before the router model (docs/agent-behaviour.md 「请求与流」 step 3), in
 * order: resume after exhaustion → vague edit request asks first → inherit the routing after a
 * clarification answer (llm strategy only). A hit skips the model call.
 */

/** Stop reasons after which 「继续」 resumes the cut-off work instead of starting something new. */
export const EXHAUSTION_REASONS: readonly string[] = [
  'collaboration_cap',
  'tool_turns_exhausted',
  'model_call_cap',
  'token_budget',
  'no_progress',
  'wall_clock_timeout',
];

const CONTINUE_ONLY =
  /^(请|那就|好的?|嗯)?(继续|接着|继续写|接着写|继续吧|接着来|go on|continue|keep going)(吧|啊|呀|。|!|！|\.)*$/i;

export function isContinueOnly(message: string): boolean {
  return CONTINUE_ONLY.test(message.trim().replace(/\s+/g, ' '));
}

/**
 * A request to "improve it" that names neither where nor how (docs/agent-behaviour.md `is_vague_edit_request`).
 * Anything concrete — a chapter, a quote, a number, a named aspect — makes it specific.
 */
const VAGUE_EDIT = [
  /^(请|麻烦|帮我|你|再)*(帮我|给我)?(再)?(改|修改|优化|润色|调整|改进|完善|打磨|提升)(一下|一改|改|下)?(吧|呢|啊|呀)?$/,
  /^(请|帮我|再)*(改|写)得?(更)?好(一点|一些|些)?(吧|呢)?$/,
  /^(please )?(improve|polish|revise|edit|fix|rework) (it|this|that)( a bit| please)?$/i,
  /^(please )?make (it|this) better( please)?$/i,
];

export function isVagueEditRequest(message: string): boolean {
  const normalized = message
    .trim()
    .replace(/[\s，。！？、,.!?~～…]+$/g, '')
    .replace(/\s+/g, ' ');
  return VAGUE_EDIT.some((pattern) => pattern.test(normalized));
}

export interface ContinuationInputs {
  message: string;
  /** The routing stored with the author's previous message, if any. */
  previous: RoutingRecord | undefined;
  /** `sessions.clarification_pending`: the last run ended asking the author (typed, never guessed). */
  clarificationPending: boolean;
  strategy: 'llm' | 'off';
  /** The previous assistant reply, when there was one: a single proposal in it is what 「改一下」 means. */
  previousAssistant?: string | undefined;
}

export interface Continuation {
  decision: RouterDecision;
  source: RoutingSource;
  clarifyFirst: boolean;
}

export function deterministicRoute(inputs: ContinuationInputs): Continuation | undefined {
  const { previous } = inputs;
  if (
    previous?.outcome &&
    EXHAUSTION_REASONS.includes(previous.outcome.reason) &&
    isContinueOnly(inputs.message)
  ) {
    const agent = previous.outcome.last_agent ?? previous.current_agent;
    return {
      decision: { ...decisionOf(previous), current_agent: agent },
      source: 'resume',
      clarifyFirst: false,
    };
  }
  // Asked once already (the previous turn was this very rule), or the previous reply proposed
  // exactly one change (the request means that one): do not ask.
  if (
    isVagueEditRequest(inputs.message) &&
    previous?.source !== 'clarify_first' &&
    !proposedSingleChange(inputs.previousAssistant)
  ) {
    return {
      decision: { ...defaultDecision(inputs.message), workflow_agents: [] },
      source: 'clarify_first',
      clarifyFirst: true,
    };
  }
  if (
    inputs.strategy === 'llm' &&
    inputs.clarificationPending &&
    previous &&
    previous.source !== 'clarify_first'
  ) {
    // Answering a clarification keeps every routing field; the agent that asked carries on.
    const agent = previous.outcome?.waiting_agent ?? previous.current_agent;
    return {
      decision: { ...decisionOf(previous), current_agent: agent },
      source: 'inherited',
      clarifyFirst: false,
    };
  }
  return undefined;
}

function decisionOf(record: RoutingRecord): RouterDecision {
  return {
    current_agent: record.current_agent,
    workflow_plan: record.workflow_plan,
    workflow_agents: planWorkflowAgents(record.workflow_plan, record),
    write_content: record.write_content,
    read_only: record.read_only,
    scope: record.scope,
    requested_file_types: [...record.requested_file_types],
  };
}
