/**
 * Review evidence from persisted facts (docs/agent-behaviour.md 「送审证据」), the pure part: word
 * counts of persisted bodies and the author's length requirement with its tolerance band. The
 * 「待审查内容」 excerpt is in review-content.ts.
 */

import { NUMERAL_PATTERN, parseChineseNumber } from '@quill/contracts';

/** CJK characters count one each; runs of Latin letters or digits count one word each. */
export function countWords(text: string): number {
  const cjk = text.match(/[\u3400-\u9fff\uf900-\ufaff]/g)?.length ?? 0;
  const words = text.match(/[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*/g)?.length ?? 0;
  return cjk + words;
}

export interface LengthRequirement {
  /** The author's own words for it. */
  phrase: string;
  kind: 'target' | 'range' | 'min' | 'max';
  /** The accepted band: inside it is not a defect. */
  min?: number;
  max?: number;
}

/** A single target number has ±15% tolerance; ranges and bounds are hard. */
export const TARGET_TOLERANCE = 0.15;

const NUMBER = `(${NUMERAL_PATTERN})\\s*(万)?`;

/** 3000 / 3千 / 三千五 / 1.5万 → a number (the one numeral parser); undefined when unreadable. */
export function parseAmount(value: string, tenThousands?: string): number | undefined {
  const amount = parseChineseNumber(`${value}${tenThousands ?? ''}`);
  return amount === null ? undefined : Math.round(amount);
}

const PATTERNS: Array<{ kind: LengthRequirement['kind']; pattern: RegExp }> = [
  {
    kind: 'range',
    pattern: new RegExp(`${NUMBER}\\s*(?:-|–|—|~|～|到|至)\\s*${NUMBER}\\s*(?:字|words?)`, 'i'),
  },
  {
    kind: 'min',
    pattern: new RegExp(
      `(?:不少于|至少|最少|不低于|起码|at least|no less than)\\s*${NUMBER}\\s*(?:个)?(?:字|words?)`,
      'i',
    ),
  },
  { kind: 'min', pattern: new RegExp(`${NUMBER}\\s*(?:字|words?)\\s*(?:以上|起|or more)`, 'i') },
  {
    kind: 'max',
    pattern: new RegExp(
      `(?:不超过|最多|至多|不多于|at most|no more than|under)\\s*${NUMBER}\\s*(?:个)?(?:字|words?)`,
      'i',
    ),
  },
  { kind: 'max', pattern: new RegExp(`${NUMBER}\\s*(?:字|words?)\\s*(?:以内|以下|之内|or less)`, 'i') },
  { kind: 'target', pattern: new RegExp(`${NUMBER}\\s*(?:个)?(?:字|words?)`, 'i') },
];

export function findLengthRequirement(message: string): LengthRequirement | undefined {
  for (const { kind, pattern } of PATTERNS) {
    const match = pattern.exec(message);
    if (!match) continue;
    const first = parseAmount(match[1]!, match[2]);
    if (first === undefined || first <= 0) continue;
    const phrase = match[0].trim();
    if (kind === 'range') {
      const second = parseAmount(match[3]!, match[4] ?? match[2]);
      if (second === undefined) continue;
      return { phrase, kind, min: Math.min(first, second), max: Math.max(first, second) };
    }
    if (kind === 'min') return { phrase, kind, min: first };
    if (kind === 'max') return { phrase, kind, max: first };
    return {
      phrase,
      kind,
      min: Math.round(first * (1 - TARGET_TOLERANCE)),
      max: Math.round(first * (1 + TARGET_TOLERANCE)),
    };
  }
  return undefined;
}

export function describeLengthRequirement(requirement: LengthRequirement | undefined): string {
  if (!requirement) return '作者没有提篇幅要求：不要以篇幅为由判定缺陷。';
  const said = `作者原话：「${requirement.phrase}」`;
  switch (requirement.kind) {
    case 'target':
      return `${said}；达标区间 ${requirement.min}–${requirement.max} 字（单个目标数 ±15%，区间内不算缺陷）。`;
    case 'range':
      return `${said}；达标区间 ${requirement.min}–${requirement.max} 字（作者给的范围是硬要求）。`;
    case 'min':
      return `${said}；至少 ${requirement.min} 字（下限是硬要求）。`;
    case 'max':
      return `${said}；最多 ${requirement.max} 字（上限是硬要求）。`;
  }
}
