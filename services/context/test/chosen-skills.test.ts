import { MAX_SKILLS_PER_REQUEST } from '@quill/contracts';
import { getSkill, type Skill } from '@quill/db';
import { saveSkillPackage, setSkillEnabled } from '@quill/db/gateway';
import type { TestDatabase } from '@quill/db/testing';
import { createTestDatabase } from '@quill/db/testing';
import { estimateTextTokens } from '@quill/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chosenSkillBlocks, chosenSkillNames, skillsToRead } from '../src/chosen-skills.ts';
import { createUserIn } from './support.ts';

/** Skills the author picks with `/skill-name` (docs/agent-behaviour.md 「工具」, skills). */
const ENABLED = ['suspense-hooks', 'dialogue', 'pacing', 'world-rules'];

describe('chosenSkillNames', () => {
  it.each<[string, string[]]>([
    ['/suspense-hooks 写第一章', ['suspense-hooks']],
    ['写第一章 /dialogue /pacing', ['dialogue', 'pacing']],
    ['/dialogue 再 /dialogue 一次', ['dialogue']],
    ['/unknown-skill 写', []],
    // Only a mention after whitespace or at the start picks a skill: not paths or URLs.
    ['参考 notes/pacing 和 https://x.test/dialogue', []],
    ['/Dialogue', []],
  ])('%j → %j', (message, names) => {
    expect(chosenSkillNames(message, ENABLED)).toEqual(names);
  });
});

/** Reads the chosen skills as the compiler's loader does: enabled ones, up to the cap. */
async function readChosen(names: readonly string[]): Promise<Map<string, Skill>> {
  const read = await Promise.all(
    skillsToRead(names).map((name) => getSkill(database.pool, userId, name, { enabledOnly: true })),
  );
  return new Map(read.filter((skill) => skill !== null).map((skill) => [skill.name, skill]));
}

let database: TestDatabase;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  userId = await createUserIn(database);
  for (const name of ENABLED) {
    await saveSkillPackage(database.pool, userId, {
      name,
      description: `${name} 的方法`,
      content: `${name}：每章只用一个技巧。`,
      metadata: { name, description: `${name} 的方法` },
      resources: [],
    });
  }
});
afterAll(async () => {
  await database?.drop();
});

describe('chosenSkillBlocks', () => {
  it('loads at most three chosen skills and records the rest as excluded by the limit', async () => {
    expect(MAX_SKILLS_PER_REQUEST).toBe(3);
    const chosen = await chosenSkillBlocks({
      names: ENABLED,
      skills: await readChosen(ENABLED),
      budgetTokens: 16_000,
      count: estimateTextTokens,
    });
    expect(chosen.loaded.map((item) => item.title)).toEqual(ENABLED.slice(0, 3));
    expect(chosen.blocks).toHaveLength(3);
    expect(chosen.blocks[0]).toContain('### suspense-hooks [全文]');
    expect(chosen.excluded).toEqual([
      { source: 'chosen_skill', title: 'world-rules', reason: 'limit', detail: 'more than 3 skills chosen' },
    ]);
  });

  it('skips a disabled skill and truncates to the skill token budget', async () => {
    await setSkillEnabled(database.pool, userId, 'pacing', false);
    const chosen = await chosenSkillBlocks({
      names: ['pacing', 'dialogue'],
      skills: await readChosen(['pacing', 'dialogue']),
      budgetTokens: 16_000,
      count: estimateTextTokens,
    });
    expect(chosen.loaded.map((item) => item.title)).toEqual(['dialogue']);
    const starved = await chosenSkillBlocks({
      names: ['dialogue'],
      skills: await readChosen(['dialogue']),
      budgetTokens: 10,
      count: estimateTextTokens,
    });
    expect(starved.blocks).toEqual([]);
    expect(starved.excluded).toMatchObject([{ title: 'dialogue', reason: 'budget' }]);
    await setSkillEnabled(database.pool, userId, 'pacing', true);
  });
});
