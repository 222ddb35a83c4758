import { SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN } from '@quill/contracts';
import { getRunSkill, listRunSkills } from '@quill/db';
import { z } from 'zod';
import { chargeSkillText } from './skill-budget.ts';
import { failure, ok, type ToolContext, type ToolResult, type ToolSpec } from './types.ts';

/**
 * load_skill — L2 of a skill: its SKILL.md method and the list of its resources. The L1 catalog
 * (name + purpose) is in the system prompt; L3 (a resource) is read_skill_resource. Skill
 * scripts are text to read, never executed.
 */
const LoadSkillArgs = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(SKILL_NAME_MAX_LENGTH)
    .regex(SKILL_NAME_PATTERN)
    .describe('Skill name from the catalog.'),
});

export const SCRIPTS_NOTE = 'Scripts in a skill are reference text only; they are never executed.';

export const loadSkillTool: ToolSpec<typeof LoadSkillArgs> = {
  name: 'load_skill',
  description:
    'Load an enabled skill by name: its method (SKILL.md) and resource list. Counts against the per-request skill budget (at most 3 distinct skills).',
  parameters: LoadSkillArgs,
  writesFiles: false,
  parallelSafe: true,
  async handle(args, context) {
    // The version the run was launched with (docs/kernel.md "Definitions and pinning").
    const skill = await getRunSkill(context.pool, {
      runId: context.runId,
      userId: context.userId,
      name: args.name,
    });
    if (!skill) return skillNotFound(args.name, context);
    const charged = await chargeSkillText(context, skill.name, 'SKILL.md', skill.content);
    if (!charged.ok) return failure(charged.errorType, charged.message);
    return ok(
      `Loaded skill “${skill.name}”${charged.truncated ? ' (cut to the remaining skill budget)' : ''}.`,
      {
        name: skill.name,
        description: skill.description,
        content: charged.text,
        ...(charged.truncated
          ? { truncated: true, next_offset: charged.text.length, total_chars: skill.content.length }
          : {}),
        resources: skill.resources,
        skill_budget: { used_tokens: charged.usedTokens, budget_tokens: charged.budget },
        note: `${SCRIPTS_NOTE} Read a resource with read_skill_resource(name, path).`,
      },
    );
  },
};

export async function skillNotFound(name: string, context: ToolContext): Promise<ToolResult> {
  const available = (await listRunSkills(context.pool, { runId: context.runId, userId: context.userId })).map(
    (skill) => skill.name,
  );
  return failure(
    'skill_not_found',
    `No enabled skill named “${name}”. Enabled skills: ${available.length ? available.join(', ') : '(none)'}.`,
  );
}
