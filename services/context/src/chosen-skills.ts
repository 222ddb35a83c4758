import { MAX_SKILLS_PER_REQUEST, type TraceExcluded, type TraceLoaded } from '@quill/contracts';
import type { RunSkill } from '@quill/db';

/** What a chosen skill shows: the text of the version the run reads (docs/kernel.md). */
export type SkillText = Pick<RunSkill, 'name' | 'content' | 'resources'>;

import { type TokenCounter, truncateToTokens } from './budget.ts';

/**
 * Skills the author picked in this message (`/skill-name`), given to every role of the turn in
 * <turn_context> with their SKILL.md body (L2). They obey the same limits as load_skill: at most
 * three distinct skills and the per-request skill token budget.
 */
const SKILL_MENTION = /(?:^|\s)\/([a-z0-9]+(?:-[a-z0-9]+)*)/g;

export function chosenSkillNames(message: string, enabled: readonly string[]): string[] {
  const names: string[] = [];
  for (const match of message.matchAll(SKILL_MENTION)) {
    const name = match[1]!;
    if (enabled.includes(name) && !names.includes(name)) names.push(name);
  }
  return names;
}

/** The chosen skills the loader reads: past the per-request cap they are only traced. */
export function skillsToRead(names: readonly string[]): string[] {
  return names.slice(0, MAX_SKILLS_PER_REQUEST);
}

/** Pure: `skills` holds the enabled skills read for `names` (a name missing from it is skipped). */
export function chosenSkillBlocks(input: {
  names: readonly string[];
  skills: ReadonlyMap<string, SkillText>;
  budgetTokens: number;
  count: TokenCounter;
}): { blocks: string[]; loaded: TraceLoaded[]; excluded: TraceExcluded[] } {
  const blocks: string[] = [];
  const loaded: TraceLoaded[] = [];
  const excluded: TraceExcluded[] = [];
  let remaining = input.budgetTokens;
  for (const [index, name] of input.names.entries()) {
    if (index >= MAX_SKILLS_PER_REQUEST) {
      excluded.push({
        source: 'chosen_skill',
        title: name,
        reason: 'limit',
        detail: 'more than 3 skills chosen',
      });
      continue;
    }
    const skill = input.skills.get(name);
    if (!skill) continue;
    const resources = skill.resources
      .map((resource) => `- ${resource.path}（${resource.bytes} 字节）`)
      .join('\n');
    const shown = truncateToTokens(skill.content, remaining - 60, input.count);
    if (!shown && skill.content) {
      excluded.push({
        source: 'chosen_skill',
        title: name,
        reason: 'budget',
        total_chars: skill.content.length,
      });
      continue;
    }
    const full = shown.length === skill.content.length;
    const marker = full
      ? '[全文]'
      : `[已截断：显示 ${shown.length}/${skill.content.length} 字；全文用 read_skill_resource(name="${name}", path="SKILL.md")]`;
    const heading = `### ${name} ${marker}`;
    const resourceList = resources ? `资源文件（用 read_skill_resource 读取）：\n${resources}` : '';
    const block = [heading, shown, resourceList].filter(Boolean).join('\n');
    const tokens = input.count(heading) + input.count(shown) + input.count(resourceList) + 2;
    remaining -= tokens;
    blocks.push(block);
    loaded.push({
      source: 'chosen_skill',
      title: name,
      shown_chars: shown.length,
      total_chars: skill.content.length,
      tokens,
      full,
      permission: 'owner',
    });
  }
  return { blocks, loaded, excluded };
}
