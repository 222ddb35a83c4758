import { estimateTextTokens } from '@quill/llm';
import { describe, expect, it } from 'vitest';
import {
  allocate,
  type BudgetItem,
  DIRECTIVE_AND_TOOLS_RESERVE_TOKENS,
  historyAllowance,
  MIN_FRAGMENT_CHARS,
  truncateToTokens,
} from '../src/budget.ts';

const count = (text: string) => estimateTextTokens(text);
const chinese = (sentences: number) => '林晚推开旧书店的门，雨声忽然远了。'.repeat(sentences);

describe('truncateToTokens', () => {
  it('keeps a text that fits and cuts one that does not, within the limit, at a sentence end', () => {
    const text = chinese(200);
    expect(truncateToTokens(text, count(text), count)).toBe(text);
    const cut = truncateToTokens(text, 500, count);
    expect(count(cut)).toBeLessThanOrEqual(500);
    expect(count(cut)).toBeGreaterThan(400);
    expect(cut.endsWith('。')).toBe(true);
    expect(text.startsWith(cut)).toBe(true);
    expect(truncateToTokens(text, 0, count)).toBe('');
  });

  it('never splits a surrogate pair', () => {
    const text = '𠀀'.repeat(300);
    const cut = truncateToTokens(text, 100, count);
    expect(cut.length % 2).toBe(0);
    expect(count(cut)).toBeLessThanOrEqual(100);
  });
});

describe('allocate', () => {
  const item = (key: string, tier: BudgetItem['tier'], content: string): BudgetItem => ({
    key,
    tier,
    content,
    headerTokens: 20,
  });

  it('shows what fits whole, truncates the boundary item, and has no room after the budget', () => {
    const small = chinese(10);
    const big = chinese(400);
    const { allocations, used } = allocate(
      [item('a', 'critical', small), item('b', 'critical', big), item('c', 'constraint', small)],
      { budget: 2000, itemCap: 800 },
      count,
    );
    expect(allocations.map((allocation) => allocation.status)).toEqual(['full', 'truncated', 'dropped']);
    expect(used).toBeLessThanOrEqual(2000);
  });

  it('drops a non-critical remnant under 500 chars and under half its original, but never a critical one', () => {
    const long = chinese(120); // ~2000 chars
    const tight = { budget: 200, itemCap: 200 };
    const [constraint] = allocate([item('x', 'constraint', long)], tight, count).allocations;
    expect(constraint).toEqual({ key: 'x', status: 'dropped', detail: 'fragment' });
    const [critical] = allocate([item('x', 'critical', long)], tight, count).allocations;
    expect(critical?.status).toBe('truncated');
    // More than half of the original survives: kept even though under 500 chars.
    const medium = chinese(30); // ~510 chars
    const [kept] = allocate(
      [item('y', 'relevant', medium)],
      { budget: 400, itemCap: 400 },
      count,
    ).allocations;
    expect(kept?.status).toBe('truncated');
    if (kept?.status === 'truncated') {
      expect(kept.shown.length < MIN_FRAGMENT_CHARS && kept.shown.length * 2 >= medium.length).toBe(true);
    }
  });

  it('caps a non-critical item at its share so the next one still gets room', () => {
    const big = chinese(600);
    const { allocations } = allocate(
      [item('a', 'constraint', big), item('b', 'constraint', chinese(20))],
      { budget: 3000, itemCap: 1200 },
      count,
    );
    expect(allocations[0]?.status).toBe('truncated');
    if (allocations[0]?.status === 'truncated') expect(allocations[0].tokens).toBeLessThanOrEqual(1200);
    expect(allocations[1]?.status).toBe('full');
  });
});

describe('historyAllowance (the request ledger)', () => {
  it('gives history its budget while the ceiling allows, and only history shrinks near the ceiling', () => {
    expect(historyAllowance({ ceiling: 160_000, historyBudget: 32_000, fixedTokens: 50_000 })).toBe(32_000);
    expect(historyAllowance({ ceiling: 160_000, historyBudget: 32_000, fixedTokens: 140_000 })).toBe(
      160_000 - 140_000 - DIRECTIVE_AND_TOOLS_RESERVE_TOKENS,
    );
    expect(historyAllowance({ ceiling: 160_000, historyBudget: 32_000, fixedTokens: 170_000 })).toBe(0);
  });
});
