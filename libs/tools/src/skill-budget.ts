import { MAX_SKILLS_PER_REQUEST } from '@quill/contracts';
import { skillReadUsage } from '@quill/db';
import { recordSkillRead } from '@quill/db/workers';
import { estimateTextTokens } from '@quill/llm';
import type { ToolContext } from './types.ts';

/**
 * The per-request skill budget (docs/agent-behaviour.md skills/content_budget): skill text read by load_skill
 * and read_skill_resource counts against AGENT_SKILL_TOKEN_BUDGET, and at most three distinct
 * skills may be read per request. Usage lives in Postgres (skill_reads), so it holds across the
 * steps of a run whichever worker replica serves them.
 */
export const DEFAULT_SKILL_TOKEN_BUDGET = 16_000;
/** Below this many tokens left, a read is refused rather than cut to a useless sliver. */
const MIN_USEFUL_TOKENS = 200;

export type SkillCharge =
  | { ok: true; text: string; truncated: boolean; usedTokens: number; budget: number }
  | { ok: false; errorType: 'skill_limit_reached' | 'skill_budget_exhausted'; message: string };

/**
 * Charges `text` (cut to what the budget still allows) to the run; returns what may be shown.
 */
export async function chargeSkillText(
  context: ToolContext,
  skillName: string,
  path: string,
  text: string,
): Promise<SkillCharge> {
  const budget = context.skillTokenBudget ?? DEFAULT_SKILL_TOKEN_BUDGET;
  const usage = await skillReadUsage(context.pool, context.runId);
  if (!usage.skills.includes(skillName) && usage.skills.length >= MAX_SKILLS_PER_REQUEST) {
    return limitReached(usage.skills);
  }
  const remaining = budget - usage.usedTokens;
  let shown = text;
  let tokens = estimateTextTokens(shown);
  if (tokens > remaining) {
    if (remaining < MIN_USEFUL_TOKENS) return exhausted(usage.usedTokens, budget);
    shown = cutToTokens(text, remaining);
    tokens = estimateTextTokens(shown);
  }
  const charged = await recordSkillRead(context.pool, {
    runId: context.runId,
    skillName,
    path,
    tokens,
    tokenBudget: budget,
    maxSkills: MAX_SKILLS_PER_REQUEST,
  });
  if (!charged.ok) {
    return charged.reason === 'skill_limit'
      ? limitReached(charged.skills)
      : exhausted(charged.usedTokens, budget);
  }
  return {
    ok: true,
    text: shown,
    truncated: shown.length < text.length,
    usedTokens: charged.usedTokens,
    budget,
  };
}

function cutToTokens(text: string, maxTokens: number): string {
  let cut = Math.floor((text.length * maxTokens) / Math.max(1, estimateTextTokens(text)));
  while (cut > 0 && estimateTextTokens(text.slice(0, cut)) > maxTokens) cut = Math.floor(cut * 0.9);
  return text.slice(0, cut);
}

function limitReached(skills: readonly string[]): SkillCharge {
  return {
    ok: false,
    errorType: 'skill_limit_reached',
    message: `This request has already read ${MAX_SKILLS_PER_REQUEST} skills (${skills.join(', ')}); use what they say, or finish without another skill.`,
  };
}

function exhausted(used: number, budget: number): SkillCharge {
  return {
    ok: false,
    errorType: 'skill_budget_exhausted',
    message: `The skill token budget of this request is used up (${used}/${budget} tokens); continue with what you have read.`,
  };
}
