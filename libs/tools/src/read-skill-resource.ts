import { SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN } from '@quill/contracts';
import { getRunSkill, getSkillVersionResource } from '@quill/db';
import { z } from 'zod';
import { SCRIPTS_NOTE, skillNotFound } from './load-skill.ts';
import { chargeSkillText } from './skill-budget.ts';
import { failure, ok, type ToolSpec } from './types.ts';

/**
 * read_skill_resource — L3 of a skill: one reference file (or `SKILL.md` itself) read from an
 * offset, so a long resource is read in pieces within the per-request skill budget.
 */
export const DEFAULT_RESOURCE_CHARS = 8_000;
const MAX_RESOURCE_CHARS = 20_000;

const ReadSkillResourceArgs = z.strictObject({
  name: z.string().trim().min(1).max(SKILL_NAME_MAX_LENGTH).regex(SKILL_NAME_PATTERN).describe('Skill name.'),
  path: z.string().trim().min(1).max(255).describe('A path from the skill’s resource list, or "SKILL.md".'),
  offset: z.number().int().min(0).optional().describe('Character offset to read from (default 0).'),
  max_chars: z.number().int().min(1).max(MAX_RESOURCE_CHARS).optional().describe('At most this many chars.'),
});

export const readSkillResourceTool: ToolSpec<typeof ReadSkillResourceArgs> = {
  name: 'read_skill_resource',
  description:
    'Read a resource of an enabled skill (or path="SKILL.md"), from offset; the result gives next_offset when more remains. Counts against the per-request skill budget.',
  parameters: ReadSkillResourceArgs,
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
    const content =
      args.path === 'SKILL.md'
        ? skill.content
        : await getSkillVersionResource(context.pool, {
            skillId: skill.id,
            version: skill.version,
            path: args.path,
          });
    if (content === null) {
      const paths = ['SKILL.md', ...skill.resources.map((resource) => resource.path)];
      return failure(
        'resource_not_found',
        `“${args.name}” has no resource “${args.path}”. Resources: ${paths.join(', ')}.`,
      );
    }
    const offset = Math.min(args.offset ?? 0, content.length);
    const window = content.slice(offset, offset + (args.max_chars ?? DEFAULT_RESOURCE_CHARS));
    const charged = await chargeSkillText(context, skill.name, args.path, window);
    if (!charged.ok) return failure(charged.errorType, charged.message);
    const end = offset + charged.text.length;
    return ok(`Read ${args.path} of “${skill.name}” (chars ${offset}–${end} of ${content.length}).`, {
      name: skill.name,
      path: args.path,
      offset,
      end,
      total_chars: content.length,
      content: charged.text,
      ...(end < content.length ? { next_offset: end } : {}),
      skill_budget: { used_tokens: charged.usedTokens, budget_tokens: charged.budget },
      note: SCRIPTS_NOTE,
    });
  },
};
